package postgres

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/voiceapi/voiceapi/internal/pgtest"
)

// The bound's count of open conversations reads the index conversations_open (migration
// 0023), not every conversation of the workspace.
func TestOpenConversationsReadTheirIndex(t *testing.T) {
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
	now := time.Now()
	rows, err := conn.Query(ctx, `EXPLAIN `+openConversationsSQL, "ws_1", now.Add(-30*time.Minute), now, 100)
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
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(plan, "\n"), "conversations_open") {
		t.Errorf("the count of open conversations does not read conversations_open:\n%s", strings.Join(plan, "\n"))
	}
}
