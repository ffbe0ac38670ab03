// Package testkit opens real databases and services for tests: one place instead of a
// copy per test package.
package testkit

import (
	"bytes"
	"testing"

	"go.etcd.io/bbolt"
	"golang.org/x/crypto/bcrypt"

	"github.com/voiceapi/voiceapi/bolt"
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
