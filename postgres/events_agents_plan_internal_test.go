package postgres

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/service"
)

// TestEventPagesOfSomeAgentsSeekTheirPairs: a page of a caller limited to some agents
// reads each (agent, type) pair's batch from events_by_agent_kind (migrations 0043, 0044), in the plan
// as sent and in the generic plan, and no step reads more than a batch a pair: the
// events of the other nine agents among them are never read.
func TestEventPagesOfSomeAgentsSeekTheirPairs(t *testing.T) {
	db := openInternal(t)
	if err := db.Update(context.Background(), func(stx service.Tx) error {
		_, err := stx.(*tx).exec(`
			INSERT INTO events (id, workspace_id, type, created_at, chain_time, actor_type, actor_user_id, actor_token_id, actor_address, data, prev_hash, hash, agent_id)
				SELECT 'evt_' || lpad(i::text, 9, '0'), 'ws_' || (i % 2), CASE WHEN i % 3 = 0 THEN 'call.ended' ELSE 'agent.updated' END,
					now(), now(), 'system', '', 0, '', '{}', '', 'h' || i, 'agt_' || (i / 2 % 10)
				FROM generate_series(1, 200000) i;
			ANALYZE events`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	const batch = 256
	scopes := []service.EventScope{{Agent: "agt_3", Type: "call.ended"}, {Agent: "agt_3", Type: "agent.updated"}, {Agent: "", Type: "knowledge_base.created"}}
	eachPagePlan(t, db, facetOf(service.EventFilter{Scopes: scopes}), batch, 100000, func(generic bool, plan string) {
		if !strings.Contains(plan, "events_by_agent") {
			t.Errorf("generic %v: the plan reads no events_by_agent:\n%s", generic, plan)
		}
		if n := mostRows(plan, `(?:actual rows|Rows Removed by Filter:)[= ](\d+)`); n > batch*len(scopes) {
			t.Errorf("generic %v: a step read %d rows for a batch of %d of %d pairs:\n%s", generic, n, batch, len(scopes), plan)
		}
	})
}

// eachPagePlan explains a page of batch events of facet in ws_1, newest first from the
// top and both ways from seq from, as sent and as the generic plan, and hands check each.
func eachPagePlan(t *testing.T, db *DB, facet eventFacet, batch int, from int64, check func(generic bool, plan string)) {
	t.Helper()
	for _, generic := range []bool{false, true} {
		for _, w := range []eventWalk{
			{workspaceID: "ws_1", from: maxSeq, facet: facet},
			{workspaceID: "ws_1", from: from, facet: facet},
			{workspaceID: "ws_1", from: from, forward: true, facet: facet},
		} {
			check(generic, plannedExplain(t, db, generic, func(*tx) (string, []any, error) {
				sql, args := w.query(batch)
				return sql, args, nil
			}))
		}
	}
}

// mostRows is the largest count in plan that pattern's group captures (a step's rows).
func mostRows(plan, pattern string) int {
	most := 0
	for _, m := range regexp.MustCompile(pattern).FindAllStringSubmatch(plan, -1) {
		if n, _ := strconv.Atoi(m[1]); n > most {
			most = n
		}
	}
	return most
}

// TestEventPagesOfSomeTypesSeekTheirTypes: a page of a caller who sees every agent but
// not every type (pairs of any agent) reads its types' events from events_by_type, in the
// plan as sent and in the generic plan: the call events it may not read, 9 in 10 of the
// log, are never read (no step filters rows out, none walks events_seq_key), nor are the
// arms of the pairs of one agent or of a kind run. Where the planner expects few rows of a type it may
// read them by a bitmap and sort them: still its types' rows alone.
func TestEventPagesOfSomeTypesSeekTheirTypes(t *testing.T) {
	db := openInternal(t)
	if err := db.Update(context.Background(), func(stx service.Tx) error {
		_, err := stx.(*tx).exec(`
			INSERT INTO events (id, workspace_id, type, created_at, chain_time, actor_type, actor_user_id, actor_token_id, actor_address, data, prev_hash, hash, agent_id)
				SELECT 'evt_' || lpad(i::text, 9, '0'), 'ws_' || (i % 2),
					CASE WHEN i % 100 < 5 THEN 'agent.updated' WHEN i % 100 < 10 THEN 'user.login' ELSE 'call.ended' END,
					now(), now(), 'system', '', 0, '', '{}', '', 'h' || i, 'agt_' || (i / 2 % 10)
				FROM generate_series(1, 200000) i;
			ANALYZE events`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	const batch, ofAType = 256, 5000 // ofAType: ws_1's events of a readable type
	scopes := []service.EventScope{{Type: "agent.updated", AnyAgent: true}, {Type: "user.login", AnyAgent: true}, {Type: "knowledge_base.created", AnyAgent: true}}
	eachPagePlan(t, db, facetOf(service.EventFilter{Scopes: scopes}), batch, 100000, func(generic bool, plan string) {
		if !strings.Contains(plan, "events_by_type") || strings.Contains(plan, "events_seq_key") || strings.Contains(plan, "Rows Removed by Filter") {
			t.Errorf("generic %v: the plan reads rows of other types:\n%s", generic, plan)
		}
		if !regexp.MustCompile(`events_by_agent_kind on events \(never executed\)`).MatchString(plan) {
			t.Errorf("generic %v: the arm of one agent's pairs ran:\n%s", generic, plan)
		}
		if !regexp.MustCompile(`events_by_type_kind on events events_\d \(never executed\)`).MatchString(plan) {
			t.Errorf("generic %v: the arm of a kind's pairs ran:\n%s", generic, plan)
		}
		if n := mostRows(plan, `actual rows=(\d+)`); n > ofAType {
			t.Errorf("generic %v: a step read %d rows, more than a type has:\n%s", generic, n, plan)
		}
	})
}
