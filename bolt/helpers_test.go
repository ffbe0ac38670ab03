package bolt_test

import (
	"context"
	"testing"

	"go.etcd.io/bbolt"
	"golang.org/x/crypto/bcrypt"

	"github.com/voiceapi/voiceapi/bolt"
	"github.com/voiceapi/voiceapi/cli"
	"github.com/voiceapi/voiceapi/data"
)

// openTestDB opens a real database in a temporary directory and checks its consistency
// when the test ends.
func openTestDB(t testing.TB) *bolt.DB {
	t.Helper()
	db, err := bolt.Open(t.TempDir(), bolt.Options{PasswordCost: bcrypt.MinCost, NoSync: true, SecretKey: make([]byte, 32)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		err := db.Bolt().View(func(tx *bbolt.Tx) error {
			for err := range tx.Check() {
				return err
			}
			return nil
		})
		if err != nil {
			t.Errorf("consistency check: %v", err)
		}
		db.Close()
	})
	return db
}

// asUser returns a context acting as userID in its personal workspace, as owner.
func asUser(t testing.TB, db *bolt.DB, u *data.User) context.Context {
	t.Helper()
	return data.WithPrincipal(context.Background(), &data.Principal{
		UserID: u.ID, WorkspaceID: u.PersonalWorkspaceID, CurrentWorkspaceID: u.PersonalWorkspaceID,
		Role: data.RoleOwner, Modules: data.Modules,
	})
}

func mustUser(t testing.TB, db *bolt.DB, email string) *data.User {
	t.Helper()
	u, err := cli.NewServices(db).Users.CreateUser(context.Background(), data.UserCreate{Name: "Test " + email, Email: email, Password: "password123"})
	if err != nil {
		t.Fatal(err)
	}
	return u
}
