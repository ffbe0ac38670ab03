package postgres

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/service"
)

// TestEventWindowsSeekTheirBounds: the statement that finds a time window's seqs
// (eventWindowSQL) seeks each bound in events_by_chain_time, as sent and generic, and
// reads a few pages (4 a bound, and the head's) whatever the events of its workspace and of the workspaces beside it:
// here ws_1's 20 events among 60,040 (ws_0, ws_2 and ws_3 about 20,000 each), windows
// before, at the start, in the middle, at the end and after ws_1's events, and open at
// either end.
func TestEventWindowsSeekTheirBounds(t *testing.T) {
	db := openInternal(t)
	if err := db.Update(context.Background(), func(stx service.Tx) error {
		_, err := stx.(*tx).exec(`
			INSERT INTO events (id, workspace_id, type, created_at, chain_time, actor_type, actor_user_id, actor_token_id, actor_address, data, prev_hash, hash)
				SELECT 'evt_' || lpad(i::text, 9, '0'),
					'ws_' || CASE WHEN i % 3002 = 0 THEN '1' ELSE (ARRAY['0', '2', '3'])[i % 3 + 1] END,
					'agent.created', '2026-11-20 08:00:00Z'::timestamptz + i * interval '1 ms', '2026-11-20 08:00:00Z'::timestamptz + i * interval '1 ms',
					'user', 'usr_1', 0, '', '{}', '', 'h' || i
				FROM generate_series(1, 60040) i ORDER BY i;
			INSERT INTO event_heads (workspace_id, hash, chain_time, lag)
				SELECT 'ws_' || n, 'h', '2026-11-20 08:01:00.04Z', interval '2 ms' FROM generate_series(0, 3) n;
			ANALYZE events; ANALYZE event_heads`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 11, 20, 8, 0, 0, 0, time.UTC)
	at := func(ms int) string {
		return t0.Add(time.Duration(ms) * time.Millisecond).Format("2006-01-02 15:04:05.000Z")
	}
	windows := [][2]any{
		{at(0), at(1000)}, {at(0), at(3002)}, {at(3002), at(6005)}, {at(27000), at(36000)}, {at(57038), at(60040)},
		{at(60041), at(70000)}, {nil, at(9006)}, {at(30020), nil},
	}
	for _, generic := range []bool{false, true} {
		for _, w := range windows {
			plan := plannedExplain(t, db, generic, func(*tx) (string, []any, error) {
				return eventWindowSQL, []any{"ws_1", w[0], w[1]}, nil
			})
			name := fmt.Sprintf("[%v, %v) (generic %v)", w[0], w[1], generic)
			bounds := 0 // a NULL bound, as sent, is planned as no row
			for _, b := range w {
				if b != nil || generic {
					bounds++
				}
			}
			if strings.Count(plan, "events_by_chain_time") < bounds {
				t.Errorf("%s: the bounds are not sought in events_by_chain_time:\n%s", name, plan)
			}
			checkPlanPages(t, name, plan, 12) // 4 pages a bound, and the head's
		}
	}
}
