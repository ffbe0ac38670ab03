package bolt

import (
	"context"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// A schema 12 file kept no index of tokens by expiry. Opening it (schema 13) fills the
// index from the stored tokens, so that the token pass finds the tokens that expired
// before the upgrade; a token without an expiry stays out.
func TestTokenExpiriesOfAnOlderFileAreIndexed(t *testing.T) {
	db, dir, opts := openFile(t)
	t0 := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	expired := data.NewTime(t0.Add(-time.Hour))
	tokens := []*data.APIKeyRecord{
		{APIKey: data.APIKey{Name: "login", ExpiresAt: &expired}, UserID: "usr_1", WorkspaceID: "ws_1", Kind: data.TokenLogin},
		{APIKey: data.APIKey{Name: "key", ExpiresAt: &expired}, UserID: "usr_1", WorkspaceID: "ws_1", Kind: data.TokenAPIKey},
		{APIKey: data.APIKey{Name: "forever"}, UserID: "usr_1", WorkspaceID: "ws_1", Kind: data.TokenAPIKey},
	}
	if err := db.Update(context.Background(), func(tx service.Tx) error {
		for _, k := range tokens {
			if err := tx.InsertAPIKey(k); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// As a schema 12 binary left it: no expiry index.
	db = asOlderFile(t, db, dir, opts, 12, bucketAPIKeysByExpiry)
	defer db.Close()
	for _, kind := range []string{data.TokenLogin, data.TokenAPIKey} {
		var n int
		if err := db.Update(context.Background(), func(tx service.Tx) error {
			deleted, err := tx.DeleteExpiredTokens(kind, t0, 10)
			n = len(deleted)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if n != 1 {
			t.Errorf("%s tokens expired before the upgrade: %d deleted, want 1", kind, n)
		}
	}
	if err := db.View(context.Background(), func(tx service.Tx) error {
		k, err := tx.APIKey(tokens[2].ID)
		if err == nil && k == nil {
			t.Error("the key without expiry is gone")
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
}
