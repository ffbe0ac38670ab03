package postgres_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
	"github.com/voiceapi/voiceapi/service/storetest"
)

// Migration 0047 gives the events stored before it their chain_time, the latest
// created_at of their workspace's chain up to them, and each chain head its chain_time
// and lag, as appends would have: a window then reads what the plain walk keeps, a clock
// that stepped back before the upgrade too, and events appended after it extend the
// clock the migration set.
func TestMigrationFillsEventChainTimes(t *testing.T) {
	pool := schemaAt(t, 46)
	ctx := context.Background()
	t0 := time.Date(2026, 11, 20, 8, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	clock := []int{0, 4, 2, 2, 9, 1, 10} // steps back twice: lag 8
	for i, ms := range clock {
		for _, ws := range []string{"ws_1", "ws_2"} {
			created := at(ms)
			if ws == "ws_2" {
				created = at(i)
			}
			id := fmt.Sprintf("evt_%03d%s", i, ws[3:])
			if _, err := pool.Exec(ctx, `INSERT INTO events (id, workspace_id, type, created_at, actor_type, actor_user_id, actor_token_id, actor_address, data, prev_hash, hash)
				VALUES ($1, $2, 'agent.updated', $3, 'system', '', 0, '', '{}', '', $4)`, id, ws, created, "h-"+id); err != nil {
				t.Fatal(err)
			}
			if _, err := pool.Exec(ctx, `INSERT INTO event_heads (workspace_id, hash) VALUES ($1, $2)
				ON CONFLICT (workspace_id) DO UPDATE SET hash = excluded.hash`, ws, "h-"+id); err != nil {
				t.Fatal(err)
			}
		}
	}
	got := migratedColumn(t, pool, 47, "(extract(epoch FROM chain_time - '2026-11-20 08:00:00Z') * 1000)::int::text")
	want := map[string]string{}
	for i := range clock {
		want[fmt.Sprintf("evt_%03d1", i)] = fmt.Sprint(slices.Max(clock[:i+1]))
		want[fmt.Sprintf("evt_%03d2", i)] = fmt.Sprint(i)
	}
	for id, w := range want {
		if got[id] != w {
			t.Errorf("%s: chain_time %s ms after the migration; want %s", id, got[id], w)
		}
	}
	var lag string
	if err := pool.QueryRow(ctx, `SELECT lag::text FROM event_heads WHERE workspace_id = 'ws_1'`).Scan(&lag); err != nil || lag != "00:00:00.008" {
		t.Errorf("ws_1's lag %q (%v); want 8 ms", lag, err)
	}
	db := openMigrated(t, pool)
	defer db.Close()
	if err := db.Update(ctx, func(tx service.Tx) error {
		return tx.AppendEvent(&data.Event{ID: "evt_0071", WorkspaceID: "ws_1", Type: data.EventAgentUpdated, CreatedAt: data.NewTime(at(3)), Actor: data.Actor{Type: "system"}, Hash: "h-late"})
	}); err != nil {
		t.Fatal(err)
	}
	var bounds []time.Time
	for ms := -1; ms <= 12; ms++ {
		bounds = append(bounds, at(ms))
	}
	storetest.ExpectWindowsAsTheWalk(t, db, "ws_1", bounds)
}

// BenchmarkMigrationFillsEventChainTimes times the open that applies migration 0047 to a
// database holding 200,000 events of 5 workspaces: the column added and filled by a
// running maximum along each chain, the index built, the heads given their clocks.
// Writing the rows is untimed.
func BenchmarkMigrationFillsEventChainTimes(b *testing.B) {
	ctx := context.Background()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		pool := schemaAt(b, 46)
		if _, err := pool.Exec(ctx, `INSERT INTO events (id, workspace_id, type, created_at, actor_type, actor_user_id, actor_token_id, actor_address, data, prev_hash, hash)
			SELECT 'evt_' || lpad(n::text, 9, '0'), 'ws_' || (n % 5), 'agent.updated', now() + n * interval '1 ms', 'system', '', 0, '',
				json_build_object('id', 'agt_1', 'name', 'Support desk'), '', 'h' || n
			FROM generate_series(1, 200000) n`); err != nil {
			b.Fatal(err)
		}
		if _, err := pool.Exec(ctx, `INSERT INTO event_heads (workspace_id, hash) SELECT 'ws_' || n, 'h' FROM generate_series(0, 4) n`); err != nil {
			b.Fatal(err)
		}
		db := timedMigratedOpen(b, pool)
		db.Close()
	}
}
