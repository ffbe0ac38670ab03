package postgres

import (
	"context"
	"regexp"
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
			INSERT INTO events (id, workspace_id, type, created_at, actor_type, actor_user_id, actor_token_id, actor_address, data, prev_hash, hash, agent_id, kind)
				SELECT 'evt_' || lpad(i::text, 9, '0'), 'ws_' || (i % 2), CASE WHEN i % 20 < 9 THEN 'call.ended' ELSE 'job.failed' END,
					now(), 'system', '', 0, '', '{}', '', 'h' || i, 'agt_' || (i / 20 % 5),
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
