package postgres

import (
	"context"
	"fmt"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// TestAgentAndAccountListsSeekTheScope: a page of a workspace's agents or numbers, of a
// workspace's or a user's API keys, or of a workspace's members reads per_page+1 rows of
// its scope's index however many rows other workspaces (users) hold among its own, in
// the plan as sent and in the generic plan the server keeps for a prepared statement
// (checkAgentsPagePlan plans both), as TestWorkspaceListsSeekTheWorkspace asks of the
// other workspace lists.
func TestAgentAndAccountListsSeekTheScope(t *testing.T) {
	db := openInternal(t)
	if err := db.Update(context.Background(), func(stx service.Tx) error {
		_, err := stx.(*tx).exec(`
			CREATE TEMP TABLE listed AS SELECT i, lpad(i::text, 9, '0') AS n, CASE WHEN i % 100 = 0 THEN '1' ELSE '2' END AS s
				FROM generate_series(1, 100000) i;
			INSERT INTO agents (id, workspace_id, name, name_folded, status, config, privacy, created_at, updated_at)
				SELECT 'agt_' || n, 'ws_' || s, 'A', 'a', 'draft', '{}', '{}', now(), now() FROM listed;
			INSERT INTO numbers (id, workspace_id, phone_number, nickname, nickname_folded, provider, created_at, updated_at)
				SELECT 'num_' || n, 'ws_' || s, '+1' || n, '', '', 'sip', now(), now() FROM listed;
			INSERT INTO api_keys (id, user_id, workspace_id, kind, name, secret_hash, created_at)
				SELECT i, 'usr_' || s, 'ws_' || s, 'api_key', 'K', '\x00', now() FROM listed;
			INSERT INTO members (workspace_id, user_id, role, created_at, updated_at)
				SELECT 'ws_' || s, 'usr_' || n, 'member', now(), now() FROM listed;
			UPDATE numbers SET inbound_agent_id = 'agt_1' WHERE id LIKE '%000' AND id NOT LIKE '%5000';
			UPDATE numbers SET outbound_agent_id = 'agt_1' WHERE id LIKE '%500' OR id LIKE '%5000';
			ANALYZE agents; ANALYZE numbers; ANALYZE api_keys; ANALYZE members`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	const perPage = 15
	for _, c := range []agentsPageCase{
		{"agents", agentList("ws_1", "", nil, service.AgentSearch{}), "agt_000050000", "agents_by_workspace", perPage + 1},
		{"draft agents", agentList("ws_1", "draft", nil, service.AgentSearch{}), "agt_000050000", "agents_by_status", perPage + 1},
		{"numbers", numberList("ws_1", service.NumberSearch{}), "num_000050000", "numbers_by_workspace", perPage + 1},
		// 200 of ws_1's 1,000 numbers are agt_1's, 100 inbound (10 of them outbound too),
		// 100 outbound: each of the two walks reads per_page+1. With the agent an OR
		// condition, a step read all 200 of the agent's numbers.
		{"an agent's numbers", numberList("ws_1", service.NumberSearch{NumberFilter: data.NumberFilter{AgentID: "agt_1"}}), "num_000050000", "numbers_by_outbound_agent", 2 * (perPage + 1)},
		{"a workspace's API keys", apiKeyList("api_keys_by_workspace", "workspace_id", "ws_1"), "000000000000c350", "api_keys_by_workspace", perPage + 1},
		{"a user's API keys", apiKeyList("api_keys_by_user", "user_id", "usr_1"), "000000000000c350", "api_keys_by_user", perPage + 1},
		{"members", memberList("ws_1"), "usr_000050000", "members_pkey", perPage + 1},
	} {
		checkAgentsPagePlan(t, db, c, perPage)
	}
	// A search that keeps none of ws_1's rows reads no more than its bound's (scanPage),
	// its scope's index alone: the other workspace's rows are never looked at.
	const maxScan = 100
	for _, c := range []struct {
		name, middle, index string
		w                   scanWalk
	}{
		{"agents by name", "agt_000050000", "agents_by_workspace", agentSearchWalk("ws_1", "", nil, service.AgentSearch{Name: "zz", MaxScan: maxScan})},
	} {
		checkScanWalkPlans(t, db, c.name, c.w, c.middle, c.index, maxScan+1, perPage)
	}
	// A caller limited to some agents searches them alone, read by their key: the scope's
	// other agents are neither counted (they would shape its pages) nor walked past.
	some := []string{"agt_000000100", "agt_000050000", "agt_000099900"}
	checkScanWalkPlans(t, db, "some draft agents by knowledge base",
		agentSearchWalk("ws_1", "draft", some, service.AgentSearch{KnowledgeBaseID: "kb_1", MaxScan: maxScan}),
		"agt_000050000", "", len(some), perPage) // by whichever index holds id: each reads its ids alone
	numbers := numberList("ws_1", service.NumberSearch{})
	numbers.args = append(numbers.args, "", "zz")
	checkScanWalkPlans(t, db, "numbers by q", scanWalk{ks: numbers, table: "numbers", keep: numberSearchKeep(1), maxScan: maxScan},
		"num_000050000", "numbers_by_workspace", maxScan+1, perPage)
}

// TestAPIKeyPagesStopAtTheirKind: a page of a user's API keys newer than a cursor that
// reaches the newest key ends its scan of api_keys_by_user (user, kind, key) at the last
// key, not at the user's end: here 20 keys before 20,000 login tokens of the same user,
// which sort after them ("login" after "api_key"). Planned as sent and generic.
func TestAPIKeyPagesStopAtTheirKind(t *testing.T) {
	db := openInternal(t)
	if err := db.Update(context.Background(), func(stx service.Tx) error {
		_, err := stx.(*tx).exec(`INSERT INTO api_keys (id, user_id, workspace_id, kind, name, secret_hash, created_at)
			SELECT i, 'usr_1', 'ws_1', CASE WHEN i <= 20 THEN 'api_key' ELSE 'login' END, 'K', '\x00', now()
			FROM generate_series(1, 20020) i; ANALYZE api_keys`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	ks := apiKeyList("api_keys_by_user", "user_id", "usr_1")
	for _, generic := range []bool{false, true} {
		plan := plannedExplain(t, db, generic, func(x *tx) (string, []any, error) {
			q, err := x.pageQuery(ks, data.PageRequest{PerPage: 15, Cursor: *db.encodeCursor(newer, ks.binding, "0000000000000005")})
			return q.sql, q.args, err
		})
		checkPlanPages(t, fmt.Sprintf("a newer page (generic %v)", generic), plan, 24)
	}
}
