package postgres

import (
	"context"
	"testing"

	"github.com/voiceapi/voiceapi/service"
)

// TestWorkspaceListsSeekTheWorkspace: a page of a workspace's suppressions, knowledge
// bases, webhooks or jobs (the export's, Jobs) reads per_page+1 rows of the table's (workspace_id, id) index however
// many rows other workspaces hold among its own, in the plan as sent and in the generic
// plan the server keeps for a prepared statement (checkAgentsPagePlan plans both). That
// plan, not knowing the workspace, walked the primary key back from the cursor and passed
// over the other workspace's rows: for suppressions, 1,584 rows for a page of 15 where
// another workspace holds 99 of every 100, and 50,099 for a cursor's check.
func TestWorkspaceListsSeekTheWorkspace(t *testing.T) {
	db := openInternal(t)
	if err := db.Update(context.Background(), func(stx service.Tx) error {
		_, err := stx.(*tx).exec(`
			CREATE TEMP TABLE listed AS SELECT lpad(i::text, 9, '0') AS n, CASE WHEN i % 100 = 0 THEN 'ws_1' ELSE 'ws_2' END AS ws
				FROM generate_series(1, 100000) i;
			INSERT INTO suppressions (id, workspace_id, phone_number, created_at) SELECT 'sup_' || n, ws, '+1' || n, now() FROM listed;
			INSERT INTO knowledge_bases (id, workspace_id, name, created_at, updated_at) SELECT 'kb_' || n, ws, 'KB', now(), now() FROM listed;
			INSERT INTO webhooks (id, workspace_id, url, description, events, enabled, sealed_secret, created_at, updated_at)
				SELECT 'wh_' || n, ws, 'https://example.com', '', '{}', true, '', now(), now() FROM listed;
			INSERT INTO jobs (id, workspace_id, kind, payload, status, attempt, max_attempts, run_at, created_at)
				SELECT 'job_' || n, ws, 'a.work', '', 'succeeded', 1, 1, now(), now() FROM listed;
			ANALYZE suppressions; ANALYZE knowledge_bases; ANALYZE webhooks; ANALYZE jobs`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	const perPage = 15
	for _, c := range []struct{ name, prefix string }{{"suppressions", "sup_"}, {"knowledge_bases", "kb_"}, {"webhooks", "wh_"}, {"jobs", "job_"}} {
		checkAgentsPagePlan(t, db, agentsPageCase{name: c.name, ks: inWorkspace(c.name, "id", "ws_1"), middle: c.prefix + "000050000",
			index: c.name + "_by_workspace", maxRows: perPage + 1}, perPage)
	}
}
