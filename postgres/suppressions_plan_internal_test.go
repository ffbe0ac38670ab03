package postgres

import (
	"context"
	"testing"

	"github.com/voiceapi/voiceapi/service"
)

// TestSuppressionPagesSeekTheWorkspace: a page of a workspace's suppressions reads
// per_page+1 rows of suppressions_by_workspace however many suppressions other
// workspaces hold among its own, in the plan as sent and in the generic plan the server
// keeps for a prepared statement (checkAgentsPagePlan plans both). That plan, not knowing
// the workspace, walked suppressions_pkey back from the cursor and passed over the other
// workspace's: 1,584 rows for a page of 15 where it holds 99 of every 100.
func TestSuppressionPagesSeekTheWorkspace(t *testing.T) {
	db := openInternal(t)
	if err := db.Update(context.Background(), func(stx service.Tx) error {
		_, err := stx.(*tx).exec(`INSERT INTO suppressions (id, workspace_id, phone_number, created_at)
			SELECT 'sup_' || lpad(i::text, 9, '0'), CASE WHEN i % 100 = 0 THEN 'ws_1' ELSE 'ws_2' END, '+1' || lpad(i::text, 10, '0'), now()
			FROM generate_series(1, 100000) i; ANALYZE suppressions`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	const perPage = 15
	checkAgentsPagePlan(t, db, agentsPageCase{name: "suppressions", ks: suppressionList("ws_1"), middle: "sup_000050000",
		index: "suppressions_by_workspace", maxRows: perPage + 1}, perPage)
}
