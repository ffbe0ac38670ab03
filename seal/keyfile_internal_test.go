package seal

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestKeyFileCutShortLeavesNoKey: a first start killed while it writes the key file must
// not leave an empty or partial secret.key, which every later start would refuse to read.
// The write is cut short here; what is on disk under the key's name then is what a kill
// would leave.
func TestKeyFileCutShortLeavesNoKey(t *testing.T) {
	path := filepath.Join(t.TempDir(), KeyFile)
	killed := errors.New("killed mid-write")
	write := writeKey
	writeKey = func(*os.File, string) error { return killed }
	_, err := loadOrCreateKeyFile(path)
	writeKey = write
	if !errors.Is(err, killed) {
		t.Fatalf("the cut write: %v", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a key file cut short is left under its name (%v): the next start could not read it", err)
	}

	key, err := loadOrCreateKeyFile(path) // the next start
	if err != nil || len(key) != 32 {
		t.Fatalf("the next start: %d bytes, %v", len(key), err)
	}
	again, err := loadOrCreateKeyFile(path)
	if err != nil || !bytes.Equal(again, key) {
		t.Fatalf("the key read back: %x, %v; want %x", again, err, key)
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Errorf("key file mode %v, want 0600", info.Mode().Perm())
	}
}

// TestKeyFileWithoutHardLinks: where the data directory's filesystem has no hard links,
// the key is still created (by a rename), whole, and read back at the next start.
func TestKeyFileWithoutHardLinks(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, KeyFile)
	link := linkKey
	linkKey = func(_, newname string) error {
		return &os.LinkError{Op: "link", New: newname, Err: syscall.EPERM}
	}
	key, err := loadOrCreateKeyFile(path)
	linkKey = link
	if err != nil || len(key) != 32 {
		t.Fatalf("creating the key without hard links: %d bytes, %v", len(key), err)
	}
	again, err := loadOrCreateKeyFile(path)
	if err != nil || !bytes.Equal(again, key) {
		t.Fatalf("the key read back: %x, %v; want %x", again, err, key)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Errorf("the directory holds %d names, want the key file alone", len(entries))
	}
}

// TestStrayKeyFilesRemoved: a kill between the temporary file's creation and its link
// leaves that file (a key never used) beside the key; the next start that reads the key
// removes it, and nothing else.
func TestStrayKeyFilesRemoved(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, KeyFile)
	stray := filepath.Join(dir, "."+KeyFile+"-2841991")
	if err := os.WriteFile(stray, []byte("0123\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, ".secret.keys-kept")
	if err := os.WriteFile(other, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	key, err := loadOrCreateKeyFile(path) // the start after the kill: no key yet
	if err != nil {
		t.Fatal(err)
	}
	again, err := loadOrCreateKeyFile(path) // the next: reads it
	if err != nil || !bytes.Equal(again, key) {
		t.Fatalf("the key read back: %x, %v; want %x", again, err, key)
	}
	if _, err := os.Stat(stray); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the stray temporary key file is still there (%v)", err)
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("a file not of the key's was removed: %v", err)
	}
}
