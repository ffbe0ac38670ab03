package postgres_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/crypto/bcrypt"

	"github.com/voiceapi/voiceapi/internal/pgtest"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/postgres"
)

// schemaAt opens a new database with the schema as version left it, applied as Migrate
// applies it (each migration recorded in schema_migrations), so that a migration's test
// can write the rows the older code wrote before it migrates the rest.
func schemaAt(t testing.TB, version int) *pgxpool.Pool {
	t.Helper()
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, pgtest.Database(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	all, err := postgres.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		t.Fatal(err)
	}
	for _, m := range all {
		if m.Version > version {
			break
		}
		if _, err := pool.Exec(ctx, m.SQL); err != nil {
			t.Fatalf("migration %d: %v", m.Version, err)
		}
		if m.Backfill != nil {
			if err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error { return m.Backfill(ctx, tx) }); err != nil {
				t.Fatalf("migration %d's backfill: %v", m.Version, err)
			}
		}
		if _, err := pool.Exec(ctx, `INSERT INTO schema_migrations (version, name) VALUES ($1, $2)`, m.Version, m.Name); err != nil {
			t.Fatal(err)
		}
	}
	return pool
}

// openMigrated opens the store on pool's database as the server does, which applies the
// migrations after the one the database is at. The caller closes it (a migration's test
// reopens it to see what a restart does).
func openMigrated(t testing.TB, pool *pgxpool.Pool) *postgres.DB {
	t.Helper()
	db, err := postgres.Open(context.Background(), postgres.Options{URL: pool.Config().ConnString(), PasswordCost: bcrypt.MinCost, SecretKey: testkit.SecretKey})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// timedMigratedOpen is a migration benchmark's timed part: the open that migrates pool's
// rows, after an untimed ANALYZE, so the migration plans its statements on the statistics
// an upgraded database has.
func timedMigratedOpen(b *testing.B, pool *pgxpool.Pool) *postgres.DB {
	if _, err := pool.Exec(context.Background(), `ANALYZE`); err != nil {
		b.Fatal(err)
	}
	b.StartTimer()
	db := openMigrated(b, pool)
	b.StopTimer()
	return db
}
