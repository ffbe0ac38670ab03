package postgres

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/service"
)

// TestEventPagesOfSomeKindsSeekTheirKinds: a page of a caller who reads some job kinds
// reads its kinds' job.failed events from events_by_agent_kind (its agents' pairs) or
// events_by_type_kind (every agent), migration 0044, in the plan as sent and in the
// generic plan: the failures of the kind it may not read, 4 in 5 of the failures (and
// other agents' of its kinds), are never read (no step filters rows out, none walks
// events_seq_key, the other arms never run), and no step reads more than a batch a pair.
func TestEventPagesOfSomeKindsSeekTheirKinds(t *testing.T) {
	db := openInternal(t)
	if err := db.Update(context.Background(), func(stx service.Tx) error {
		_, err := stx.(*tx).exec(`
			INSERT INTO events (id, workspace_id, type, created_at, chain_time, actor_type, actor_user_id, actor_token_id, actor_address, data, prev_hash, hash, agent_id, kind)
				SELECT 'evt_' || lpad(i::text, 9, '0'), 'ws_' || (i % 2), CASE WHEN i % 20 < 9 THEN 'call.ended' ELSE 'job.failed' END,
					now(), now(), 'system', '', 0, '', '{}', '', 'h' || i, 'agt_' || (i / 20 % 5),
					CASE WHEN i % 20 < 9 THEN '' WHEN i % 20 = 11 THEN 'run' WHEN i % 20 = 13 THEN 'embed' ELSE 'dial' END
				FROM generate_series(1, 20000) i;
			ANALYZE events`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	const batch = 64
	for _, c := range []struct {
		index  string
		scopes []service.EventScope
	}{
		{"events_by_agent_kind", []service.EventScope{{Agent: "agt_3", Type: "job.failed", Kind: "run"}, {Agent: "agt_3", Type: "job.failed", Kind: "embed"}, {Type: "job.failed", Kind: "embed"}}},
		{"events_by_type_kind", []service.EventScope{{Type: "job.failed", Kind: "run", AnyAgent: true}, {Type: "job.failed", Kind: "embed", AnyAgent: true}}},
	} {
		eachPagePlan(t, db, facetOf(service.EventFilter{Scopes: c.scopes}), batch, 10000, func(generic bool, plan string) {
			if !strings.Contains(plan, c.index+" on events") || strings.Contains(plan, "events_seq_key") || strings.Contains(plan, "Rows Removed by Filter") {
				t.Errorf("%s, generic %v: the plan reads rows of other kinds:\n%s", c.index, generic, plan)
			}
			for _, other := range []string{"events_by_agent_kind", "events_by_type", "events_by_type_kind"} {
				if other != c.index && regexp.MustCompile(other+` on events( events_\d)? \(actual`).MatchString(plan) {
					t.Errorf("%s, generic %v: the arm of %s ran:\n%s", c.index, generic, other, plan)
				}
			}
			if n := mostRows(plan, `actual rows=(\d+)`); n > batch*len(c.scopes) {
				t.Errorf("%s, generic %v: a step read %d rows for a batch of %d of %d pairs:\n%s", c.index, generic, n, batch, len(c.scopes), plan)
			}
		})
	}
}

// TestEventPagesOfSomeKindsStopAtTheirScope: past 20,000 failures of a job kind the caller
// may not read (of three agents, one its own), each arm that runs is an Index Scan that
// ends where its pair's events do, in the plan as sent and in the generic plan. EXPLAIN
// counts no index entries a scan passes over, only their pages: each scan reads no more
// than a few pages a pair beyond its rows. When a pair's type or agent was compared as a
// range, the scan of a kind with fewer events than the batch read on through every other
// kind's (about 260 pages a pair here), as BenchmarkEventPageOfSomeKinds shows in time.
func TestEventPagesOfSomeKindsStopAtTheirScope(t *testing.T) {
	db := openInternal(t)
	if err := db.Update(context.Background(), func(stx service.Tx) error {
		_, err := stx.(*tx).exec(`
			INSERT INTO events (id, workspace_id, type, created_at, chain_time, actor_type, actor_user_id, actor_token_id, actor_address, data, prev_hash, hash, agent_id, kind)
				SELECT 'evt_a' || lpad(i::text, 9, '0'), 'ws_1', (ARRAY['job.failed', 'knowledge_base.created', 'api_key.created'])[i % 3 + 1],
					now(), now(), 'system', '', 0, '', '{}', '', 'h' || i, CASE WHEN i % 2 = 0 THEN 'agt_1' ELSE '' END,
					CASE WHEN i % 3 = 0 THEN (ARRAY['knowledge_base.embed', 'knowledge_base.fetch_url'])[i % 2 + 1] ELSE '' END
				FROM generate_series(1, 40) i;
			INSERT INTO events (id, workspace_id, type, created_at, chain_time, actor_type, actor_user_id, actor_token_id, actor_address, data, prev_hash, hash, agent_id, kind)
				SELECT 'evt_b' || lpad(i::text, 9, '0'), 'ws_1', 'job.failed', now(), now(), 'system', '', 0, '', '{}', '', 'h' || i, 'agt_' || (i % 3), 'agent.test_run'
				FROM generate_series(1, 20000) i;
			ANALYZE events`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	const batch, pagesPast = 16, 8 // pagesPast: a scan's descent and its last leaf, with room
	embed, fetch := "knowledge_base.embed", "knowledge_base.fetch_url"
	for _, c := range []struct {
		name   string
		scopes []service.EventScope
	}{
		{"every agent", []service.EventScope{{Type: "knowledge_base.created", AnyAgent: true}, {Type: "api_key.created", AnyAgent: true},
			{Type: "job.failed", Kind: embed, AnyAgent: true}, {Type: "job.failed", Kind: fetch, AnyAgent: true}}},
		{"agt_1", []service.EventScope{{Type: "knowledge_base.created"}, {Agent: "agt_1", Type: "agent.updated"},
			{Type: "job.failed", Kind: embed}, {Agent: "agt_1", Type: "job.failed", Kind: embed},
			{Type: "job.failed", Kind: fetch}, {Agent: "agt_1", Type: "job.failed", Kind: fetch}}},
	} {
		eachPagePlan(t, db, facetOf(service.EventFilter{Scopes: c.scopes}), batch, 10040, func(generic bool, plan string) {
			ran := 0
			for _, step := range planSteps(plan) {
				if strings.Contains(step, "never executed") || !strings.Contains(step, " on events") {
					continue
				}
				ran++
				m := regexp.MustCompile(`^\s*(?:->\s*)?Index Scan(?: Backward)? using events_by_\w+ on events.*loops=(\d+)\)[\s\S]*Buffers: shared hit=(\d+)`).FindStringSubmatch(step)
				if m == nil {
					t.Errorf("%s, generic %v: a step is no Index Scan of a pair's index:\n%s\n%s", c.name, generic, step, plan)
					continue
				}
				loops, _ := strconv.Atoi(m[1])
				if hits, _ := strconv.Atoi(m[2]); hits > loops*(batch+pagesPast) {
					t.Errorf("%s, generic %v: a scan read %d pages in %d loops, past its pairs' events:\n%s", c.name, generic, hits, loops, plan)
				}
			}
			if ran == 0 {
				t.Errorf("%s, generic %v: no scan of events ran:\n%s", c.name, generic, plan)
			}
		})
	}
}

// planSteps splits an EXPLAIN's text into its steps, each with the lines under it up to
// the next step, leaving out the planning's lines.
func planSteps(plan string) []string {
	plan, _, _ = strings.Cut(plan, "\nPlanning")
	var steps []string
	for _, line := range strings.Split(plan, "\n") {
		if len(steps) == 0 || strings.Contains(line, "->") {
			steps = append(steps, line)
			continue
		}
		steps[len(steps)-1] += "\n" + line
	}
	return steps
}
