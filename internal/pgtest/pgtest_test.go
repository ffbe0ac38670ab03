package pgtest_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/voiceapi/voiceapi/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// Each test gets its own empty database on a real server, and can write to it.
func TestDatabase(t *testing.T) {
	ctx := context.Background()
	a, b := pgtest.Database(t), pgtest.Database(t)
	if a == b {
		t.Fatalf("two tests share database %s", a)
	}
	conn, err := pgx.Connect(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var version string
	if err := conn.QueryRow(ctx, "SELECT version()").Scan(&version); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(version, "PostgreSQL ") {
		t.Errorf("version() = %q", version)
	}
	if _, err := conn.Exec(ctx, "CREATE TABLE t (id int primary key)"); err != nil {
		t.Fatal(err)
	}
}
