package bolt_test

import (
	"context"
	"testing"

	"github.com/voiceapi/voiceapi/bolt"
	"github.com/voiceapi/voiceapi/cli"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
)

// openTestDB opens a real database in a temporary directory and checks its consistency
// when the test ends (internal/testkit).
func openTestDB(t testing.TB) *bolt.DB { t.Helper(); return testkit.OpenDB(t, nil) }

// asUser returns a context acting as u in its personal workspace, as owner.
func asUser(t testing.TB, db *bolt.DB, u *data.User) context.Context { return testkit.As(u) }

// mustUser creates an account through the services.
func mustUser(t testing.TB, db *bolt.DB, email string) *data.User {
	t.Helper()
	return (&testkit.Env{DB: db, Svc: cli.NewServices(db)}).User(t, email)
}
