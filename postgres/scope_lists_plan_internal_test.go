package postgres

import (
	"context"
	"fmt"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// TestScopedListsSeekTheScope: a page of a webhook's deliveries, of an agent's tests,
// test runs (all, or a status filter's) or versions, of a campaign's recipients, of a
// user's workspaces, or of a workspace's conversations or campaigns (no filter) reads
// per_page+1 rows of its scope's index however many rows other scopes hold among its
// own, in the plan as sent and in the generic plan the server keeps for a prepared
// statement (checkAgentsPagePlan plans both), as TestAgentAndAccountListsSeekTheScope
// asks of the workspace's lists. Here another scope holds 99 of every 100 rows.
func TestScopedListsSeekTheScope(t *testing.T) {
	db := openInternal(t)
	if err := db.Update(context.Background(), func(stx service.Tx) error {
		_, err := stx.(*tx).exec(`
			CREATE TEMP TABLE listed AS SELECT i, lpad(i::text, 9, '0') AS n, CASE WHEN i % 100 = 0 THEN '1' ELSE '2' END AS s
				FROM generate_series(1, 100000) i;
			INSERT INTO webhooks (id, workspace_id, url, description, events, enabled, sealed_secret, created_at, updated_at)
				VALUES ('wh_1', 'ws_1', 'https://example.com', '', '{}', true, '', now(), now()),
					('wh_2', 'ws_1', 'https://example.com', '', '{}', true, '', now(), now());
			INSERT INTO deliveries (id, webhook_id, workspace_id, event_id, event_type, attempt, status, created_at)
				SELECT 'dlv_' || n, 'wh_' || s, 'ws_1', 'evt_' || n, 'call.ended', 1, 'succeeded', now() FROM listed;
			INSERT INTO agent_tests (id, workspace_id, agent_id, name, caller, variables, max_turns, mocks, criteria, required_for_publish, repeat, created_at, updated_at)
				SELECT 'tst_' || n, 'ws_1', 'agt_' || s, 'T', '{}', '{}', 1, '{}', '{}', false, 1, now(), now() FROM listed;
			INSERT INTO test_runs (id, workspace_id, agent_id, agent_version, status, test_ids, summary, job_id, created_by, created_at, finished_at, config, tests)
				SELECT 'trun_' || n, 'ws_1', 'agt_' || s, 1, 'passed', '[]', '{}', '', 'usr_1', now(), now(), '{}', '[]' FROM listed;
			INSERT INTO agent_versions (agent_id, version_number, name, config, created_at, published_by)
				SELECT 'agt_' || s, i, 'A', '{}', now(), 'usr_1' FROM listed;
			INSERT INTO campaign_recipients (id, campaign_id, workspace_id, state, body)
				SELECT 'rcp_' || n, 'cmp_' || s, 'ws_1', 'completed', '{}' FROM listed;
			INSERT INTO workspaces (id, name, created_at, updated_at) SELECT 'ws_' || n, 'W', now(), now() FROM listed;
			INSERT INTO members (workspace_id, user_id, role, created_at, updated_at)
				SELECT 'ws_' || n, 'usr_' || s, 'member', now(), now() FROM listed;
			INSERT INTO conversations (id, workspace_id, agent_id, status, variables, input_tokens, output_tokens, agent_turns, items, started_by, created_at, updated_at, ended_at)
				SELECT 'conv_' || n, 'ws_' || s, 'agt_1', 'ended', '{}', 0, 0, 0, 0, 'usr_1', now(), now(), now() FROM listed;
			INSERT INTO campaigns (id, workspace_id, agent_id, status, body)
				SELECT 'cmp_' || n, 'ws_' || s, 'agt_1', 'completed', '{}' FROM listed;
			INSERT INTO events (id, workspace_id, type, created_at, chain_time, actor_type, actor_user_id, actor_token_id, actor_address, prev_hash, hash)
				SELECT 'evt_' || n, 'ws_' || s, 'agent.created', now(), now(), 'user', 'usr_1', 0, '', '', '' FROM listed ORDER BY i;
			ANALYZE events; ANALYZE deliveries; ANALYZE agent_tests; ANALYZE test_runs; ANALYZE agent_versions; ANALYZE campaign_recipients;
			ANALYZE workspaces; ANALYZE members; ANALYZE conversations; ANALYZE campaigns`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	const perPage = 15
	finished := service.StateSelection{Filter: "finished", States: []string{data.TestPassed, data.TestFailed, data.TestError}}
	for _, c := range []agentsPageCase{
		{"deliveries", deliveryList("wh_1", service.DeliveryFilter{}), "dlv_000050000", "deliveries_by_webhook", perPage + 1},
		// Each type a walk of its own (0042), however many of the webhook's are of others.
		{"narrowed deliveries", deliveryWalks("wh_1", service.DeliveryFilter{Types: []string{"agent.created", "call.ended"}}), "dlv_000050000", "deliveries_by_webhook_type", 2 * (perPage + 1)},
		{"agent tests", agentTestList("agt_1"), "tst_000050000", "agent_tests_by_agent", perPage + 1},
		{"test runs", testRunList("agt_1", service.StateSelection{}), "trun_000050000", "test_runs_by_agent", perPage + 1},
		{"finished test runs", testRunList("agt_1", finished), "trun_000050000", "test_runs_by_agent", perPage + 1},
		{"agent versions", versionList("agt_1"), "0000050000", "agent_versions_page", perPage + 1},
		{"recipients", recipientKeyset("cmp_1", service.StateSelection{}), "rcp_000050000", "campaign_recipients_by_campaign", perPage + 1},
		{"a user's workspaces", workspaceList("usr_1"), "ws_000050000", "members_by_user", perPage + 1},
		{"conversations", conversationList("ws_1", data.ConversationFilter{}, nil), "conv_000050000", "conversations_by_workspace", perPage + 1},
		{"ended conversations", conversationList("ws_1", data.ConversationFilter{Status: data.ConversationEnded}, nil), "conv_000050000", "conversations_by_workspace", perPage + 1},
		{"campaigns", campaignPageList("ws_1", data.CampaignFilter{}, nil), "cmp_000050000", "campaigns_by_workspace", perPage + 1},
		{"completed campaigns", campaignPageList("ws_1", data.CampaignFilter{Status: data.CampaignCompleted}, nil), "cmp_000050000", "campaigns_by_status", perPage + 1},
	} {
		checkAgentsPagePlan(t, db, c, perPage)
	}
	checkEventWalkPlans(t, db, perPage)
	checkAgentReadPlans(t, db)
}

// checkAgentReadPlans checks, in the plan as sent and in the generic plan, the reads of
// all of an agent's tests or finished runs (not pages: the publish gate's, a run's, a
// prune's): they read the agent's rows through its index, never the other agents'
// through the primary key. agt_1 has 1,000 of each.
func checkAgentReadPlans(t *testing.T, db *DB) {
	t.Helper()
	for _, s := range []struct {
		name, sql, index string
		args             []any
	}{
		{"AgentTests", agentTestsSQL, "agent_tests_by_agent", []any{"agt_1"}},
		{"FinishedTestRunIDs", finishedTestRunsSQL, "test_runs_by_agent", []any{"agt_1"}},
	} {
		for _, generic := range []bool{false, true} {
			plan := plannedExplain(t, db, generic, func(*tx) (string, []any, error) { return s.sql, s.args, nil })
			checkPlanRows(t, agentsPageCase{name: fmt.Sprintf("%s, generic %t", s.name, generic), index: s.index, maxRows: 1000}, plan, 1000)
		}
	}
}

// checkEventWalkPlans checks, as checkAgentsPagePlan does a keyset's, a batch of a walk of
// a workspace's events (eventWalk: the audit log, the event stream's replay), backward
// from the newest and from the middle, forward from the oldest and from the middle.
func checkEventWalkPlans(t *testing.T, db *DB, batch int) {
	t.Helper()
	for _, generic := range []bool{false, true} {
		for _, from := range []struct {
			forward bool
			seq     int64
		}{{false, maxSeq}, {false, 50000}, {true, 0}, {true, 50000}} {
			plan := plannedExplain(t, db, generic, func(*tx) (string, []any, error) {
				sql, args := (&eventWalk{workspaceID: "ws_1", forward: from.forward, from: from.seq}).query(batch)
				return sql, args, nil
			})
			c := agentsPageCase{name: fmt.Sprintf("events, forward %t from %d, generic %t", from.forward, from.seq, generic),
				index: "events_by_workspace", maxRows: batch}
			checkPlanRows(t, c, plan, batch)
		}
	}
}

// checkScanWalkPlans checks a scan-bounded walk's statements (scanPage): its first page,
// a page older and a page newer than middle and both neighbour checks, under
// walkPlansOn, as sent and generic: each reads index and no step more than maxRows rows.
func checkScanWalkPlans(t *testing.T, db *DB, name string, w scanWalk, middle, index string, maxRows, perPage int) {
	t.Helper()
	type stmt struct {
		sql  string
		args []any
	}
	stmts := []stmt{
		{w.pageSQL(older, false, perPage), w.args("", false)},
		{w.pageSQL(older, true, perPage), w.args(middle, true)},
		{w.pageSQL(newer, true, perPage), w.args(middle, true)},
		{w.neighbourSQL(true), w.args(middle, true)},
		{w.neighbourSQL(false), w.args(middle, true)},
	}
	for _, generic := range []bool{false, true} {
		for i, s := range stmts {
			plan := plannedExplain(t, db, generic, func(x *tx) (string, []any, error) {
				if w.few { // planned freely (scanWalk.query)
					return s.sql, s.args, nil
				}
				_, err := x.exec(walkPlansOn)
				return s.sql, s.args, err
			})
			c := agentsPageCase{name: fmt.Sprintf("%s, statement %d, generic %t", name, i, generic), index: index, maxRows: maxRows}
			checkPlanRows(t, c, plan, perPage)
		}
	}
}
