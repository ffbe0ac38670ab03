package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// tokenExpiring is a token of kind for usr_1 in ws_1 expiring at expires (none when nil).
func tokenExpiring(kind string, expires *time.Time) *data.APIKeyRecord {
	k := &data.APIKeyRecord{APIKey: data.APIKey{Name: kind, CreatedAt: data.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))},
		UserID: "usr_1", WorkspaceID: "ws_1", Kind: kind, SecretHash: []byte{1}}
	if expires != nil {
		t := data.NewTime(*expires)
		k.ExpiresAt = &t
	}
	return k
}

// storedTokenIDs are the ids of every token of usr_1, of both kinds, in id order.
func storedTokenIDs(t *testing.T, s service.Store) []int64 {
	t.Helper()
	var ids []int64
	view(t, s, func(tx service.Tx) error {
		for _, kind := range []string{data.TokenLogin, data.TokenAPIKey} {
			keys, err := tx.UserTokens("usr_1", kind)
			if err != nil {
				return err
			}
			for _, k := range keys {
				ids = append(ids, k.ID)
			}
		}
		return nil
	})
	slices.Sort(ids)
	return ids
}

// testPruneTokens: DeleteExpiredTokens deletes the tokens of one kind expiring at or
// before the instant, earliest first, limit at a time, with their index entries (the
// user's and the workspace's lists); a token without an expiry, one expiring a
// millisecond later and the other kind stay. A token moved (PutAPIKey) to a later expiry
// is found under its new one only.
func testPruneTokens(t *testing.T, open Opener) {
	s := open(t)
	before := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *time.Time { v := before.Add(d); return &v }
	oldest := tokenExpiring(data.TokenLogin, at(-48*time.Hour))
	older := tokenExpiring(data.TokenLogin, at(-time.Hour))
	edge := tokenExpiring(data.TokenLogin, at(0))
	later := tokenExpiring(data.TokenLogin, at(time.Millisecond))
	key := tokenExpiring(data.TokenAPIKey, at(-48*time.Hour))
	forever := tokenExpiring(data.TokenAPIKey, nil)
	moved := tokenExpiring(data.TokenLogin, at(-72*time.Hour))
	update(t, s, func(tx service.Tx) error {
		for _, k := range []*data.APIKeyRecord{older, oldest, edge, later, key, forever, moved} {
			if err := tx.InsertAPIKey(k); err != nil {
				return err
			}
		}
		extended := data.NewTime(*at(time.Hour)) // no longer expired
		moved.ExpiresAt = &extended
		return tx.PutAPIKey(moved)
	})
	prune := func(kind string, before time.Time, limit int) int {
		t.Helper()
		var n int
		update(t, s, func(tx service.Tx) error {
			deleted, err := tx.DeleteExpiredTokens(kind, before, limit)
			n = len(deleted)
			return err
		})
		return n
	}
	if n := prune(data.TokenLogin, before, 1); n != 1 {
		t.Fatalf("first pass (limit 1) deleted %d, want 1", n)
	}
	if got, want := storedTokenIDs(t, s), []int64{older.ID, edge.ID, later.ID, key.ID, forever.ID, moved.ID}; !slices.Equal(got, want) {
		t.Errorf("after the first pass: %v, want %v (the earliest expiry gone)", got, want)
	}
	if n := prune(data.TokenLogin, before, 10); n != 2 {
		t.Errorf("second pass deleted %d, want 2 (an hour before, and at the instant)", n)
	}
	if n := prune(data.TokenLogin, before, 10); n != 0 {
		t.Errorf("third pass deleted %d, want 0", n)
	}
	if got, want := storedTokenIDs(t, s), []int64{later.ID, key.ID, forever.ID, moved.ID}; !slices.Equal(got, want) {
		t.Errorf("after the login passes: %v, want %v", got, want)
	}
	if n := prune(data.TokenAPIKey, before, 10); n != 1 {
		t.Errorf("API key pass deleted %d, want 1 (the expired key, not the one without expiry)", n)
	}
	view(t, s, func(tx service.Tx) error {
		for _, id := range []int64{oldest.ID, older.ID, edge.ID, key.ID} {
			if k, err := tx.APIKey(id); err != nil || k != nil {
				t.Errorf("token %d after the passes: %+v, %v; want none", id, k, err)
			}
			if rev, err := tx.APIKeyRevision(id); err != nil || rev != 0 {
				t.Errorf("token %d's revision after the passes: %d, %v; want 0 (caches miss)", id, rev, err)
			}
		}
		page, _, err := tx.WorkspaceAPIKeyPage("ws_1", data.PageRequest{})
		if err != nil || len(page) != 1 || page[0].ID != forever.ID {
			t.Errorf("workspace's API keys: %v, %v; want only the one without expiry", page, err)
		}
		return nil
	})
}
