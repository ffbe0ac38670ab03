package seal

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestNewKeyRemoveOnlyItsOwnKey: LoadKeyFile says whether it made the key file, and
// Remove removes the file only while it holds the key made: a file another process put
// there with another key is left.
func TestNewKeyRemoveOnlyItsOwnKey(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	key, fresh, err := LoadKeyFile(ctx, dir)
	if err != nil || fresh == nil {
		t.Fatalf("first load: fresh %v, %v; want a new key file", fresh, err)
	}
	fresh.Keep()
	again, fresh, err := LoadKeyFile(ctx, dir)
	if err != nil || fresh != nil || !bytes.Equal(again, key) {
		t.Fatalf("second load: fresh %v, same key %v, %v; want the file's key, not created", fresh, bytes.Equal(again, key), err)
	}
	onlyKeyFile(t, dir) // no lock file left behind

	other := t.TempDir()
	if _, fresh, err = LoadKeyFile(ctx, other); err != nil {
		t.Fatal(err)
	}
	// Another process replaced the file meanwhile (an operator restoring the real key).
	replaced := []byte("0707070707070707070707070707070707070707070707070707070707070707\n")
	if err := os.WriteFile(filepath.Join(other, KeyFile), replaced, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := fresh.Remove(); err != nil {
		t.Fatal(err)
	}
	if raw, err := os.ReadFile(filepath.Join(other, KeyFile)); err != nil || !bytes.Equal(raw, replaced) {
		t.Fatalf("the key file after a removal of another key: %q (%v), want it kept", raw, err)
	}

	third := t.TempDir()
	if _, fresh, err = LoadKeyFile(ctx, third); err != nil {
		t.Fatal(err)
	}
	if err := fresh.Remove(); err != nil {
		t.Fatal(err)
	}
	if entries, err := os.ReadDir(third); err != nil || len(entries) != 0 {
		t.Fatalf("the directory after the removal of its new key: %v (%v), want nothing", entries, err)
	}
}

// TestNewKeyUnreadableUntilSettled: while a key this process made is neither kept nor
// removed, no other loader gets it (here one that gives up at once: its context is done),
// so a removal cannot take a key another process has meanwhile had accepted. Once kept,
// the next loader reads it.
func TestNewKeyUnreadableUntilSettled(t *testing.T) {
	dir := t.TempDir()
	key, fresh, err := LoadKeyFile(context.Background(), dir)
	if err != nil || fresh == nil {
		t.Fatalf("first load: %v", err)
	}
	if !fresh.Guarded() {
		t.Skip("this filesystem has no locks")
	}
	done, cancel := context.WithCancel(context.Background())
	cancel()
	if got, _, err := LoadKeyFile(done, dir); err == nil {
		t.Fatalf("a second loader read the unsettled key (%x, made %x)", got, key)
	}
	fresh.Keep()
	got, again, err := LoadKeyFile(done, dir)
	if err != nil || again != nil || !bytes.Equal(got, key) {
		t.Fatalf("after Keep: %x, fresh %v, %v; want the kept key", got, again, err)
	}
	onlyKeyFile(t, dir)
}

// onlyKeyFile fails unless dir holds the key file alone.
func onlyKeyFile(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != KeyFile {
		t.Fatalf("the directory holds %v, want %s alone", entries, KeyFile)
	}
}

// TestKeyFileReadInADirectoryNotWritable: a key file in a directory this process may not
// write (a read-only mount) is read as before: the key lock, which cannot be made there,
// is not required to read it.
func TestKeyFileReadInADirectoryNotWritable(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root writes any directory")
	}
	dir := t.TempDir()
	key, fresh, err := LoadKeyFile(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	fresh.Keep()
	if err := os.Chmod(dir, 0o500); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(dir, 0o700)
	got, fresh, err := LoadKeyFile(context.Background(), dir)
	if err != nil || fresh != nil || !bytes.Equal(got, key) {
		t.Fatalf("reading the key in a directory not writable: %x, %v, %v; want %x", got, fresh, err, key)
	}
	if got, err := loadOrCreateKeyFile(filepath.Join(dir, KeyFile)); err != nil || !bytes.Equal(got, key) {
		t.Fatalf("the engine's read: %x, %v; want %x", got, err, key)
	}
}
