package postgres_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/postgres"
)

// Migration 0017 counts the suppression lists written before counts were kept, each
// workspace's on its own; the bound's check then reads these counts.
func TestMigrationCountsSuppressionLists(t *testing.T) {
	pool := schemaAt(t, 16)
	ctx := context.Background()
	for ws, n := range map[string]int{"ws_1": 3, "ws_2": 1} {
		for i := range n {
			if _, err := pool.Exec(ctx, `INSERT INTO suppressions (id, workspace_id, phone_number, created_at) VALUES ($1, $2, $3, $4)`,
				fmt.Sprintf("sup_%s_%d", ws, i), ws, fmt.Sprintf("+1415555%04d", i), time.Now()); err != nil {
				t.Fatal(err)
			}
		}
	}
	if applied, err := postgres.Migrate(ctx, pool); err != nil || !slices.Contains(applied, 17) {
		t.Fatalf("migrate: applied %v, %v", applied, err)
	}
	counts := map[string]int64{}
	rows, err := pool.Query(ctx, `SELECT workspace_id, n FROM suppression_counts`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var ws string
		var n int64
		if err := rows.Scan(&ws, &n); err != nil {
			t.Fatal(err)
		}
		counts[ws] = n
	}
	if len(counts) != 2 || counts["ws_1"] != 3 || counts["ws_2"] != 1 {
		t.Fatalf("counts after the migration: %v, want ws_1 3 and ws_2 1", counts)
	}
}
