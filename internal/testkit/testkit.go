// Package testkit opens real databases and services for tests: one place instead of a
// copy per test package.
package testkit

import (
	"bytes"
	"context"
	"os"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/voiceapi/voiceapi/bolt"
	"github.com/voiceapi/voiceapi/cli"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/postgres"
	"github.com/voiceapi/voiceapi/seal"
	"github.com/voiceapi/voiceapi/service"
)

// SecretKey is the key tests seal credentials with.
var SecretKey = bytes.Repeat([]byte{7}, 32)

// OpenDB opens a bbolt database in a temporary directory, fsync off, bcrypt at its lowest
// cost; tune (may be nil) adjusts the options. When the test ends it checks the file's
// consistency and closes it.
func OpenDB(t testing.TB, tune func(*bolt.Options)) *bolt.DB {
	t.Helper()
	opts := bolt.Options{PasswordCost: bcrypt.MinCost, NoSync: true, SecretKey: SecretKey}
	if tune != nil {
		tune(&opts)
	}
	db, err := bolt.Open(t.TempDir(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		err := db.CheckConsistency()
		if err != nil {
			t.Errorf("consistency check: %v", err)
		}
		db.Close()
	})
	return db
}

// OpenStore is OpenDB as a service.Store, for the storage suite.
func OpenStore(t testing.TB) service.Store { return OpenDB(t, nil) }

// Services builds the services on store with the test key and the lowest bcrypt cost;
// tune (may be nil) adjusts the options.
func Services(t testing.TB, store service.Store, tune func(*service.Options)) *service.Services {
	t.Helper()
	sealer, err := seal.Load("", SecretKey)
	if err != nil {
		t.Fatal(err)
	}
	opts := service.Options{Sealer: sealer, PasswordCost: bcrypt.MinCost}
	if tune != nil {
		tune(&opts)
	}
	svc, err := service.New(store, opts)
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

// Env is a database and the services on it.
type Env struct {
	// Store is the engine the test runs on (see OnPostgres).
	Store cli.Backend
	// DB is the bbolt database, nil when the tests run on PostgreSQL.
	DB  *bolt.DB
	Svc *service.Services
}

// OnPostgres reports whether the tests run on PostgreSQL (VOICEAPI_TEST_BACKEND=postgres)
// rather than bbolt, the default: one matrix of tests, two engines.
func OnPostgres() bool { return os.Getenv("VOICEAPI_TEST_BACKEND") == "postgres" }

// NeedBolt skips a test that inspects the bbolt file itself when the tests run on
// PostgreSQL; what it proves through the API runs on both engines elsewhere.
func NeedBolt(t testing.TB) {
	t.Helper()
	if OnPostgres() {
		t.Skip("inspects the bbolt file itself (VOICEAPI_TEST_BACKEND=postgres)")
	}
}

// New opens a database (see OpenDB and OpenPostgres; tune may be nil, and adjusts the
// options both engines share) and builds the services on it with the same clock, catalog
// and bcrypt cost.
func New(t testing.TB, tune func(*bolt.Options)) *Env {
	t.Helper()
	if OnPostgres() {
		var bo bolt.Options
		if tune != nil {
			tune(&bo)
		}
		db := OpenPostgres(t, func(o *postgres.Options) {
			o.Now, o.Logger, o.Catalog, o.Knowledge = bo.Now, bo.Logger, bo.Catalog, bo.Knowledge
			if bo.PasswordCost != 0 {
				o.PasswordCost = bo.PasswordCost
			}
			if bo.LoginTTL != 0 {
				o.LoginTTL = bo.LoginTTL
			}
			if bo.SecretKey != nil {
				o.SecretKey = bo.SecretKey
			}
		})
		return &Env{Store: db, Svc: cli.NewServices(db)}
	}
	db := OpenDB(t, tune)
	return &Env{Store: db, DB: db, Svc: cli.NewServices(db)}
}

// User creates an account (with its personal workspace) whose password is
// "password-" + email.
func (e *Env) User(t testing.TB, email string) *data.User {
	t.Helper()
	u, err := e.Svc.Users.CreateUser(context.Background(), data.UserCreate{Name: "Test " + email, Email: email, Password: "password-" + email})
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// Token makes an API key for u in workspaceID (its personal workspace when "").
func (e *Env) Token(t testing.TB, u *data.User, workspaceID string) string {
	t.Helper()
	if workspaceID == "" {
		workspaceID = u.PersonalWorkspaceID
	}
	_, token, err := e.Svc.Auth.CreateAPIKeyFor(context.Background(), u.ID, workspaceID, data.APIKeyCreate{Name: "test"})
	if err != nil {
		t.Fatal(err)
	}
	return token
}

// As returns a context acting as u, owner of its personal workspace.
func As(u *data.User) context.Context {
	return AsRole(u, u.PersonalWorkspaceID, data.RoleOwner)
}

// AsRole returns a context acting as u with role in workspaceID, holding every module.
func AsRole(u *data.User, workspaceID, role string) context.Context {
	return data.WithPrincipal(context.Background(), &data.Principal{
		UserID: u.ID, IsAdmin: u.IsAdmin, WorkspaceID: workspaceID, CurrentWorkspaceID: workspaceID,
		Role: role, Modules: data.EffectiveModules(role, data.Modules),
	})
}

// ChainKey is the audit chain's key under SecretKey, to forge or check links in tests.
func ChainKey() []byte {
	sealer, err := seal.Load("", SecretKey)
	if err != nil {
		panic(err)
	}
	return service.ChainKey(sealer)
}
