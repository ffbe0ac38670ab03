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
// reads each (agent, type) pair's batch from events_by_agent (migration 0043), in the plan
// as sent and in the generic plan, and no step reads more than a batch a pair: the
// events of the other nine agents among them are never read.
func TestEventPagesOfSomeAgentsSeekTheirPairs(t *testing.T) {
	db := openInternal(t)
	if err := db.Update(context.Background(), func(stx service.Tx) error {
		_, err := stx.(*tx).exec(`
			INSERT INTO events (id, workspace_id, type, created_at, actor_type, actor_user_id, actor_token_id, actor_address, data, prev_hash, hash, agent_id)
				SELECT 'evt_' || lpad(i::text, 9, '0'), 'ws_' || (i % 2), CASE WHEN i % 3 = 0 THEN 'call.ended' ELSE 'agent.updated' END,
					now(), 'system', '', 0, '', '{}', '', 'h' || i, 'agt_' || (i / 2 % 10)
				FROM generate_series(1, 200000) i;
			ANALYZE events`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	const batch = 256
	scopes := []service.EventScope{{Agent: "agt_3", Type: "call.ended"}, {Agent: "agt_3", Type: "agent.updated"}, {Agent: "", Type: "knowledge_base.created"}}
	facet := facetOf(service.EventFilter{Scopes: scopes})
	for _, generic := range []bool{false, true} {
		for _, w := range []eventWalk{
			{workspaceID: "ws_1", from: maxSeq, facet: facet},
			{workspaceID: "ws_1", from: 100000, facet: facet},
			{workspaceID: "ws_1", from: 100000, forward: true, facet: facet},
		} {
			plan := plannedExplain(t, db, generic, func(*tx) (string, []any, error) {
				sql, args := w.query(batch)
				return sql, args, nil
			})
			if !strings.Contains(plan, "events_by_agent") {
				t.Errorf("generic %v: the plan reads no events_by_agent:\n%s", generic, plan)
			}
			for _, m := range regexp.MustCompile(`(?:actual rows|Rows Removed by Filter:)[= ](\d+)`).FindAllStringSubmatch(plan, -1) {
				if n, _ := strconv.Atoi(m[1]); n > batch*len(scopes) {
					t.Errorf("generic %v: a step read %d rows for a batch of %d of %d pairs:\n%s", generic, n, batch, len(scopes), plan)
					break
				}
			}
		}
	}
}
