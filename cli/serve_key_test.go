package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

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

	checkRefusedStarts(t, url, "secret key differs")

	// The database's own key still opens it after both refusals.
	if out, err := runCLI("user", "list", "--database-url", url, "--data", first); err != nil {
		t.Fatalf("the database's key after the refusals: %v\n%s", err, out)
	}
}

// TestServeUnreachableDatabaseLeavesNoNewKeyFile: a PostgreSQL start that never reaches
// the database (nothing listens at the address) removes the key file it created in a
// fresh --data, so the installation's first real start makes its own; a key file that
// was there is left as is; and a key the database accepted is kept.
func TestServeUnreachableDatabaseLeavesNoNewKeyFile(t *testing.T) {
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	unreachable := "postgres://voiceapi@" + closed.Addr().String() + "/voiceapi?connect_timeout=5"
	closed.Close() // the port refuses connections now

	fresh := checkRefusedStarts(t, unreachable, "connect")

	// The same fresh --data on a database that answers: the key is made again and kept.
	url := pgtest.Database(t)
	if out, err := runCLI("user", "list", "--database-url", url, "--data", fresh); err != nil {
		t.Fatalf("the first start that reaches the database: %v\n%s", err, out)
	}
	if entries, err := os.ReadDir(fresh); err != nil || len(entries) != 1 || entries[0].Name() != seal.KeyFile {
		t.Fatalf("--data after a start the database accepted holds %v (%v), want %s alone", entries, err, seal.KeyFile)
	}
	if out, err := runCLI("user", "list", "--database-url", url, "--data", fresh); err != nil {
		t.Fatalf("the next start with the kept key: %v\n%s", err, out)
	}
}

// checkRefusedStarts runs serve on url, refused with a message holding refusal, twice: in
// a fresh --data, whose new key file goes again (the refusal says so), and in one that
// holds a key file, left as it was. It returns the fresh --data.
func checkRefusedStarts(t *testing.T, url, refusal string) string {
	t.Helper()
	fresh := t.TempDir()
	_, _, err := run(t, "", "serve", "--database-url", url, "--data", fresh, "--addr", "127.0.0.1:0")
	if err == nil || !strings.Contains(err.Error(), refusal) || !strings.Contains(err.Error(), "removed again") {
		t.Fatalf("serve with a new key: %v, want the refusal (%q) saying the new key file is removed", err, refusal)
	}
	if entries, err := os.ReadDir(fresh); err != nil || len(entries) != 0 {
		t.Fatalf("the fresh --data after the refusal holds %v (%v), want nothing", entries, err)
	}

	// A key file that was there before is never touched, refused or not.
	stale := t.TempDir()
	if _, made, err := seal.LoadKeyFile(context.Background(), stale); err != nil {
		t.Fatal(err)
	} else {
		made.Keep()
	}
	before, err := os.ReadFile(filepath.Join(stale, seal.KeyFile))
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = run(t, "", "serve", "--database-url", url, "--data", stale, "--addr", "127.0.0.1:0")
	if err == nil || !strings.Contains(err.Error(), refusal) || strings.Contains(err.Error(), "removed") {
		t.Fatalf("serve with an existing key: %v, want the refusal (%q) alone", err, refusal)
	}
	if after, err := os.ReadFile(filepath.Join(stale, seal.KeyFile)); err != nil || !bytes.Equal(after, before) {
		t.Fatalf("the existing key file after the refusal: %q (%v), want %q", after, err, before)
	}
	return fresh
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

// TestNewKeyFileNotAdoptedWhileUnsettled: a command sharing --data with a start whose new
// key is not yet settled waits for it instead of adopting that key; when the start
// removes its key (its database was unreachable), the waiting command makes its own, the
// database accepts it, and it stays: the removal took nothing from it.
func TestNewKeyFileNotAdoptedWhileUnsettled(t *testing.T) {
	url := pgtest.Database(t)
	shared := t.TempDir()
	first, fresh, err := seal.LoadKeyFile(context.Background(), shared) // the other start
	if err != nil || fresh == nil {
		t.Fatalf("the other start's key: %v", err)
	}
	listed := make(chan error, 1)
	go func() {
		out, err := runCLI("user", "list", "--database-url", url, "--data", shared)
		if err != nil {
			err = fmt.Errorf("%w\n%s", err, out)
		}
		listed <- err
	}()
	// Give the command time to finish if it could; it cannot, whatever the wait, while the
	// other start's key is unsettled (so this wait never fails a working lock).
	select {
	case err := <-listed:
		t.Fatalf("the command sharing --data finished while the other start's key was unsettled (%v): it adopted that key", err)
	case <-time.After(2 * time.Second):
	}
	if err := fresh.Remove(); err != nil { // its database was unreachable
		t.Fatal(err)
	}
	if err := <-listed; err != nil {
		t.Fatalf("the command sharing --data: %v", err)
	}
	kept, err := os.ReadFile(filepath.Join(shared, seal.KeyFile))
	if err != nil {
		t.Fatalf("the key the database accepted: %v", err)
	}
	if key, _ := seal.ParseKey(string(kept)); bytes.Equal(key, first) {
		t.Fatal("the command adopted the other start's unsettled key")
	}
	if out, err := runCLI("user", "list", "--database-url", url, "--data", shared); err != nil {
		t.Fatalf("the next start with the kept key: %v\n%s", err, out)
	}
}
