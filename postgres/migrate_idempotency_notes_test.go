package postgres_test

import (
	"context"
	"testing"

	"github.com/voiceapi/voiceapi/service/storetest"
)

// A database at migration 0030 keeps answers of every kind. Migration 0031 lists, under
// its token's workspace, the one kept with status 201 naming no conversation, for the
// job that tells a start's; not a 200, not an answer noted with a conversation, not one
// whose token is gone. As on bbolt.
func TestMigrationListsKeptStartsToNote(t *testing.T) {
	pool := schemaAt(t, 30)
	ctx := context.Background()
	db := openMigrated(t, pool)
	tokenID, key := storetest.StoreKeptAnswers(t, db)
	db.Close()
	// As migration 0030 left it: the answers kept, no list.
	if _, err := pool.Exec(ctx, `DROP TABLE idempotency_starts_to_note; DELETE FROM schema_migrations WHERE version = 31`); err != nil {
		t.Fatal(err)
	}
	db = openMigrated(t, pool)
	defer db.Close()
	storetest.CheckStartsListed(t, db, tokenID, key)
	storetest.CheckStartsUnlistedWithTheirWorkspace(t, db)
}
