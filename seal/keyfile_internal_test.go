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
