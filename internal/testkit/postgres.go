package testkit

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/crypto/bcrypt"

	"github.com/voiceapi/voiceapi/cli"
	"github.com/voiceapi/voiceapi/internal/pgtest"
	"github.com/voiceapi/voiceapi/postgres"
	"github.com/voiceapi/voiceapi/service"
)

// OpenPostgres opens the PostgreSQL engine on a new database of the package's throw-away
// cluster (the package's TestMain runs pgtest.Main), bcrypt at its lowest cost; tune (may
// be nil) adjusts the options. The database is dropped when the test ends.
func OpenPostgres(t testing.TB, tune func(*postgres.Options)) *postgres.DB {
	t.Helper()
	opts := postgres.Options{PasswordCost: bcrypt.MinCost, SecretKey: SecretKey}
	if tune != nil {
		tune(&opts)
	}
	if opts.URL == "" { // tune names no database of its own
		opts.URL = MigratedDatabase(t)
	}
	db, err := postgres.Open(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// MigratedDatabase returns the URL of a new database of the package's throw-away cluster
// with every migration applied: a copy of one database migrated once per test process
// (pgtest.DatabaseFrom), for the tests that open the engine on it. A test of a migration
// or of an open that migrates starts from pgtest.Database. Dropped when the test ends.
func MigratedDatabase(t testing.TB) string {
	t.Helper()
	return pgtest.DatabaseFrom(t, "migrated", func(url string) error {
		ctx := context.Background()
		pool, err := pgxpool.New(ctx, url)
		if err != nil {
			return err
		}
		defer pool.Close()
		_, err = postgres.Migrate(ctx, pool)
		return err
	})
}

// OpenPostgresStore is OpenPostgres as a service.Store, for the storage suite.
func OpenPostgresStore(t testing.TB) service.Store { return OpenPostgres(t, nil) }

// OpenEngine opens the engine the tests run on (see OnPostgres), with OpenDB's or
// OpenPostgres's test settings.
func OpenEngine(t testing.TB) cli.Backend {
	t.Helper()
	if OnPostgres() {
		return OpenPostgres(t, nil)
	}
	return OpenDB(t, nil)
}
