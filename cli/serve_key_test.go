package cli

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/voiceapi/voiceapi/internal/pgtest"
	"github.com/voiceapi/voiceapi/seal"
)

// TestServeRefusedKeyLeavesNoNewKeyFile: a PostgreSQL start refused because the database
// was set up with another secret key removes the key file it created in a fresh --data,
// so the next start is not refused by it again; a key file that was there is left as is.
func TestServeRefusedKeyLeavesNoNewKeyFile(t *testing.T) {
	url := pgtest.Database(t)
	first := t.TempDir() // the key the database is set up with
	if out, err := runCLI("user", "list", "--database-url", url, "--data", first); err != nil {
		t.Fatalf("setting the database up: %v\n%s", err, out)
	}

	fresh := t.TempDir()
	_, _, err := run(t, "", "serve", "--database-url", url, "--data", fresh, "--addr", "127.0.0.1:0")
	if err == nil || !strings.Contains(err.Error(), "secret key differs") || !strings.Contains(err.Error(), "removed again") {
		t.Fatalf("serve with a new key: %v, want the refusal saying the new key file is removed", err)
	}
	if entries, err := os.ReadDir(fresh); err != nil || len(entries) != 0 {
		t.Fatalf("the fresh --data after the refusal holds %v (%v), want nothing", entries, err)
	}

	// A key file that was there before is never touched, refused or not.
	stale := t.TempDir()
	if _, _, err := seal.LoadKeyFile(stale); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(filepath.Join(stale, seal.KeyFile))
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = run(t, "", "serve", "--database-url", url, "--data", stale, "--addr", "127.0.0.1:0")
	if err == nil || !strings.Contains(err.Error(), "secret key differs") || strings.Contains(err.Error(), "removed") {
		t.Fatalf("serve with another existing key: %v, want the refusal alone", err)
	}
	if after, err := os.ReadFile(filepath.Join(stale, seal.KeyFile)); err != nil || !bytes.Equal(after, before) {
		t.Fatalf("the existing key file after the refusal: %q (%v), want %q", after, err, before)
	}

	// The database's own key still opens it after both refusals.
	if out, err := runCLI("user", "list", "--database-url", url, "--data", first); err != nil {
		t.Fatalf("the database's key after the refusals: %v\n%s", err, out)
	}
}

// TestKeyDirRefusalSaysWhatToDo: a key-file directory for PostgreSQL mode that the file
// system refuses to create gets the same next step as bbolt's data directory: create it
// for the service's user. Root never gets the refusal, so the test makes the directory
// maker refuse as it would another user; the command runs as the operator's would.
func TestKeyDirRefusalSaysWhatToDo(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "data")
	defer func(saved func(string, os.FileMode) error) { makeDir = saved }(makeDir)
	makeDir = func(dir string, _ os.FileMode) error {
		return &os.PathError{Op: "mkdir", Path: dir, Err: syscall.EACCES}
	}
	// The URL is never dialled: the directory comes first.
	_, _, err := run(t, "", "serve", "--database-url", "postgres://voiceapi@127.0.0.1:1/voiceapi", "--data", missing, "--addr", "127.0.0.1:0")
	want := "permission denied: create " + missing + " for the user that runs voiceapi first (sudo install -d -o voiceapi -g voiceapi -m 0700 " + missing + "), then run it as that user"
	if err == nil || !errors.Is(err, fs.ErrPermission) || !strings.HasSuffix(err.Error(), want) {
		t.Fatalf("serve with a key-file directory it may not create: %v, want the suffix %q", err, want)
	}
}
