package testkit

import (
	"context"
	"testing"

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
	opts := postgres.Options{URL: pgtest.Database(t), PasswordCost: bcrypt.MinCost, SecretKey: SecretKey}
	if tune != nil {
		tune(&opts)
	}
	db, err := postgres.Open(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
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
