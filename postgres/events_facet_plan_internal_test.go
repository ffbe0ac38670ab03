package postgres

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/service"
)

// TestEventPagesSeekTheirFacet: an audit page filtered by type or by actor reads its
// batch of that facet's events from events_by_type or events_by_actor (migration 0039),
// in the plan as sent and in the generic plan the server keeps for a prepared statement,
// however many events of other types and users lie among them. It read
// events_by_workspace and passed over the others one by one: about 25,600 rows for a
// batch of 256 events of a type that one event in a hundred has.
func TestEventPagesSeekTheirFacet(t *testing.T) {
	db := openInternal(t)
	if err := db.Update(context.Background(), func(stx service.Tx) error {
		_, err := stx.(*tx).exec(`
			INSERT INTO events (id, workspace_id, type, created_at, actor_type, actor_user_id, actor_token_id, actor_address, data, prev_hash, hash)
				SELECT 'evt_' || lpad(i::text, 9, '0'), 'ws_' || (i % 2), CASE WHEN i % 100 < 2 THEN 'agent.deleted' ELSE 'agent.updated' END,
					now(), CASE WHEN i % 7 = 0 THEN 'system' ELSE 'user' END,
					CASE WHEN i % 7 = 0 THEN '' WHEN i % 100 BETWEEN 2 AND 3 THEN 'usr_quiet' ELSE 'usr_busy' END, 0, '', '{}', '', 'h' || i
				FROM generate_series(1, 200000) i;
			ANALYZE events`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	const batch = 256
	for _, c := range []struct {
		name  string
		f     service.EventFilter
		index string
	}{
		{"a rare type", service.EventFilter{Type: "agent.deleted"}, "events_by_type"},
		{"a quiet user", service.EventFilter{Actor: "usr_quiet"}, "events_by_actor"},
		{"both", service.EventFilter{Type: "agent.deleted", Actor: "usr_quiet"}, "events_by_actor"},
		{"no facet", service.EventFilter{}, "events_by_workspace"},
	} {
		for _, generic := range []bool{false, true} {
			for _, w := range []eventWalk{
				{workspaceID: "ws_1", from: maxSeq, facet: facetOf(c.f)},
				{workspaceID: "ws_1", from: 100000, facet: facetOf(c.f)},
				{workspaceID: "ws_1", from: 100000, forward: true, facet: facetOf(c.f)},
			} {
				plan := plannedExplain(t, db, generic, func(*tx) (string, []any, error) {
					sql, args := w.query(batch)
					return sql, args, nil
				})
				if !strings.Contains(plan, c.index) {
					t.Errorf("%s (generic %v): the plan reads no %s:\n%s", c.name, generic, c.index, plan)
				}
				for _, m := range regexp.MustCompile(`(?:actual rows|Rows Removed by Filter:)[= ](\d+)`).FindAllStringSubmatch(plan, -1) {
					if n, _ := strconv.Atoi(m[1]); n > batch {
						t.Errorf("%s (generic %v): a step read %d rows for a batch of %d:\n%s", c.name, generic, n, batch, plan)
						break
					}
				}
			}
		}
	}
}
