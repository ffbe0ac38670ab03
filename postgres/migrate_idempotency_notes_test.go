package postgres_test

import (
	"context"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/postgres"
	"github.com/voiceapi/voiceapi/service/storetest"
)

// A database at migration 0030 keeps answers of every kind. Migration 0031 lists, under
// its token's workspace, the one kept with status 201 naming no conversation, for the
// job that tells a start's; not a 200, not an answer noted with a conversation, not one
// whose token is gone. As on bbolt.
func TestMigrationListsKeptStartsToNote(t *testing.T) {
	pool := schemaAt(t, 30)
	ctx := context.Background()
	open := func() *postgres.DB {
		db, err := postgres.Open(ctx, postgres.Options{URL: pool.Config().ConnString(), PasswordCost: bcrypt.MinCost, SecretKey: testkit.SecretKey})
		if err != nil {
			t.Fatal(err)
		}
		return db
	}
	db := open()
	tokenID, key := storetest.StoreKeptAnswers(t, db)
	db.Close()
	// As migration 0030 left it: the answers kept, no list.
	if _, err := pool.Exec(ctx, `DROP TABLE idempotency_starts_to_note; DELETE FROM schema_migrations WHERE version = 31`); err != nil {
		t.Fatal(err)
	}
	db = open()
	defer db.Close()
	storetest.CheckStartsListed(t, db, tokenID, key)
	storetest.CheckStartsUnlistedWithTheirWorkspace(t, db)
}
