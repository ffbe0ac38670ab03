package service

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/validate"
)

// AuthService issues, checks and revokes tokens.
type AuthService struct {
	*base
	cache *tokenCache
}

var _ data.AuthService = (*AuthService)(nil)

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

// issueToken stores a new token and returns its record and the token string
// "<id>|<secret>", which is shown once: only the secret's SHA-256 is stored.
func (b *base) issueToken(tx Tx, userID, workspaceID, kind string, in data.APIKeyCreate, expires *time.Time) (*data.APIKey, string, error) {
	secret, err := newSecret()
	if err != nil {
		return nil, "", err
	}
	sum := sha256.Sum256([]byte(secret))
	k := &data.APIKeyRecord{
		APIKey: data.APIKey{Name: in.Name, CreatedAt: b.timeNow(), Scopes: in.Scopes, AgentIDs: in.AgentIDs},
		UserID: userID, WorkspaceID: workspaceID, Kind: kind, SecretHash: sum[:],
	}
	if expires != nil {
		t := data.NewTime(*expires)
		k.ExpiresAt = &t
	}
	if err := tx.InsertAPIKey(k); err != nil {
		return nil, "", err
	}
	return k.Public(), strconv.FormatInt(k.ID, 10) + "|" + secret, nil
}

// Login implements data.AuthService.
func (s *AuthService) Login(ctx context.Context, email, password string, workspace *string) (*data.APIKey, string, error) {
	if err := checkInput(ctx, validate.Login(email, password, workspace)); err != nil {
		return nil, "", err
	}
	refused := data.CredentialsRefused(data.FieldError("email", "These credentials do not match our records."))
	var u *data.UserRecord
	if err := s.store.View(ctx, func(tx Tx) error {
		var err error
		u, err = tx.UserByEmail(validate.NormalizeEmail(email))
		return err
	}); err != nil {
		return nil, "", err
	}
	if u == nil {
		s.passwords.matches(nil, password)
		return nil, "", refused // no account: no workspace to tell
	}
	workspaceID := u.PersonalWorkspaceID
	if workspace != nil {
		workspaceID = *workspace
	}
	if !s.passwords.matches(u.PasswordHash, password) {
		return nil, "", s.loginFailed(ctx, u, workspaceID, refused)
	}
	var key *data.APIKey
	var token string
	err := s.store.Update(ctx, func(tx Tx) error {
		// The password was checked against the account as read before the slow hash: a
		// change or reset since ended every login session, and one issued now for the
		// password it replaced would outlive it.
		cur, err := tx.User(u.ID)
		if err != nil {
			return err
		}
		if cur == nil || !bytes.Equal(cur.PasswordHash, u.PasswordHash) {
			return refused
		}
		m, err := tx.Member(workspaceID, u.ID)
		if err != nil {
			return err
		}
		if m == nil {
			return refused
		}
		if err := s.trimLoginTokens(tx, u.ID); err != nil {
			return err
		}
		expires := s.now().Add(s.opts.LoginTTL)
		key, token, err = s.issueToken(tx, u.ID, workspaceID, data.TokenLogin, data.APIKeyCreate{Name: "login"}, &expires)
		if err != nil {
			return err
		}
		actor := data.Actor{Type: "user", UserID: u.ID, TokenID: key.ID, Address: data.ClientAddress(ctx)}
		_, err = s.recordAs(tx, actor, data.EventUserLogin, workspaceID, loginEvent{UserID: u.ID, Email: u.Email, WorkspaceID: workspaceID})
		return err
	})
	if data.ErrorCode(err) == data.EINVALID {
		return nil, "", s.loginFailed(ctx, u, workspaceID, err)
	}
	if err != nil {
		return nil, "", err
	}
	return key, token, nil
}

// trimLoginTokens deletes the user's oldest login tokens past validate.MaxLoginTokens
// less the one a login is about to issue (GitHub does so with OAuth tokens), so a login
// never fails for the bound, in the login's write transaction, so that racing logins keep
// no more than it. At most TokenPruneBatch go a login: a user far past the bound (before
// it existed) comes down by that many a login, and by expiry. A deleted token is 401 at
// once on every replica: its revision is gone (tokenEntry, cachedToken). Nothing is
// recorded, as for the token pass: the log holds each login.
func (b *base) trimLoginTokens(tx Tx, userID string) error {
	ids, err := tx.OldestTokens(userID, data.TokenLogin, validate.MaxLoginTokens-1, TokenPruneBatch)
	if err != nil {
		return err
	}
	tokens := make([]*data.APIKeyRecord, 0, len(ids))
	for _, id := range ids {
		k, err := tx.APIKey(id)
		if err != nil {
			return err
		}
		if k != nil {
			tokens = append(tokens, k)
		}
	}
	return b.deleteTokens(tx, tokens)
}

// loginEvent is the data of user.login and user.login_failed: never the password.
type loginEvent struct {
	UserID      string `json:"user_id"`
	Email       string `json:"email"`
	WorkspaceID string `json:"workspace_id"`
}

// loginFailed records a refused login of an existing account in its personal workspace
// (the one workspace sure to be the user's) and returns refused.
func (s *AuthService) loginFailed(ctx context.Context, u *data.UserRecord, workspaceID string, refused error) error {
	err := s.store.Update(ctx, func(tx Tx) error {
		actor := data.Actor{Type: "client", Address: data.ClientAddress(ctx)}
		_, err := s.recordAs(tx, actor, data.EventUserLoginFailed, u.PersonalWorkspaceID, loginEvent{UserID: u.ID, Email: u.Email, WorkspaceID: workspaceID})
		return err
	})
	if err != nil && !data.LoggedByStorage(err) {
		s.log.Error("recording a failed login", "error", err)
	}
	return refused
}

// Authenticate implements data.AuthService.
func (s *AuthService) Authenticate(ctx context.Context, token string) (*data.Principal, error) {
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
	sum := sha256.Sum256([]byte(secret))
	// A cached token confirmed in one statement (RevisionReader); else a transaction.
	e, err := s.cachedToken(ctx, id)
	if err != nil {
		return nil, err
	}
	if e == nil {
		if err := s.store.View(ctx, func(tx Tx) error {
			var err error
			e, err = s.tokenEntry(tx, id)
			return err
		}); err != nil {
			return nil, err
		}
	}
	if e == nil || subtle.ConstantTimeCompare(sum[:], e.hash) != 1 {
		return nil, refused
	}
	if e.expires != nil && !s.now().Before(*e.expires) {
		return nil, refused
	}
	p := e.principal // a copy: authorization adjusts it per request
	s.store.MarkAPIKeyUsed(id, s.now())
	return &p, nil
}

// tokenEntry returns what authenticating token id needs, from the cache while the
// token, its user and its membership are unchanged; nil when the token or its user is
// gone.
func (s *AuthService) tokenEntry(tx Tx, id int64) (*tokenEntry, error) {
	keyRev, err := tx.APIKeyRevision(id)
	if err != nil || keyRev == 0 {
		return nil, err
	}
	if e, ok := s.cache.get(id); ok && e.keyRev == keyRev {
		userRev, err := tx.UserRevision(e.principal.UserID)
		if err != nil {
			return nil, err
		}
		memberRev, err := tx.MemberRevision(e.principal.WorkspaceID, e.principal.UserID)
		if err != nil {
			return nil, err
		}
		if userRev == e.userRev && memberRev == e.memberRev {
			return e, nil
		}
	}
	k, err := tx.APIKey(id)
	if err != nil || k == nil {
		return nil, err
	}
	u, err := tx.User(k.UserID)
	if err != nil || u == nil {
		return nil, err
	}
	e := &tokenEntry{
		hash: k.SecretHash,
		principal: data.Principal{
			UserID: u.ID, IsAdmin: u.IsAdmin, TokenID: k.ID,
			WorkspaceID: k.WorkspaceID, CurrentWorkspaceID: k.WorkspaceID,
		},
	}
	if k.ExpiresAt != nil {
		t := k.ExpiresAt.Time
		e.expires = &t
		e.principal.ExpiresAt = &t
	}
	if err := fillMembership(tx, &e.principal, k.WorkspaceID); err != nil {
		return nil, err
	}
	// A key's scopes and agent_ids narrow its user's rights as they are now.
	e.principal.Scopes = k.Scopes
	if len(k.AgentIDs) > 0 {
		e.principal.KeyAgentIDs = k.AgentIDs
	}
	if e.principal.Role != "" {
		e.principal.AgentIDs = data.IntersectAgentIDs(e.principal.AgentIDs, k.AgentIDs)
	}
	// The revisions are read in this transaction, so they are those of the rows above.
	if e.keyRev, err = tx.APIKeyRevision(id); err != nil {
		return nil, err
	}
	if e.userRev, err = tx.UserRevision(u.ID); err != nil {
		return nil, err
	}
	if e.memberRev, err = tx.MemberRevision(k.WorkspaceID, u.ID); err != nil {
		return nil, err
	}
	e.principal.Access = data.AccessRevisions{Key: e.keyRev, User: e.userRev, Member: e.memberRev}
	s.cache.put(id, e)
	return e, nil
}

// fillMembership sets p's role, modules and agent_ids in workspaceID ("" role when the
// user is not a member there).
func fillMembership(tx Tx, p *data.Principal, workspaceID string) error {
	p.WorkspaceID = workspaceID
	p.Role, p.Modules, p.AgentIDs = "", nil, nil
	m, err := tx.Member(workspaceID, p.UserID)
	if err != nil || m == nil {
		return err
	}
	p.Role = m.Role
	p.Modules = data.EffectiveModules(m.Role, m.Modules)
	p.AgentIDs = m.AgentIDs
	return nil
}

// Logout implements data.AuthService.
func (s *AuthService) Logout(ctx context.Context) error {
	p := data.PrincipalFrom(ctx)
	if p == nil {
		return data.Errorf(data.EUNAUTHORIZED, "Not authenticated.")
	}
	return s.store.Update(ctx, func(tx Tx) error {
		k, err := tx.APIKey(p.TokenID)
		if err != nil || k == nil {
			return err
		}
		return s.deleteTokens(tx, []*data.APIKeyRecord{k})
	})
}

// CreateAPIKey implements data.AuthService.
func (s *AuthService) CreateAPIKey(ctx context.Context, in data.APIKeyCreate) (*data.APIKey, string, error) {
	p := data.PrincipalFrom(ctx)
	return s.CreateAPIKeyFor(ctx, p.UserID, p.CurrentWorkspaceID, in)
}

// withinCaller holds a new key to the token that makes it (conventions §20): no token
// grants more than it holds. Scopes or agent_ids left out are the calling token's own
// (never "all"); asking for a scope the token lacks, or for agents beyond those it sees
// (an explicit [] from a key limited to some agents asks for every agent), is forbidden,
// and so is a scope none of whose operations the user's role, modules and agents allow.
// The agents are compared as lists, before any lookup, so the answer says nothing of
// which agents exist. The CLI (no caller) is bounded by the membership alone.
func withinCaller(p *data.Principal, member *data.MemberRecord, in *data.APIKeyCreate) error {
	limit := member.AgentIDs
	if p != nil && p.CurrentWorkspaceID == member.WorkspaceID && p.WorkspaceID == member.WorkspaceID {
		limit = p.AgentIDs // the caller's own key may be narrower than its membership
	}
	// The scopes are weighed against the membership as stored now, narrowed by the
	// calling token: a scope it does not hold, or that its role, modules and agents let
	// it use nothing of, would give the key nothing the user holds (data.GivesScope).
	giver := &data.Principal{WorkspaceID: member.WorkspaceID, Role: member.Role,
		Modules: data.EffectiveModules(member.Role, member.Modules), AgentIDs: limit}
	if p != nil && p.Scopes != nil {
		giver.Scopes = p.Scopes
		if in.Scopes == nil {
			in.Scopes = slices.Clone(p.Scopes)
		}
	}
	for _, sc := range in.Scopes {
		if err := giver.GivesScope(sc); err != nil {
			return err
		}
	}
	if p != nil && len(p.KeyAgentIDs) > 0 {
		// A membership's limit narrows every key of the member anyway; a key's own
		// narrowing holds only if the new key carries it too.
		if in.AgentIDs == nil {
			in.AgentIDs = slices.Clone(limit)
		} else if len(in.AgentIDs) == 0 {
			return data.Errorf(data.EFORBIDDEN, "This API key is limited to some agents; a key for every agent (agent_ids []) would hold more.")
		}
	}
	for _, id := range in.AgentIDs {
		if len(limit) > 0 && !slices.Contains(limit, id) {
			return data.Errorf(data.EFORBIDDEN, "This token is limited to some agents; agent_ids may name only those (%s is not one of them).", id)
		}
	}
	return nil
}

// CreateAPIKeyFor makes an API key for a user in a workspace it belongs to (the CLI, and
// CreateAPIKey for the caller). Errors: validation_failed, forbidden (more than the
// calling token holds).
func (s *AuthService) CreateAPIKeyFor(ctx context.Context, userID, workspaceID string, in data.APIKeyCreate) (*data.APIKey, string, error) {
	expires, err := validate.APIKeyCreate(in, s.now())
	refs := func(tx Tx) error {
		m, err := tx.Member(workspaceID, userID)
		if err != nil || m == nil {
			return err // the write's answer, as the write gives it
		}
		in := in // withinCaller fills what the key inherits
		if err := withinCaller(data.PrincipalFrom(ctx), m, &in); err != nil {
			return err // agents beyond the caller's are not looked up
		}
		return checkAgentIDs(tx, workspaceID, in.AgentIDs)
	}
	if err := s.checkInputAndRefs(ctx, err, refs); err != nil {
		return nil, "", err
	}
	var key *data.APIKey
	var token string
	err = s.store.Update(ctx, func(tx Tx) error {
		m, err := tx.Member(workspaceID, userID)
		if err != nil {
			return err
		}
		if m == nil {
			return data.FieldError("workspace", "The user is not a member of that workspace.")
		}
		if err := withinCaller(data.PrincipalFrom(ctx), m, &in); err != nil {
			return err
		}
		if err := checkAgentIDs(tx, workspaceID, in.AgentIDs); err != nil {
			return err
		}
		if err := s.checkLiveAPIKeys(tx, userID, workspaceID); err != nil {
			return err
		}
		if in.AgentIDs == nil {
			in.AgentIDs = []string{}
		}
		if key, token, err = s.issueToken(tx, userID, workspaceID, data.TokenAPIKey, in, expires); err != nil {
			return err
		}
		answerClaim(ctx, key, map[string]any{"token": token})
		_, err = s.record(ctx, tx, data.EventAPIKeyCreated, workspaceID, &data.WorkspaceAPIKey{APIKey: *key, UserID: userID})
		return err
	})
	return key, token, err
}

// checkLiveAPIKeys refuses a key past validate.MaxLiveAPIKeys live keys of the user in
// the workspace (expired keys and login tokens do not count), in the create's write
// transaction, so that racing creates store no more than the bound.
func (s *AuthService) checkLiveAPIKeys(tx Tx, userID, workspaceID string) error {
	n, err := tx.LiveAPIKeys(userID, workspaceID, s.now(), validate.MaxLiveAPIKeys)
	if err != nil {
		return err
	}
	if n >= validate.MaxLiveAPIKeys {
		return data.Errorf(data.ECONFLICT, "The user already holds %d API keys in this workspace that have not expired, the most allowed: delete one (DELETE /api/v1/api-keys/{id}) first.", validate.MaxLiveAPIKeys)
	}
	return nil
}

// ListAPIKeys implements data.AuthService.
func (s *AuthService) ListAPIKeys(ctx context.Context, req data.PageRequest) ([]*data.APIKey, data.Page, error) {
	p := data.PrincipalFrom(ctx)
	var keys []*data.APIKey
	var page data.Page
	err := s.store.View(ctx, func(tx Tx) error {
		list, pg, err := tx.APIKeyPage(p.UserID, req)
		page = pg
		keys = make([]*data.APIKey, 0, len(list))
		for _, k := range list {
			pub := k.Public()
			if k.WorkspaceID == p.WorkspaceID { // another workspace's agents are not this token's to judge
				pub.AgentIDs = visibilityOf(p).memberAgents(pub.AgentIDs)
			}
			keys = append(keys, pub)
		}
		return err
	})
	return keys, page, err
}

// DeleteAPIKey implements data.AuthService.
func (s *AuthService) DeleteAPIKey(ctx context.Context, id int64) error {
	p := data.PrincipalFrom(ctx)
	return s.store.Update(ctx, func(tx Tx) error {
		k, err := tx.APIKey(id)
		if err != nil {
			return err
		}
		if k == nil || k.UserID != p.UserID {
			return data.NotFound("API key")
		}
		if err := data.CheckIfMatch(data.IfMatch(ctx), k.Public()); err != nil {
			return err
		}
		return s.revoke(ctx, tx, k)
	})
}

// ListWorkspaceAPIKeys implements data.AuthService.
func (s *AuthService) ListWorkspaceAPIKeys(ctx context.Context, workspaceID string, req data.PageRequest) ([]*data.WorkspaceAPIKey, data.Page, error) {
	var keys []*data.WorkspaceAPIKey
	var page data.Page
	err := s.store.View(ctx, func(tx Tx) error {
		if _, err := memberWorkspace(ctx, tx, workspaceID); err != nil {
			return err
		}
		list, pg, err := tx.WorkspaceAPIKeyPage(workspaceID, req)
		page = pg
		keys = make([]*data.WorkspaceAPIKey, 0, len(list))
		for _, k := range list {
			keys = append(keys, &data.WorkspaceAPIKey{APIKey: *k.Public(), UserID: k.UserID})
		}
		return err
	})
	return keys, page, err
}

// RevokeWorkspaceAPIKey implements data.AuthService. Admins may not revoke an owner's
// keys, as they may not change owners.
func (s *AuthService) RevokeWorkspaceAPIKey(ctx context.Context, workspaceID string, id int64) error {
	p := data.PrincipalFrom(ctx)
	return s.store.Update(ctx, func(tx Tx) error {
		if _, err := memberWorkspace(ctx, tx, workspaceID); err != nil {
			return err
		}
		k, err := tx.APIKey(id)
		if err != nil {
			return err
		}
		if k == nil || k.Kind != data.TokenAPIKey || k.WorkspaceID != workspaceID {
			return data.NotFound("API key")
		}
		if err := data.CheckIfMatch(data.IfMatch(ctx), &data.WorkspaceAPIKey{APIKey: *k.Public(), UserID: k.UserID}); err != nil {
			return err
		}
		if p != nil && p.Role != data.RoleOwner && k.UserID != p.UserID {
			owner, err := tx.Member(workspaceID, k.UserID)
			if err != nil {
				return err
			}
			if owner != nil && owner.Role == data.RoleOwner {
				return data.Errorf(data.EFORBIDDEN, "Only an owner can revoke an owner's API keys.")
			}
		}
		return s.revoke(ctx, tx, k)
	})
}

// revoke deletes an API key and records api_key.revoked in its workspace.
func (s *AuthService) revoke(ctx context.Context, tx Tx, k *data.APIKeyRecord) error {
	if err := s.deleteTokens(tx, []*data.APIKeyRecord{k}); err != nil {
		return err
	}
	_, err := s.record(ctx, tx, data.EventAPIKeyRevoked, k.WorkspaceID, &data.WorkspaceAPIKey{APIKey: *k.Public(), UserID: k.UserID})
	return err
}
