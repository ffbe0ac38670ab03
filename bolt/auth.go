package bolt

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"time"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
)

func apiKeyKey(id int64) []byte { return []byte(fmt.Sprintf("%016x", id)) }

// keyScope is the api_keys_by_user scope: API keys under the user id, login tokens apart,
// so that the list of keys pages only over keys.
func keyScope(userID, kind string) string {
	if kind == data.TokenLogin {
		return userID + "\x01login"
	}
	return userID
}

func getAPIKey(b *bbolt.Tx, key []byte) (*data.APIKeyRecord, error) {
	var k data.APIKeyRecord
	found, err := getJSON(b.Bucket(bucketAPIKeys), key, &k)
	if err != nil || !found {
		return nil, err
	}
	return &k, nil
}

// APIKey implements service.AccountTx.
func (t tx) APIKey(id int64) (*data.APIKeyRecord, error) { return getAPIKey(t.b, apiKeyKey(id)) }

// InsertAPIKey implements service.AccountTx.
func (t tx) InsertAPIKey(k *data.APIKeyRecord) error {
	seq, err := t.b.Bucket(bucketAPIKeys).NextSequence()
	if err != nil {
		return err
	}
	k.ID = int64(seq)
	key := apiKeyKey(k.ID)
	if err := putJSON(t.b.Bucket(bucketAPIKeys), key, k); err != nil {
		return err
	}
	return indexToken(t.b, k)
}

// PutAPIKey implements service.AccountTx.
func (t tx) PutAPIKey(k *data.APIKeyRecord) error {
	b := t.b.Bucket(bucketAPIKeys)
	if k.ID <= 0 {
		return fmt.Errorf("bolt: token id %d", k.ID)
	}
	if uint64(k.ID) > b.Sequence() {
		if err := b.SetSequence(uint64(k.ID)); err != nil {
			return err
		}
	}
	key := apiKeyKey(k.ID)
	old, err := getAPIKey(t.b, key)
	if err != nil {
		return err
	}
	if old != nil { // its entries may move with it (another user, workspace or expiry)
		if err := deleteToken(t.b, old); err != nil {
			return err
		}
	}
	if err := putJSON(b, key, k); err != nil {
		return err
	}
	return indexToken(t.b, k)
}

// DeleteAPIKey implements service.AccountTx.
func (t tx) DeleteAPIKey(id int64) error {
	k, err := t.APIKey(id)
	if err != nil || k == nil {
		return err
	}
	return deleteToken(t.b, k)
}

// indexToken adds a stored token's index entries: by user and kind, by workspace, and by
// expiry when it has one.
func indexToken(b *bbolt.Tx, k *data.APIKeyRecord) error {
	key := string(apiKeyKey(k.ID))
	if err := indexPut(b.Bucket(bucketAPIKeysByUser), keyScope(k.UserID, k.Kind), key); err != nil {
		return err
	}
	if err := indexPut(b.Bucket(bucketAPIKeysByWS), k.WorkspaceID, key); err != nil {
		return err
	}
	if k.ExpiresAt == nil {
		return nil
	}
	return b.Bucket(bucketAPIKeysByExpiry).Put(tokenExpiryKey(k.Kind, k.ExpiresAt.Time, k.ID), nil)
}

// tokenExpiryKey is a token's entry in api_keys_by_expiry: by kind, then expiry (an
// expiry before 1970 sorts as 1970, which is as expired), then id.
func tokenExpiryKey(kind string, expires time.Time, id int64) []byte {
	return fmt.Appendf(nil, "%s\x00%016x%s", kind, uint64(max(expires.UnixMilli(), 0)), apiKeyKey(id))
}

// deleteToken removes a token row and its index entries.
func deleteToken(b *bbolt.Tx, k *data.APIKeyRecord) error {
	key := apiKeyKey(k.ID)
	if err := b.Bucket(bucketAPIKeys).Delete(key); err != nil {
		return err
	}
	if err := indexDelete(b.Bucket(bucketAPIKeysByUser), keyScope(k.UserID, k.Kind), string(key)); err != nil {
		return err
	}
	if err := indexDelete(b.Bucket(bucketAPIKeysByWS), k.WorkspaceID, string(key)); err != nil {
		return err
	}
	if k.ExpiresAt == nil {
		return nil
	}
	return b.Bucket(bucketAPIKeysByExpiry).Delete(tokenExpiryKey(k.Kind, k.ExpiresAt.Time, k.ID))
}

// DeleteExpiredTokens implements service.AccountTx: the oldest entries of the kind's
// expiry index up to before, each deleted with its row and its other entries.
func (t tx) DeleteExpiredTokens(kind string, before time.Time, limit int) ([]*data.APIKeyRecord, error) {
	prefix := []byte(kind + "\x00")
	end := tokenExpiryKey(kind, before, math.MaxInt64) // every id expiring at before
	var ids []int64
	c := t.b.Bucket(bucketAPIKeysByExpiry).Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix) && bytes.Compare(k, end) <= 0 && len(ids) < limit; k, _ = c.Next() {
		id, err := strconv.ParseInt(string(k[len(k)-16:]), 16, 64)
		if err != nil {
			return nil, fmt.Errorf("bolt: token expiry entry %q: %w", k, err)
		}
		ids = append(ids, id)
	}
	var deleted []*data.APIKeyRecord
	for _, id := range ids { // after the walk: a cursor's bucket changed under it may skip
		k, err := t.APIKey(id)
		if err != nil {
			return nil, err
		}
		if k == nil {
			continue
		}
		if err := deleteToken(t.b, k); err != nil {
			return nil, err
		}
		deleted = append(deleted, k)
	}
	return deleted, nil
}

// indexTokenExpiries fills api_keys_by_expiry from the stored tokens of a file written
// before it was kept (the schema 11 → 12 migration).
func indexTokenExpiries(b *bbolt.Tx) error {
	return b.Bucket(bucketAPIKeys).ForEach(func(key, _ []byte) error {
		k, err := getAPIKey(b, key)
		if err != nil || k == nil || k.ExpiresAt == nil {
			return err
		}
		return b.Bucket(bucketAPIKeysByExpiry).Put(tokenExpiryKey(k.Kind, k.ExpiresAt.Time, k.ID), nil)
	})
}

// deleteWorkspaceTokens removes the tokens bound to a workspace that match.
func deleteWorkspaceTokens(b *bbolt.Tx, workspaceID string, match func(*data.APIKeyRecord) bool) error {
	for _, key := range scopeIDs(b.Bucket(bucketAPIKeysByWS), workspaceID) {
		k, err := getAPIKey(b, []byte(key))
		if err != nil {
			return err
		}
		if k != nil && match(k) {
			if err := deleteToken(b, k); err != nil {
				return err
			}
		}
	}
	return nil
}

// APIKeyPage implements service.AccountTx.
func (t tx) APIKeyPage(userID string, req data.PageRequest) ([]*data.APIKeyRecord, data.Page, error) {
	ids, page, err := t.db.page(t.b, bucketAPIKeysByUser, keyScope(userID, data.TokenAPIKey), req)
	if err != nil {
		return nil, page, err
	}
	keys := make([]*data.APIKeyRecord, 0, len(ids))
	for _, id := range ids {
		k, err := getAPIKey(t.b, []byte(id))
		if err != nil {
			return nil, page, err
		}
		if k != nil {
			keys = append(keys, k)
		}
	}
	return keys, page, nil
}

// APIKeyRevision implements service.AccountTx.
func (t tx) APIKeyRevision(id int64) (uint64, error) {
	return revision(t.b.Bucket(bucketAPIKeys).Get(apiKeyKey(id))), nil
}

// MarkAPIKeyUsed implements service.KeyUseRecorder: db.touch writes last_used_at in
// batches (internal/lastused).
func (db *DB) MarkAPIKeyUsed(id int64, at time.Time) { db.touch.Mark(id, at) }

// touchAPIKey sets last_used_at, never back to an earlier use (as on PostgreSQL); a key
// revoked meanwhile is skipped.
func touchAPIKey(b *bbolt.Tx, id int64, at time.Time) error {
	k, err := getAPIKey(b, apiKeyKey(id))
	if err != nil || k == nil {
		return err
	}
	if k.LastUsedAt != nil && !at.After(k.LastUsedAt.Time) {
		return nil // a use that read the clock before the one written, marked after it
	}
	used := data.NewTime(at)
	k.LastUsedAt = &used
	return putJSON(b.Bucket(bucketAPIKeys), apiKeyKey(id), k)
}

// WorkspaceAPIKeyPage implements service.AccountTx.
func (t tx) WorkspaceAPIKeyPage(workspaceID string, req data.PageRequest) ([]*data.APIKeyRecord, data.Page, error) {
	var keys []*data.APIKeyRecord
	keep := func(id string) bool {
		k, err := getAPIKey(t.b, []byte(id))
		return err == nil && k != nil && k.Kind == data.TokenAPIKey
	}
	ids, page, err := t.db.pageWhere(t.b, bucketAPIKeysByWS, workspaceID, req, keep)
	if err != nil {
		return nil, page, err
	}
	for _, id := range ids {
		k, err := getAPIKey(t.b, []byte(id))
		if err != nil {
			return nil, page, err
		}
		if k != nil {
			keys = append(keys, k)
		}
	}
	return keys, page, nil
}

// UserTokens implements service.AccountTx.
func (t tx) UserTokens(userID, kind string) ([]*data.APIKeyRecord, error) {
	var keys []*data.APIKeyRecord
	for _, id := range scopeIDs(t.b.Bucket(bucketAPIKeysByUser), keyScope(userID, kind)) {
		k, err := getAPIKey(t.b, []byte(id))
		if err != nil {
			return nil, err
		}
		if k != nil {
			keys = append(keys, k)
		}
	}
	return keys, nil
}

// LiveAPIKeys implements service.AccountTx, from the user's API key entries (bbolt has
// one writer, so the count holds for the transaction).
func (t tx) LiveAPIKeys(userID, workspaceID string, now time.Time, limit int) (int, error) {
	n := 0
	for _, id := range scopeIDs(t.b.Bucket(bucketAPIKeysByUser), keyScope(userID, data.TokenAPIKey)) {
		if n >= limit {
			break
		}
		k, err := getAPIKey(t.b, []byte(id))
		if err != nil {
			return 0, err
		}
		if k != nil && k.WorkspaceID == workspaceID && (k.ExpiresAt == nil || k.ExpiresAt.After(now)) {
			n++
		}
	}
	return n, nil
}

// OldestTokens implements service.AccountTx, from the keys of the user's index alone
// (ids in order): the newest keep are skipped from the end, then up to limit taken from
// the start before them.
func (t tx) OldestTokens(userID, kind string, keep, limit int) ([]int64, error) {
	prefix := indexKey(keyScope(userID, kind), "")
	c := t.b.Bucket(bucketAPIKeysByUser).Cursor()
	// The first of the newest keep, nil when the user holds no more than keep.
	end, _ := c.Seek(append(bytes.Clone(prefix), 0xff))
	if end == nil {
		end, _ = c.Last()
	} else {
		end, _ = c.Prev()
	}
	for i := 0; i < keep && end != nil && bytes.HasPrefix(end, prefix); i++ {
		end, _ = c.Prev()
	}
	if end == nil || !bytes.HasPrefix(end, prefix) {
		return nil, nil
	}
	last := bytes.Clone(end)
	var ids []int64
	for k, _ := c.Seek(prefix); k != nil && bytes.Compare(k, last) <= 0 && len(ids) < limit; k, _ = c.Next() {
		id, err := strconv.ParseInt(string(k[len(prefix):]), 16, 64)
		if err != nil {
			return nil, fmt.Errorf("token index key %q: %w", k, err)
		}
		ids = append(ids, id)
	}
	return ids, nil
}
