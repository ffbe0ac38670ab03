package bolt

import (
	"bytes"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/voiceapi/voiceapi/data"
)

// TestCompactAndRestoreKeepTheServiceUsersOwnership: run as root on a data directory the
// service user owns (backup.md showed `voiceapi compact --data /var/lib/voiceapi`, no
// sudo -u), compact and restore left voiceapi.db owned by root, and the service stopped
// starting with "permission denied". The files now keep the owner of the file they
// replace, or of the directory they are restored into. Needs root to change owners.
func TestCompactAndRestoreKeepTheServiceUsersOwnership(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("changing a file's owner needs root")
	}
	const uid, gid = 65534, 65534 // nobody
	db, dir, _ := openFile(t)
	db.Close()
	if err := os.Chmod(filepath.Dir(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	owner := func(path string) (uint32, uint32) {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		st := fi.Sys().(*syscall.Stat_t)
		return st.Uid, st.Gid
	}
	if err := filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, gid)
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := Compact(dir, CompactOptions{SwapGrace: -1}); err != nil {
		t.Fatal(err)
	}
	if u, g := owner(filepath.Join(dir, FileName)); u != uid || g != gid {
		t.Errorf("after compact voiceapi.db is owned by %d:%d, want %d:%d", u, g, uid, gid)
	}

	var archive bytes.Buffer
	if _, err := BackupStopped(dir, &archive, data.BackupOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := Restore(dir, &archive, RestoreOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{FileName} {
		if u, g := owner(filepath.Join(dir, name)); u != uid || g != gid {
			t.Errorf("after restore %s is owned by %d:%d, want %d:%d", name, u, g, uid, gid)
		}
	}
}
