package bolt

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
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

// TestRestoreAsRootIntoANewDirectory: run as root into a directory that did not exist,
// restore made it root's (0700), and the service user's server could not open it. Under
// a parent another user owns, the new directory and its files now take that owner; under
// a root-owned parent the restore is refused, naming the commands to run, and creates
// nothing. Needs root to change owners.
func TestRestoreAsRootIntoANewDirectory(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("changing a file's owner needs root")
	}
	const uid, gid = 65534, 65534 // nobody
	db, dir, _ := openFile(t)
	db.Close()
	var archive bytes.Buffer
	if _, err := BackupStopped(dir, &archive, data.BackupOptions{}); err != nil {
		t.Fatal(err)
	}

	serviceHome := t.TempDir()
	if err := os.Lchown(serviceHome, uid, gid); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(serviceHome, "data")
	if _, err := Restore(target, bytes.NewReader(archive.Bytes()), RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := filepath.Walk(target, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if st := fi.Sys().(*syscall.Stat_t); st.Uid != uid || st.Gid != gid {
			t.Errorf("%s is owned by %d:%d, want its parent's %d:%d", p, st.Uid, st.Gid, uid, gid)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}

	rootsParent := t.TempDir()
	target = filepath.Join(rootsParent, "data")
	_, err := Restore(target, bytes.NewReader(archive.Bytes()), RestoreOptions{})
	if err == nil || !strings.Contains(err.Error(), "sudo install -d -o voiceapi -g voiceapi -m 0700 "+target) || !strings.Contains(err.Error(), "sudo -u voiceapi voiceapi restore --data "+target) {
		t.Fatalf("restore as root under a root-owned parent: %v", err)
	}
	if entries, _ := os.ReadDir(rootsParent); len(entries) != 0 {
		t.Errorf("the refused restore left %v in %s", entries, rootsParent)
	}
}
