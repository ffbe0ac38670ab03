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
			INSERT INTO events (id, workspace_id, type, created_at, chain_time, actor_type, actor_user_id, actor_token_id, actor_address, data, prev_hash, hash)
				SELECT 'evt_' || lpad(i::text, 9, '0'), 'ws_' || (i % 2), CASE WHEN i % 100 < 2 THEN 'agent.deleted' ELSE 'agent.updated' END,
					now(), now(), CASE WHEN i % 7 = 0 THEN 'system' ELSE 'user' END,
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

// TestEventPagesOfAFacetStopAtIt: a page of a type or of an actor with fewer events than
// a batch, past 20,000 of another type or actor before it in the index, is an Index Scan
// of the facet's index that ends where the facet's events do, in the plan as sent and in
// the generic plan (pages read, as TestEventPagesOfSomeKindsStopAtTheirScope counts
// them). With the workspace compared as a range alone the scan read on through the other
// type's or actor's entries to the workspace's end.
func TestEventPagesOfAFacetStopAtIt(t *testing.T) {
	db := openInternal(t)
	if err := db.Update(context.Background(), func(stx service.Tx) error {
		_, err := stx.(*tx).exec(`
			INSERT INTO events (id, workspace_id, type, created_at, chain_time, actor_type, actor_user_id, actor_token_id, actor_address, data, prev_hash, hash)
				SELECT 'evt_' || lpad(i::text, 9, '0'), 'ws_1', CASE WHEN i % 2000 = 0 THEN 'agent.deleted' ELSE 'agent.created' END,
					now(), now(), 'user', CASE WHEN i % 2000 = 0 THEN 'usr_quiet' ELSE 'usr_busy' END, 0, '', '{}', '', 'h' || i
				FROM generate_series(1, 20000) i;
			ANALYZE events`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	const batch, pagesPast = 16, 8
	for _, f := range []service.EventFilter{{Type: "agent.deleted"}, {Actor: "usr_quiet"}} {
		for _, generic := range []bool{false, true} {
			for _, w := range []eventWalk{
				{workspaceID: "ws_1", from: maxSeq, facet: facetOf(f)},
				{workspaceID: "ws_1", from: 10000, facet: facetOf(f)},
			} {
				plan := plannedExplain(t, db, generic, func(*tx) (string, []any, error) {
					sql, args := w.query(batch)
					return sql, args, nil
				})
				m := regexp.MustCompile(`Index Scan Backward using events_by_(?:type|actor) on events \(actual rows=(\d+) loops=1\)[\s\S]*?Buffers: shared hit=(\d+)`).FindStringSubmatch(plan)
				if m == nil {
					t.Errorf("%+v, generic %v: the plan is no Index Scan of the facet's index:\n%s", f, generic, plan)
					continue
				}
				if hits, _ := strconv.Atoi(m[2]); hits > batch+pagesPast {
					t.Errorf("%+v, generic %v: the scan read %d pages for %s events:\n%s", f, generic, hits, m[1], plan)
				}
			}
		}
	}
}
