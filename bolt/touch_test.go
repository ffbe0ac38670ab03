package bolt_test

import (
	"context"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/voiceapi/voiceapi/bolt"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/service"
)

// A use written in an earlier flush is never replaced by an earlier use marked after it
// (a request that read the clock before another, but marked its use after that one's
// flush), as on PostgreSQL: last_used_at only moves forward. Each Close flushes.
func TestLastUsedNeverMovesBack(t *testing.T) {
	dir := t.TempDir()
	open := func() *bolt.DB {
		db, err := bolt.Open(dir, bolt.Options{PasswordCost: bcrypt.MinCost, NoSync: true, SecretKey: testkit.SecretKey})
		if err != nil {
			t.Fatal(err)
		}
		return db
	}
	ctx := context.Background()
	db := open()
	k := &data.APIKeyRecord{APIKey: data.APIKey{Name: "k"}, UserID: "usr_1", WorkspaceID: "ws_1", Kind: data.TokenAPIKey, SecretHash: []byte("s")}
	if err := db.Update(ctx, func(tx service.Tx) error { return tx.InsertAPIKey(k) }); err != nil {
		t.Fatal(err)
	}
	later := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	db.MarkAPIKeyUsed(k.ID, later)
	db.Close()
	db = open()
	db.MarkAPIKeyUsed(k.ID, later.Add(-time.Millisecond)) // read the clock first, marked last
	db.Close()
	db = open()
	defer db.Close()
	err := db.View(ctx, func(tx service.Tx) error {
		got, err := tx.APIKey(k.ID)
		if err != nil {
			return err
		}
		if got.LastUsedAt == nil || !got.LastUsedAt.Equal(later) {
			t.Errorf("last_used_at = %v, want %v", got.LastUsedAt, later)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
