package postgres

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/voiceapi/voiceapi/internal/pgtest"
)

// The claims' query of the open campaigns names campaignOpen as the index campaigns_open
// is written (migration 0022), so the planner can read the index instead of every
// campaign of the workspace.
func TestOpenCampaignsReadTheirIndex(t *testing.T) {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, pgtest.Database(t))
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if _, err := Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SET enable_seqscan = off`); err != nil {
		t.Fatal(err)
	}
	rows, err := conn.Query(ctx, `EXPLAIN SELECT body, last_claim_at FROM campaigns WHERE workspace_id = 'ws_1' AND `+campaignOpen)
	if err != nil {
		t.Fatal(err)
	}
	var plan []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, line)
	}
	if !strings.Contains(strings.Join(plan, "\n"), "campaigns_open") {
		t.Errorf("the open campaigns' query does not read campaigns_open:\n%s", strings.Join(plan, "\n"))
	}
}
