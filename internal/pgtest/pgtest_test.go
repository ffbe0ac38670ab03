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

// DatabaseFrom prepares its template once and gives each test its own copy of it: what
// prepare wrote is in every copy, and what a test writes to its copy is in no other.
func TestDatabaseFrom(t *testing.T) {
	ctx := context.Background()
	prepared := 0
	prepare := func(url string) error {
		prepared++
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			return err
		}
		defer conn.Close(ctx)
		_, err = conn.Exec(ctx, "CREATE TABLE t (id int primary key); INSERT INTO t VALUES (1)")
		return err
	}
	a, b := pgtest.DatabaseFrom(t, "one_row", prepare), pgtest.DatabaseFrom(t, "one_row", prepare)
	if a == b {
		t.Fatalf("two copies share database %s", a)
	}
	if prepared != 1 {
		t.Errorf("the template was prepared %d times, want once", prepared)
	}
	for i, url := range []string{a, b} {
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		var n int
		if err := conn.QueryRow(ctx, "SELECT count(*) FROM t").Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 1 {
			t.Errorf("copy %d holds %d rows, want the template's 1", i, n)
		}
		if _, err := conn.Exec(ctx, "INSERT INTO t VALUES (2)"); err != nil {
			t.Fatal(err)
		}
		conn.Close(ctx)
	}
}
