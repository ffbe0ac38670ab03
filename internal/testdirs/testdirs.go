// Package testdirs makes directories for tests that run as root as well as not (CI runs
// as root). A leaf package: the packages' own internal tests can import it.
package testdirs

import (
	"os"
	"path/filepath"
	"testing"
)

// NewRestoreTarget is a data directory that does not exist yet, for a restore to create.
// Run as root, a restore refuses to make one under a root-owned parent (it would be
// root's, which the service user cannot open), so the parent is then another user's
// (nobody's): the new directory takes that owner.
func NewRestoreTarget(t testing.TB) string {
	t.Helper()
	parent := t.TempDir()
	if os.Geteuid() == 0 {
		if err := os.Chown(parent, 65534, 65534); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(parent, "restored")
}
