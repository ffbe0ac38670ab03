package postgres

import (
	"context"
	"fmt"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// TestWorkspaceListPagesStopAtTheirScope: a page of a workspace's list (those of
// inWorkspace and narrowByAgent, calls, API keys, an agent's tests and runs, a webhook's
// deliveries of some types) reads its scope's rows and ends its index scan where they
// end, as TestScopedListPagesStopAtTheirScope asks of the lists beside them: 20 rows of
// the scope among 60,000, its neighbours before and after it in the index holding about
// 20,000 each: other workspaces (ws_0, ws_2) for a workspace's list (ws_1), the same
// workspace's other agents (agt_0, agt_2 of ws_3) for an agent's or a limited caller's,
// the same workspace's other status (completed) for a status filter's (canceled
// campaigns), other agents, webhooks or types for theirs. The first page, a page older
// and a page newer than the scope's 10th row and both cursors' checks (pagePlans), as
// sent and generic: 1 to 23 pages a statement, up to 74 for walks, whose page's rows are
// read by key. Read past their scope before: an unfiltered call page's generic plan
// walked calls_pkey past the other workspaces' calls (231 to 488 pages), canceled
// campaigns passed over the workspace's completed ones (238 to 503), an agent's or a
// caller's agents' over those agents' (182 to 1,197).
func TestWorkspaceListPagesStopAtTheirScope(t *testing.T) {
	db := openInternal(t)
	if err := db.Update(context.Background(), func(stx service.Tx) error {
		// s and sub as in TestScopedListPagesStopAtTheirScope: '1' the 20 rows of a
		// workspace's scope; '3' with sub 'a' the 20 of agt_1 (canceled, failed, inbound to
		// agt_1, of type call.ended) beside ws_3's 20,000 of agt_0 and agt_2; '0' and '2'
		// the neighbouring workspaces. An agent is of one workspace, as ids are.
		_, err := stx.(*tx).exec(`
			CREATE TEMP TABLE listed AS SELECT i, lpad(i::text, 9, '0') AS n, s, sub,
					CASE WHEN s <> '3' THEN 'agt_w' || s WHEN sub = 'a' THEN 'agt_1' WHEN i % 2 = 0 THEN 'agt_0' ELSE 'agt_2' END AS agent
				FROM generate_series(1, 60040) i,
				LATERAL (SELECT CASE WHEN i % 3002 = 0 THEN '1' WHEN i % 3002 = 1501 THEN '3' ELSE (ARRAY['0', '2', '3'])[i % 3 + 1] END AS s,
					CASE WHEN i % 3002 IN (0, 1501) THEN 'a' ELSE 'b' END AS sub) r;
			INSERT INTO conversations (id, workspace_id, agent_id, status, variables, input_tokens, output_tokens, agent_turns, items, started_by, created_at, updated_at, ended_at)
				SELECT 'conv_' || n, 'ws_' || s, agent, 'ended', '{}', 0, 0, 0, 0, 'usr_1', now(), now(), now() FROM listed;
			INSERT INTO campaigns (id, workspace_id, agent_id, status, body)
				SELECT 'cmp_' || n, 'ws_' || s, agent, CASE sub WHEN 'a' THEN 'canceled' ELSE 'completed' END, '{}' FROM listed;
			INSERT INTO calls (id, workspace_id, agent_id, number_id, direction, status, created_at, updated_at)
				SELECT 'cal_' || n, 'ws_' || s, agent, 'num_1', 'inbound', CASE sub WHEN 'a' THEN 'failed' ELSE 'ended' END, now(), now() FROM listed;
			INSERT INTO knowledge_bases (id, workspace_id, name, created_at, updated_at) SELECT 'kb_' || n, 'ws_' || s, 'KB', now(), now() FROM listed;
			INSERT INTO numbers (id, workspace_id, phone_number, nickname, nickname_folded, provider, inbound_agent_id, created_at, updated_at)
				SELECT 'num_' || n, 'ws_' || s, '+1' || n, '', '', 'sip', CASE s WHEN '3' THEN agent END, now(), now() FROM listed;
			INSERT INTO suppressions (id, workspace_id, phone_number, created_at) SELECT 'sup_' || n, 'ws_' || s, '+1' || n, now() FROM listed;
			INSERT INTO webhooks (id, workspace_id, url, description, events, enabled, sealed_secret, created_at, updated_at)
				SELECT 'wh_' || n, 'ws_' || s, 'https://example.com', '', '{}', true, '', now(), now() FROM listed;
			INSERT INTO webhooks (id, workspace_id, url, description, events, enabled, sealed_secret, created_at, updated_at)
				SELECT 'wh_' || s, 'ws_1', 'https://example.com', '', '{}', true, '', now(), now() FROM (VALUES ('0'), ('1'), ('2'), ('3')) w(s);
			INSERT INTO deliveries (id, webhook_id, workspace_id, event_id, event_type, attempt, status, created_at)
				SELECT 'dlv_' || n, 'wh_' || s, 'ws_1', 'evt_' || n, CASE WHEN sub = 'a' THEN 'call.ended' WHEN i % 2 = 0 THEN 'agent.created' ELSE 'call.started' END,
					1, 'succeeded', now() FROM listed;
			INSERT INTO jobs (id, workspace_id, kind, payload, status, attempt, max_attempts, run_at, created_at)
				SELECT 'job_' || n, 'ws_' || s, 'a.work', '', 'succeeded', 1, 1, now(), now() FROM listed;
			INSERT INTO api_keys (id, user_id, workspace_id, kind, name, secret_hash, created_at)
				SELECT i, 'usr_' || s, 'ws_' || s, 'api_key', 'K', '\x00', now() FROM listed;
			INSERT INTO agent_tests (id, workspace_id, agent_id, name, caller, variables, max_turns, mocks, criteria, required_for_publish, repeat, created_at, updated_at)
				SELECT 'tst_' || n, 'ws_1', 'agt_' || s, 'T', '{}', '{}', 1, '{}', '{}', false, 1, now(), now() FROM listed;
			INSERT INTO test_runs (id, workspace_id, agent_id, agent_version, status, test_ids, summary, job_id, created_by, created_at, finished_at, config, tests)
				SELECT 'trun_' || n, 'ws_1', 'agt_' || s, 1, 'passed', '[]', '{}', '', 'usr_1', now(), now(), '{}', '[]' FROM listed;
			ANALYZE conversations; ANALYZE campaigns; ANALYZE calls; ANALYZE knowledge_bases; ANALYZE numbers; ANALYZE suppressions;
			ANALYZE webhooks; ANALYZE deliveries; ANALYZE jobs; ANALYZE api_keys; ANALYZE agent_tests; ANALYZE test_runs`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	const perPage = 15
	// The scope's 10th row: ws_1's (or agt_1's, wh_1's, usr_1's), ws_3's agt_1's.
	tenth, tenthOfAgent := "000030020", "000028519"
	some := []string{"agt_1", "agt_3"} // a limited caller's: agt_3 has no rows
	finished := service.StateSelection{Filter: "finished", States: []string{data.TestPassed, data.TestFailed, data.TestError}}
	allKinds := data.JobSelection{Kinds: []string{"a.work", "b.sweep"}}
	for _, c := range []struct {
		name   string
		ks     keyset
		middle string
		most   int
	}{
		{"conversations", conversationList("ws_1", data.ConversationFilter{}, nil), "conv_" + tenth, 40},
		{"ended conversations", conversationList("ws_1", data.ConversationFilter{Status: data.ConversationEnded}, nil), "conv_" + tenth, 40},
		{"one agent's conversations", conversationList("ws_3", data.ConversationFilter{AgentID: "agt_1"}, nil), "conv_" + tenthOfAgent, 40},
		{"a limited caller's conversations", conversationList("ws_3", data.ConversationFilter{}, some), "conv_" + tenthOfAgent, 80},
		{"conversations of one agent of the caller's", conversationList("ws_3", data.ConversationFilter{}, some[:1]), "conv_" + tenthOfAgent, 40},
		{"campaigns", campaignPageList("ws_1", data.CampaignFilter{}, nil), "cmp_" + tenth, 40},
		{"completed campaigns", campaignPageList("ws_1", data.CampaignFilter{Status: data.CampaignCompleted}, nil), "cmp_" + tenth, 40},
		{"canceled campaigns", campaignPageList("ws_3", data.CampaignFilter{Status: data.CampaignCanceled}, nil), "cmp_" + tenthOfAgent, 40},
		{"one agent's campaigns", campaignPageList("ws_3", data.CampaignFilter{AgentID: "agt_1"}, nil), "cmp_" + tenthOfAgent, 40},
		{"a limited caller's campaigns", campaignPageList("ws_3", data.CampaignFilter{}, some), "cmp_" + tenthOfAgent, 80},
		{"a limited caller's canceled campaigns", campaignPageList("ws_3", data.CampaignFilter{Status: data.CampaignCanceled}, some), "cmp_" + tenthOfAgent, 80},
		// agt_0 and agt_2 have none, beside their 20,000 completed ones.
		{"one agent's canceled campaigns", campaignPageList("ws_3", data.CampaignFilter{AgentID: "agt_0", Status: data.CampaignCanceled}, nil), "cmp_" + tenthOfAgent, 40},
		{"canceled campaigns of a caller's agents", campaignPageList("ws_3", data.CampaignFilter{Status: data.CampaignCanceled}, []string{"agt_0", "agt_2"}), "cmp_" + tenthOfAgent, 80},
		{"knowledge bases", inWorkspace("knowledge_bases", "id", "ws_1"), "kb_" + tenth, 40},
		{"numbers", numberList("ws_1", service.NumberSearch{}), "num_" + tenth, 40},
		{"an agent's numbers", numberList("ws_3", service.NumberSearch{NumberFilter: data.NumberFilter{AgentID: "agt_1"}}), "num_" + tenthOfAgent, 80},
		{"suppressions", inWorkspace("suppressions", "id", "ws_1"), "sup_" + tenth, 40},
		{"webhooks", inWorkspace("webhooks", "id", "ws_1"), "wh_" + tenth, 40},
		{"jobs (export)", inWorkspace("jobs", "id", "ws_1"), "job_" + tenth, 40},
		{"jobs", jobList("ws_1", allKinds), "job_" + tenth, 40},
		{"a workspace's API keys", apiKeyList("api_keys_by_workspace", "workspace_id", "ws_1"), fmt.Sprintf("%016x", 30020), 40},
		{"a user's API keys", apiKeyList("api_keys_by_user", "user_id", "usr_1"), fmt.Sprintf("%016x", 30020), 40},
		{"agent tests", agentTestList("agt_1"), "tst_" + tenth, 40},
		{"test runs", testRunList("agt_1", service.StateSelection{}), "trun_" + tenth, 40},
		{"finished test runs", testRunList("agt_1", finished), "trun_" + tenth, 40},
		{"deliveries of some types", deliveryWalks("wh_3", service.DeliveryFilter{Types: []string{"call.ended", "campaign.started"}}), "dlv_" + tenthOfAgent, 80},
	} {
		for i, plan := range pagePlans(t, db, c.ks, c.middle, perPage) {
			checkPlanPages(t, fmt.Sprintf("%s, statement %d", c.name, i), plan, c.most)
		}
	}
	for _, c := range []struct {
		name, ws, middle string
		f                data.CallFilter
		agents           []string
	}{
		{"calls", "ws_1", "cal_" + tenth, data.CallFilter{}, nil},
		{"one agent's calls", "ws_3", "cal_" + tenthOfAgent, data.CallFilter{AgentID: "agt_1"}, nil},
		{"failed calls", "ws_3", "cal_" + tenthOfAgent, data.CallFilter{Status: data.CallFailed}, nil},
		{"a limited caller's calls", "ws_3", "cal_" + tenthOfAgent, data.CallFilter{}, some},
	} {
		q := callQueryOf(t, db, c.ws, c.agents, c.f)
		for _, generic := range []bool{false, true} {
			// A first page, a page older and one newer than the middle, the checks beyond it.
			for i, stmt := range []struct {
				desc      bool
				from      string
				inclusive bool
				limit     int
			}{{true, "", false, perPage + 2}, {true, c.middle, false, perPage + 2}, {false, c.middle, false, perPage + 2}, {false, c.middle, true, 2}, {true, c.middle, false, 1}} {
				plan := plannedExplain(t, db, generic, func(*tx) (string, []any, error) {
					sql, args := q.walkSQL(stmt.desc, stmt.from, stmt.inclusive, stmt.limit, callCols)
					return sql, args, nil
				})
				checkPlanPages(t, fmt.Sprintf("%s, statement %d (generic %v)", c.name, i, generic), plan, 40)
			}
		}
	}
}
