package bolt

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"time"

	"go.etcd.io/bbolt"
	"golang.org/x/crypto/bcrypt"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/validate"
)

var _ data.AuthService = (*DB)(nil)

// Token kinds: API keys are listed and managed; login tokens come from /auth/login.
const (
	kindAPIKey = "api_key"
	kindLogin  = "login"
)

// apiKeyRow is a token as stored: only the SHA-256 of its secret.
type apiKeyRow struct {
	data.APIKey
	UserID      string `json:"user_id"`
	WorkspaceID string `json:"workspace_id"`
	Kind        string `json:"kind"`
	SecretHash  []byte `json:"secret_hash"`
}

func apiKeyKey(id int64) []byte { return []byte(fmt.Sprintf("%016x", id)) }

// keyScope is the api_keys_by_user scope: API keys under the user id, login tokens apart,
// so that the list of keys pages only over keys.
func keyScope(userID, kind string) string {
	if kind == kindLogin {
		return userID + "\x01login"
	}
	return userID
}

const secretLen = 48 // base62 characters: ~285 bits

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

func newSecret() (string, error) {
	var sb strings.Builder
	max := big.NewInt(int64(len(base62)))
	for i := 0; i < secretLen; i++ {
		n, err := rand.Int(rand.Reader, max)
		if err != nil {
			return "", err
		}
		sb.WriteByte(base62[n.Int64()])
	}
	return sb.String(), nil
}

// issueToken stores a new token row in tx and returns the token string.
func (db *DB) issueToken(tx *bbolt.Tx, userID, workspaceID, name, kind string, expires *time.Time) (*data.APIKey, string, error) {
	secret, err := newSecret()
	if err != nil {
		return nil, "", err
	}
	b := tx.Bucket(bucketAPIKeys)
	seq, err := b.NextSequence()
	if err != nil {
		return nil, "", err
	}
	sum := sha256.Sum256([]byte(secret))
	row := apiKeyRow{
		APIKey:      data.APIKey{ID: int64(seq), Name: name, CreatedAt: db.timeNow()},
		UserID:      userID,
		WorkspaceID: workspaceID,
		Kind:        kind,
		SecretHash:  sum[:],
	}
	if expires != nil {
		t := data.NewTime(*expires)
		row.ExpiresAt = &t
	}
	key := apiKeyKey(row.ID)
	if err := putJSON(b, key, row); err != nil {
		return nil, "", err
	}
	if err := indexPut(tx.Bucket(bucketAPIKeysByUser), keyScope(userID, kind), string(key)); err != nil {
		return nil, "", err
	}
	if err := indexPut(tx.Bucket(bucketAPIKeysByWS), workspaceID, string(key)); err != nil {
		return nil, "", err
	}
	out := row.APIKey
	return &out, strconv.FormatInt(row.ID, 10) + "|" + secret, nil
}

// deleteToken removes a token row and its index entries.
func deleteToken(tx *bbolt.Tx, row *apiKeyRow) error {
	key := apiKeyKey(row.ID)
	if err := tx.Bucket(bucketAPIKeys).Delete(key); err != nil {
		return err
	}
	if err := indexDelete(tx.Bucket(bucketAPIKeysByUser), keyScope(row.UserID, row.Kind), string(key)); err != nil {
		return err
	}
	return indexDelete(tx.Bucket(bucketAPIKeysByWS), row.WorkspaceID, string(key))
}

// deleteTokensWhere removes the tokens of a scope of api_keys_by_ws that match keep==false.
func deleteWorkspaceTokens(tx *bbolt.Tx, workspaceID string, match func(*apiKeyRow) bool) error {
	for _, key := range scopeIDs(tx.Bucket(bucketAPIKeysByWS), workspaceID) {
		var row apiKeyRow
		found, err := getJSON(tx.Bucket(bucketAPIKeys), []byte(key), &row)
		if err != nil {
			return err
		}
		if found && match(&row) {
			if err := deleteToken(tx, &row); err != nil {
				return err
			}
		}
	}
	return nil
}

// dummyHash keeps the time of a login with an unknown email close to a wrong password's.
var dummyHash, _ = bcrypt.GenerateFromPassword([]byte("voiceapi-dummy-password"), bcrypt.MinCost)

// Login implements data.AuthService.
func (db *DB) Login(ctx context.Context, email, password, workspaceID string) (*data.APIKey, string, error) {
	if err := validate.Login(email, password); err != nil {
		return nil, "", err
	}
	refused := data.FieldError("email", "These credentials do not match our records.")
	var row userRow
	var found bool
	err := db.view(func(tx *bbolt.Tx) error {
		var err error
		found, err = userByEmail(tx, validate.NormalizeEmail(email), &row)
		return err
	})
	if err != nil {
		return nil, "", err
	}
	if !found {
		bcrypt.CompareHashAndPassword(dummyHash, []byte(password))
		return nil, "", refused
	}
	if bcrypt.CompareHashAndPassword(row.PasswordHash, []byte(password)) != nil {
		return nil, "", refused
	}
	if workspaceID == "" {
		workspaceID = row.PersonalWorkspaceID
	}
	var key *data.APIKey
	var token string
	err = db.update(func(tx *bbolt.Tx) error {
		if tx.Bucket(bucketMembers).Get(memberKey(workspaceID, row.ID)) == nil {
			return refused
		}
		expires := db.now().Add(db.opts.LoginTTL)
		var err error
		key, token, err = db.issueToken(tx, row.ID, workspaceID, "login", kindLogin, &expires)
		return err
	})
	if err != nil {
		return nil, "", err
	}
	return key, token, nil
}

// Authenticate implements data.AuthService.
func (db *DB) Authenticate(ctx context.Context, token string) (*data.Principal, error) {
	refused := data.Errorf(data.EUNAUTHORIZED, "The bearer token is missing, malformed, unknown, revoked or expired.")
	idPart, secret, ok := strings.Cut(token, "|")
	if !ok || secret == "" || len(secret) > 256 {
		return nil, refused
	}
	// ParseInt also reads "+1" and "01": only the canonical id, as issued, may pass, so
	// that exactly one string authenticates for each token (found by FuzzAuthenticate).
	id, err := strconv.ParseInt(idPart, 10, 64)
	if err != nil || id <= 0 || strconv.FormatInt(id, 10) != idPart {
		return nil, refused
	}
	var p *data.Principal
	sum := sha256.Sum256([]byte(secret))
	err = db.view(func(tx *bbolt.Tx) error {
		rawKey := tx.Bucket(bucketAPIKeys).Get(apiKeyKey(id))
		if rawKey == nil {
			return nil
		}
		if e, ok := db.tokens.get(id, rawKey); ok {
			if subtle.ConstantTimeCompare(sum[:], e.hash) != 1 {
				return nil
			}
			if e.expires != nil && !db.now().Before(*e.expires) {
				return nil
			}
			ws, user := e.principal.WorkspaceID, e.principal.UserID
			if bytes.Equal(tx.Bucket(bucketUsers).Get([]byte(user)), e.user) &&
				bytes.Equal(tx.Bucket(bucketMembers).Get(memberKey(ws, user)), e.member) {
				c := e.principal // a copy: authorize adjusts it per request
				p = &c
				return nil
			}
		}
		var row apiKeyRow
		if err := jsonUnmarshal(rawKey, &row); err != nil {
			return fmt.Errorf("decoding api key %d: %w", id, err)
		}
		if subtle.ConstantTimeCompare(sum[:], row.SecretHash) != 1 {
			return nil
		}
		if row.ExpiresAt != nil && !db.now().Before(row.ExpiresAt.Time) {
			return nil
		}
		var user userRow
		if found, err := getJSON(tx.Bucket(bucketUsers), []byte(row.UserID), &user); err != nil || !found {
			return err
		}
		p = &data.Principal{
			UserID:             user.ID,
			IsAdmin:            user.IsAdmin,
			TokenID:            row.ID,
			WorkspaceID:        row.WorkspaceID,
			CurrentWorkspaceID: row.WorkspaceID,
		}
		if err := fillMembership(tx, p, row.WorkspaceID); err != nil {
			return err
		}
		e := tokenCacheEntry{
			key:       bytes.Clone(rawKey),
			user:      bytes.Clone(tx.Bucket(bucketUsers).Get([]byte(row.UserID))),
			member:    bytes.Clone(tx.Bucket(bucketMembers).Get(memberKey(row.WorkspaceID, user.ID))),
			hash:      row.SecretHash,
			principal: *p,
		}
		if row.ExpiresAt != nil {
			t := row.ExpiresAt.Time
			e.expires = &t
		}
		db.tokens.put(id, e)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if p == nil {
		return nil, refused
	}
	db.touch.mark(id, db.now())
	return p, nil
}

// fillMembership sets p's role, modules and agent_ids in workspaceID ("" role when the
// user is not a member there).
func fillMembership(tx *bbolt.Tx, p *data.Principal, workspaceID string) error {
	p.WorkspaceID = workspaceID
	p.Role, p.Modules, p.AgentIDs = "", nil, nil
	var m memberRow
	found, err := getJSON(tx.Bucket(bucketMembers), memberKey(workspaceID, p.UserID), &m)
	if err != nil || !found {
		return err
	}
	p.Role = m.Role
	p.Modules = data.EffectiveModules(m.Role, m.Modules)
	p.AgentIDs = m.AgentIDs
	return nil
}

// Logout implements data.AuthService.
func (db *DB) Logout(ctx context.Context) error {
	p := data.PrincipalFrom(ctx)
	if p == nil {
		return data.Errorf(data.EUNAUTHORIZED, "Not authenticated.")
	}
	return db.update(func(tx *bbolt.Tx) error {
		var row apiKeyRow
		found, err := getJSON(tx.Bucket(bucketAPIKeys), apiKeyKey(p.TokenID), &row)
		if err != nil || !found {
			return err
		}
		return deleteToken(tx, &row)
	})
}

// CreateAPIKey implements data.AuthService.
func (db *DB) CreateAPIKey(ctx context.Context, in data.APIKeyCreate) (*data.APIKey, string, error) {
	p := data.PrincipalFrom(ctx)
	expires, err := validate.APIKeyCreate(in, db.now())
	if err != nil {
		return nil, "", err
	}
	var key *data.APIKey
	var token string
	err = db.update(func(tx *bbolt.Tx) error {
		var err error
		key, token, err = db.issueToken(tx, p.UserID, p.CurrentWorkspaceID, in.Name, kindAPIKey, expires)
		return err
	})
	return key, token, err
}

// CreateAPIKeyFor makes an API key for a user in a workspace it belongs to (the CLI).
func (db *DB) CreateAPIKeyFor(ctx context.Context, userID, workspaceID string, in data.APIKeyCreate) (*data.APIKey, string, error) {
	expires, err := validate.APIKeyCreate(in, db.now())
	if err != nil {
		return nil, "", err
	}
	var key *data.APIKey
	var token string
	err = db.update(func(tx *bbolt.Tx) error {
		if tx.Bucket(bucketMembers).Get(memberKey(workspaceID, userID)) == nil {
			return data.FieldError("workspace", "The user is not a member of that workspace.")
		}
		var err error
		key, token, err = db.issueToken(tx, userID, workspaceID, in.Name, kindAPIKey, expires)
		return err
	})
	return key, token, err
}

// ListAPIKeys implements data.AuthService.
func (db *DB) ListAPIKeys(ctx context.Context, req data.PageRequest) ([]*data.APIKey, data.Page, error) {
	p := data.PrincipalFrom(ctx)
	var keys []*data.APIKey
	var page data.Page
	err := db.view(func(tx *bbolt.Tx) error {
		ids, pg, err := db.page(tx, bucketAPIKeysByUser, keyScope(p.UserID, kindAPIKey), req)
		if err != nil {
			return err
		}
		page = pg
		keys = make([]*data.APIKey, 0, len(ids))
		for _, id := range ids {
			var row apiKeyRow
			if found, err := getJSON(tx.Bucket(bucketAPIKeys), []byte(id), &row); err != nil {
				return err
			} else if found {
				k := row.APIKey
				keys = append(keys, &k)
			}
		}
		return nil
	})
	return keys, page, err
}

// DeleteAPIKey implements data.AuthService.
func (db *DB) DeleteAPIKey(ctx context.Context, id int64) error {
	p := data.PrincipalFrom(ctx)
	return db.update(func(tx *bbolt.Tx) error {
		var row apiKeyRow
		found, err := getJSON(tx.Bucket(bucketAPIKeys), apiKeyKey(id), &row)
		if err != nil {
			return err
		}
		if !found || row.UserID != p.UserID {
			return data.NotFound("API key")
		}
		if err := data.CheckIfMatch(data.IfMatch(ctx), row.APIKey); err != nil {
			return err
		}
		return deleteToken(tx, &row)
	})
}

// touchAPIKey sets last_used_at; a key revoked meanwhile is skipped.
func touchAPIKey(tx *bbolt.Tx, id int64, at time.Time) error {
	b := tx.Bucket(bucketAPIKeys)
	var row apiKeyRow
	found, err := getJSON(b, apiKeyKey(id), &row)
	if err != nil || !found {
		return err
	}
	t := data.NewTime(at)
	row.LastUsedAt = &t
	return putJSON(b, apiKeyKey(id), row)
}
