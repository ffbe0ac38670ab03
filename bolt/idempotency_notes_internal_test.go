package bolt

import (
	"testing"

	"github.com/voiceapi/voiceapi/service/storetest"
)

// A schema 19 file keeps answers of every kind. Opening it (schema 20) lists, under its
// token's workspace, the one kept with status 201 naming no conversation, for the job
// that tells a start's (service/idempotency_start_upgrade.go); not a 200, not an answer
// noted with a conversation, not one whose token is gone.
func TestUpgradeListsKeptStartsToNote(t *testing.T) {
	db, dir, opts := openFile(t)
	tokenID, key := storetest.StoreKeptAnswers(t, db)
	db = asOlderFile(t, db, dir, opts, 19, bucketStartsToNote)
	defer db.Close()
	storetest.CheckStartsListed(t, db, tokenID, key)
	storetest.CheckStartsUnlistedWithTheirWorkspace(t, db)
}
