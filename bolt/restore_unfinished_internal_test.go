package bolt

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
)

// openedDir makes a data directory with a database, a key file and a stored file named
// name, and closes it.
func openedDir(t *testing.T, name string) string {
	t.Helper()
	dir := t.TempDir()
	db, err := Open(dir, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	if err := os.MkdirAll(filepath.Join(dir, FilesDir, "kb_1"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, FilesDir, "kb_1", name), []byte("%PDF-1.7 "+name), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// A forced restore renames the archive's entries over the directory's one by one: cut
// short after the key file (a kill, a power loss), the directory holds the old database
// beside the archive's key. Nothing may open it so, not the server (which would serve the
// old records with a key that opens none of their credentials, and break their audit
// chain), nor backup or compact; restoring again finishes it and removes what the cut-short
// restore left.
func TestRestoreCutShortLeavesADirectoryNothingOpens(t *testing.T) {
	src := openedDir(t, "new.pdf")
	var archive bytes.Buffer
	if _, err := BackupStopped(src, &archive, data.BackupOptions{}); err != nil {
		t.Fatal(err)
	}
	srcKey, _ := os.ReadFile(filepath.Join(src, SecretKeyFile))

	target := openedDir(t, "old.pdf")
	cut := errors.New("killed")
	restoreStep = func(name string) error {
		if name == SecretKeyFile {
			return cut
		}
		return nil
	}
	_, err := Restore(target, bytes.NewReader(archive.Bytes()), RestoreOptions{Force: true})
	restoreStep = nil
	if !errors.Is(err, cut) {
		t.Fatalf("restore: %v, want it cut short", err)
	}
	// A kill would also have left the staging directory the marker names.
	if name, err := os.ReadFile(filepath.Join(target, restoreMarker)); err == nil {
		if err := os.MkdirAll(filepath.Join(target, string(name)), 0o700); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(target, string(name), SecretKeyFile), srcKey, 0o600)
	}

	if db, err := Open(target, Options{NoSync: true}); !errors.Is(err, ErrRestoreUnfinished) {
		if db != nil {
			db.Close()
		}
		t.Fatalf("opening the half-restored directory: %v, want ErrRestoreUnfinished", err)
	}
	if _, err := BackupStopped(target, io.Discard, data.BackupOptions{}); !errors.Is(err, ErrRestoreUnfinished) {
		t.Errorf("backup of the half-restored directory: %v, want ErrRestoreUnfinished", err)
	}
	if _, err := Compact(target, CompactOptions{}); !errors.Is(err, ErrRestoreUnfinished) {
		t.Errorf("compact of the half-restored directory: %v, want ErrRestoreUnfinished", err)
	}

	if _, err := Restore(target, bytes.NewReader(archive.Bytes()), RestoreOptions{Force: true}); err != nil {
		t.Fatalf("restoring again: %v", err)
	}
	if _, err := os.Stat(filepath.Join(target, FilesDir, "kb_1", "new.pdf")); err != nil {
		t.Error("the archive's stored file is missing")
	}
	db, err := Open(target, Options{NoSync: true})
	if err != nil {
		t.Fatalf("opening after the restore finished: %v", err)
	}
	db.Close()
	if key, _ := os.ReadFile(filepath.Join(target, SecretKeyFile)); !bytes.Equal(key, srcKey) {
		t.Error("the restored key file is not the archive's")
	}
	entries, _ := os.ReadDir(target)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".voiceapi-restore") {
			t.Errorf("the restore left %s behind", e.Name())
		}
	}
}
