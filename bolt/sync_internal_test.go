package bolt

import (
	"testing"

	"golang.org/x/crypto/bcrypt"
)

// TestOpenSyncsCommits holds Open to fsync every commit unless a test asks otherwise. The
// kill tests at the repository's root cannot see an fsync left out: a SIGKILL leaves the
// written pages to the kernel, so they pass with NoSync on (docs/reliability.md); only a
// power cut would lose those writes.
func TestOpenSyncsCommits(t *testing.T) {
	db, err := Open(t.TempDir(), Options{PasswordCost: bcrypt.MinCost, SecretKey: make([]byte, 32)})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if db.bolt.NoSync || db.bolt.NoGrowSync {
		t.Errorf("bbolt opened with NoSync %v, NoGrowSync %v: commits would be answered before they reach the disk", db.bolt.NoSync, db.bolt.NoGrowSync)
	}
}
