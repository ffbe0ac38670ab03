package postgres

import (
	"context"
	"fmt"
	"testing"

	"github.com/voiceapi/voiceapi/service"
)

// TestScopedListPagesStopAtTheirScope: a page of a workspace's agents (all, of one
// status, or a limited caller's, read by their key), of an agent's versions, of a campaign's recipients (all, or of one state), of a
// webhook's deliveries, of a workspace's members or of a user's workspaces reads its
// scope's rows and ends its index scan where they end, however many rows the scopes beside
// it hold in that index: here 20 rows of the scope among 60,000, its neighbours before
// and after it in the index holding about 20,000 each (the value after a status's or a
// state's, of the same workspace or campaign, for a filter's scope). The first page, a
// page older and a page newer than the scope's 10th row and both cursors' checks
// (pagePlans), as sent and generic: 4 to 23 pages a statement, 67 for the user's
// workspaces (a workspace's row read by its key for each of the page's memberships). A
// scan not ended at its scope's end reads on through a neighbour's index entries: with
// draft agents' workspace compared as a range (agentScope), 133 to 144 pages (seen
// failing so).
func TestScopedListPagesStopAtTheirScope(t *testing.T) {
	db := openInternal(t)
	if err := db.Update(context.Background(), func(stx service.Tx) error {
		// s is the scope: '1' the 20 rows of an unfiltered list's scope, '3' with sub 'a'
		// the 20 of a filter's value, beside '3' with sub 'b'; '0' and '2' the neighbours.
		_, err := stx.(*tx).exec(`
			CREATE TEMP TABLE listed AS SELECT i, lpad(i::text, 9, '0') AS n, s, sub FROM generate_series(1, 60040) i,
				LATERAL (SELECT CASE WHEN i % 3002 = 0 THEN '1' WHEN i % 3002 = 1501 THEN '3' ELSE (ARRAY['0', '2', '3'])[i % 3 + 1] END AS s,
					CASE WHEN i % 3002 IN (0, 1501) THEN 'a' ELSE 'b' END AS sub) r;
			INSERT INTO agents (id, workspace_id, name, name_folded, status, config, privacy, created_at, updated_at)
				SELECT 'agt_' || n, 'ws_' || s, 'A', 'a', CASE sub WHEN 'a' THEN 'draft' ELSE 'published' END, '{}', '{}', now(), now() FROM listed;
			INSERT INTO agent_versions (agent_id, version_number, name, config, created_at, published_by)
				SELECT 'agt_' || s, i, 'A', '{}', now(), 'usr_1' FROM listed;
			INSERT INTO campaign_recipients (id, campaign_id, workspace_id, state, body)
				SELECT 'rcp_' || n, 'cmp_' || s, 'ws_1', CASE sub WHEN 'a' THEN 'completed' ELSE 'pending' END, '{}' FROM listed;
			INSERT INTO webhooks (id, workspace_id, url, description, events, enabled, sealed_secret, created_at, updated_at)
				SELECT 'wh_' || s, 'ws_1', 'https://example.com', '', '{}', true, '', now(), now() FROM (VALUES ('0'), ('1'), ('2'), ('3')) w(s);
			INSERT INTO deliveries (id, webhook_id, workspace_id, event_id, event_type, attempt, status, created_at)
				SELECT 'dlv_' || n, 'wh_' || s, 'ws_1', 'evt_' || n, 'call.ended', 1, 'succeeded', now() FROM listed;
			INSERT INTO workspaces (id, name, created_at, updated_at) SELECT 'ws_' || n, 'W', now(), now() FROM listed;
			INSERT INTO members (workspace_id, user_id, role, created_at, updated_at)
				SELECT 'ws_' || s, 'usr_' || n, 'member', now(), now() FROM listed
				UNION ALL SELECT 'ws_' || n, 'usr_' || s, 'member', now(), now() FROM listed;
			ANALYZE agents; ANALYZE agent_versions; ANALYZE campaign_recipients; ANALYZE deliveries; ANALYZE workspaces; ANALYZE members`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	const perPage = 15
	tenth, tenthOfFilter := "000030020", "000028519" // the scope's 10th row, the filter value's
	for _, c := range []struct {
		name   string
		ks     keyset
		middle string
		most   int
	}{
		{"agents", agentList("ws_1", "", nil, service.AgentSearch{}), "agt_" + tenth, 40},
		{"draft agents", agentList("ws_3", "draft", nil, service.AgentSearch{}), "agt_" + tenthOfFilter, 40},
		// Three of the 20,000 agents of draft agents' workspace, a caller's limited to them.
		{"some agents", agentList("ws_3", "", []string{"agt_000000005", "agt_000030002", "agt_000059999"}, service.AgentSearch{}), "agt_000030002", 40},
		{"agent versions", versionList("agt_1"), "0000030020", 40},
		{"recipients", recipientKeyset("cmp_1", service.StateSelection{}), "rcp_" + tenth, 40},
		{"completed recipients", recipientKeyset("cmp_3", service.StateSelection{Filter: "completed", States: []string{"completed"}}), "rcp_" + tenthOfFilter, 40},
		{"deliveries", deliveryList("wh_1", service.DeliveryFilter{}), "dlv_" + tenth, 40},
		{"members", memberList("ws_1"), "usr_" + tenth, 40},
		{"a user's workspaces", workspaceList("usr_1"), "ws_" + tenth, 80},
	} {
		for i, plan := range pagePlans(t, db, c.ks, c.middle, perPage) {
			checkPlanPages(t, fmt.Sprintf("%s, statement %d", c.name, i), plan, c.most)
		}
	}
}
