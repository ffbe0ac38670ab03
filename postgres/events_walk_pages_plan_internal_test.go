package postgres

import (
	"context"
	"fmt"
	"testing"

	"github.com/voiceapi/voiceapi/service"
)

// TestEventWalksStopAtTheirWorkspace: a walk of every event of a workspace (an audit log
// page without a facet, of a time window too, which keeps what the walk meets; the
// stream's catch-up, EventsAfter; a chain's read; a webhook replay's, EventsNewestFirst;
// a page's neighbour check) reads its workspace's events in events_by_workspace and ends
// its scan where they end, however many events the workspaces beside it in that index
// hold: here 20 of ws_1 among 60,000, ws_0 and ws_2 before and after it with about 20,000
// each (and ws_3); so do the walks of a type's, an actor's or (agent, type) pairs' events. Backward from the newest and from the 10th event, forward from the
// oldest and from the 10th, a batch of a page (16), of a walk (64) and of a neighbour
// check (1), as sent and generic; and the catch-up's read of where it resumes. 3 to 24
// pages a statement, most of them the events' rows (3 for the resumption); a scan run on
// into a neighbour reads a page a row more, or walks events_seq_key past every other
// workspace's events.
func TestEventWalksStopAtTheirWorkspace(t *testing.T) {
	db := openInternal(t)
	var middle int64
	if err := db.Update(context.Background(), func(stx service.Tx) error {
		x := stx.(*tx)
		_, err := x.exec(`
			INSERT INTO events (id, workspace_id, type, created_at, chain_time, actor_type, actor_user_id, actor_token_id, actor_address, data, prev_hash, hash)
				SELECT 'evt_' || lpad(i::text, 9, '0'),
					'ws_' || CASE WHEN i % 3002 = 0 THEN '1' ELSE (ARRAY['0', '2', '3'])[i % 3 + 1] END,
					'agent.created', now(), now(), 'user', 'usr_1', 0, '', '{}', '', 'h' || i
				FROM generate_series(1, 60040) i ORDER BY i;
			ANALYZE events`)
		if err == nil {
			err = x.queryRow(`SELECT seq FROM events WHERE id = 'evt_000030020'`).Scan(&middle) // ws_1's 10th
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	// The facets' and pairs' walks beside other workspaces' events of the same type,
	// actor and (no) agent: their scope pinned, they end where the workspace's end.
	facets := []service.EventFilter{{}, {Type: "agent.created"}, {Actor: "usr_1"},
		{Scopes: []service.EventScope{{Type: "agent.created", AnyAgent: true}}}, {Scopes: []service.EventScope{{Type: "agent.created"}}}}
	for _, generic := range []bool{false, true} {
		for _, batch := range []int{1, 16, 64} {
			for _, f := range facets {
				for _, w := range []eventWalk{
					{workspaceID: "ws_1", from: maxSeq}, {workspaceID: "ws_1", from: middle},
					{workspaceID: "ws_1", forward: true}, {workspaceID: "ws_1", forward: true, from: middle},
				} {
					w.facet = facetOf(f)
					plan := plannedExplain(t, db, generic, func(*tx) (string, []any, error) {
						sql, args := w.query(batch)
						return sql, args, nil
					})
					checkPlanPages(t, fmt.Sprintf("%+v forward %v from %d, a batch of %d (generic %v)", f, w.forward, w.from, batch, generic), plan, 30)
				}
			}
		}
		plan := plannedExplain(t, db, generic, func(*tx) (string, []any, error) {
			return eventsAfterSeqSQL, []any{"ws_1", "evt_000030020"}, nil
		})
		checkPlanPages(t, fmt.Sprintf("the catch-up's resumption (generic %v)", generic), plan, 8)
	}
}
