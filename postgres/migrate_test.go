package postgres_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/voiceapi/voiceapi/internal/pgtest"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/postgres"
)

// Ten replicas starting together on an empty database migrate it once: the advisory
// lock makes the others wait, then find nothing to do.
func TestMigrateOnceUnderConcurrentStarts(t *testing.T) {
	url := pgtest.Database(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	applied := make([][]int, 10)
	errs := make([]error, 10)
	for i := range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pool, err := pgxpool.New(ctx, url)
			if err != nil {
				errs[i] = err
				return
			}
			defer pool.Close()
			applied[i], errs[i] = postgres.Migrate(ctx, pool)
		}()
	}
	wg.Wait()
	all, err := postgres.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for i := range 10 {
		if errs[i] != nil {
			t.Fatalf("replica %d: %v", i, errs[i])
		}
		total += len(applied[i])
	}
	if total != len(all) {
		t.Errorf("%d migrations applied across the replicas, want each of the %d once", total, len(all))
	}
	pool, _ := pgxpool.New(ctx, url)
	defer pool.Close()
	var rows int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM schema_migrations`).Scan(&rows); err != nil || rows != len(all) {
		t.Errorf("schema_migrations has %d rows (%v), want %d", rows, err, len(all))
	}
}

// A replica with another secret key refuses to start, naming the cause.
func TestOpenRefusesAnotherSecretKey(t *testing.T) {
	url := pgtest.Database(t)
	first := testkit.OpenPostgres(t, func(o *postgres.Options) { o.URL = url })
	_ = first
	other := make([]byte, 32)
	other[0] = 1
	_, err := postgres.Open(context.Background(), postgres.Options{URL: url, SecretKey: other})
	if !errors.Is(err, postgres.ErrKeyMismatch) {
		t.Fatalf("open with another key: %v, want ErrKeyMismatch", err)
	}
	// The same key opens.
	db, err := postgres.Open(context.Background(), postgres.Options{URL: url, SecretKey: testkit.SecretKey})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
}

// NoMigrate refuses a database behind the binary instead of changing it, naming the first
// missing migration as its file is named (it said "1_core" for 0001_core.sql) and what to run.
func TestNoMigrateRefusesAnOldSchema(t *testing.T) {
	url := pgtest.Database(t)
	_, err := postgres.Open(context.Background(), postgres.Options{URL: url, SecretKey: testkit.SecretKey, NoMigrate: true})
	if err == nil || !strings.Contains(err.Error(), "schema version 0 and lacks 0001_core, which this voiceapi needs") || !strings.HasSuffix(err.Error(), "run `voiceapi migrate`") {
		t.Fatalf("opened an empty database without migrating it, or said so unclearly: %v", err)
	}
}

// TestOpenLogsTheMigration: the open that applies migrations (an upgraded replica's start)
// logs which, once; an open with none to apply says nothing of it. docs/upgrading.md has
// the operator watch the log for it.
func TestOpenLogsTheMigration(t *testing.T) {
	url := pgtest.Database(t)
	open := func() string {
		var logs bytes.Buffer
		db, err := postgres.Open(context.Background(), postgres.Options{URL: url, SecretKey: testkit.SecretKey, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		if err != nil {
			t.Fatal(err)
		}
		db.Close()
		return logs.String()
	}
	if logs := open(); !strings.Contains(logs, "msg=\"migrated the database to this voiceapi's schema\" applied=\"[1 2 3") {
		t.Errorf("the migrating open logged %q", logs)
	}
	if logs := open(); strings.Contains(logs, "migrated") {
		t.Errorf("an open with nothing to apply logged %q", logs)
	}
}
