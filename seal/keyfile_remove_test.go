package seal

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestRemoveKeyFileOnlyItsOwnKey: LoadKeyFile says whether it made the key file, and
// RemoveKeyFile removes the file only while it holds the key given: a file another
// process put there with another key is left.
func TestRemoveKeyFileOnlyItsOwnKey(t *testing.T) {
	dir := t.TempDir()
	key, created, err := LoadKeyFile(dir)
	if err != nil || !created {
		t.Fatalf("first load: created %v, %v; want a new key file", created, err)
	}
	again, created, err := LoadKeyFile(dir)
	if err != nil || created || !bytes.Equal(again, key) {
		t.Fatalf("second load: created %v, same key %v, %v; want the file's key, not created", created, bytes.Equal(again, key), err)
	}
	other := bytes.Repeat([]byte{7}, 32)
	if err := RemoveKeyFile(dir, other); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, KeyFile)); err != nil {
		t.Fatalf("the key file after a removal with another key: %v, want it kept", err)
	}
	if err := RemoveKeyFile(dir, key); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, KeyFile)); !os.IsNotExist(err) {
		t.Fatalf("the key file after a removal with its key: %v, want it gone", err)
	}
}
