package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/bolt"
	"github.com/voiceapi/voiceapi/data"
)

// filledDir returns a data directory whose database holds enough users that the users
// bucket spans pages of its own (an inline bucket has no page to damage).
func filledDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	db := openDir(t, dir)
	for i := range 40 {
		if _, err := NewServices(db).Users.CreateUser(context.Background(), data.UserCreate{Name: "U", Email: fmt.Sprintf("u%d@example.com", i), Password: "password123"}); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	return dir
}

func TestCheckHealthyDatabase(t *testing.T) {
	dir := filledDir(t)
	path := filepath.Join(dir, bolt.FileName)
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out, _, err := run(t, "", "check", "--data", dir)
	if err != nil {
		t.Fatalf("check on a healthy database: %v\n%s", err, out)
	}
	if !strings.Contains(out, ": ok (") {
		t.Errorf("no ok line:\n%s", out)
	}
	// The check opens read-only: it must not change a byte of the file it examines.
	after, _ := os.ReadFile(path)
	if string(before) != string(after) {
		t.Error("check modified the database file")
	}
}

func TestCheckReportsDamage(t *testing.T) {
	dir := filledDir(t)
	path := filepath.Join(dir, bolt.FileName)
	// Find the root page of the users bucket, then overwrite its header's page type: the
	// file still opens, and the check must name the damage instead of saying ok.
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	var root uint64
	db.View(func(tx *bbolt.Tx) error { root = uint64(tx.Bucket([]byte("users")).Root()); return nil })
	pageSize := db.Info().PageSize
	db.Close()
	if root < 2 {
		t.Fatalf("users bucket is inline (root %d); the test needs a page to damage", root)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Page header: id (8 bytes), flags (2 bytes), ... 0x00ff is no known page type.
	if _, err := f.WriteAt([]byte{0xff, 0x00}, int64(root)*int64(pageSize)+8); err != nil {
		t.Fatal(err)
	}
	f.Close()

	out, _, err := run(t, "", "check", "--data", dir)
	if err == nil {
		t.Fatalf("check passed a damaged database:\n%s", out)
	}
	if !strings.Contains(out, "FAILED") || strings.Contains(out, ": ok (") {
		t.Errorf("output does not say FAILED:\n%s", out)
	}
}

func TestCheckMissingAndLocked(t *testing.T) {
	if _, _, err := run(t, "", "check", "--data", filepath.Join(t.TempDir(), "missing")); err == nil || !strings.Contains(err.Error(), "does not exist: name the server's data directory with --data DIR") {
		t.Errorf("missing directory: %v", err)
	}
	dir := t.TempDir()
	held := openDir(t, dir)
	defer held.Close()
	start := time.Now()
	_, _, err := run(t, "", "check", "--data", dir)
	if err == nil || !strings.Contains(err.Error(), "in use") || !strings.Contains(err.Error(), "stop the server") {
		t.Errorf("held database: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("check on a held database took %v", d)
	}
}

// TestAdminCommandsOnADirectoryWithoutDatabase: an admin command given an existing data
// directory that holds no database (a mistyped --data, a fresh volume) says so and what to
// give, and leaves the directory empty: `user list` answered an empty table and `key
// create` "no user", each over a new database and secret.key made there, which no server
// reads. `user create` alone may still make it, to provision an administrator before the
// first start.
func TestAdminCommandsOnADirectoryWithoutDatabase(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"user", "list"}, {"workspace", "list"}, {"key", "create", "--email", "a@example.com"},
		{"user", "reset-password", "--email", "a@example.com"}, {"audit", "verify"},
		{"subscription", "set", "--workspace", "ws_1", "--agents", "1"},
		{"workspace", "export", "--workspace", "ws_1"}, {"check"}, {"stats"}, {"compact"},
		{"backup", "--out", filepath.Join(t.TempDir(), "b.tar.gz")},
	} {
		_, _, err := run(t, "", append(args, "--data", dir)...)
		want := "data directory " + dir + " holds no database (voiceapi.db): name the server's data directory with --data DIR"
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%v: %v, want %q", args, err, want)
		}
		if names := dirNames(t, dir); len(names) != 0 {
			t.Fatalf("%v left %v in the directory", args, names)
		}
	}
	if _, _, err := run(t, "", "user", "create", "--data", dir, "--email", "a@example.com", "--name", "A", "--password", "password123"); err != nil {
		t.Fatalf("user create on an empty directory: %v", err)
	}
}

// TestPermissionDeniedSaysAsWhomToRun: the file system's refusal to open the database
// (a command run as another user than the directory's owner) gets the next step. The
// refusal itself needs a user other than root to happen, so the wording is tested alone:
// for a directory that exists, and for one that does not yet (which has no owner to name).
func TestPermissionDeniedSaysAsWhomToRun(t *testing.T) {
	denied := fmt.Errorf("opening /srv/voiceapi.db: %w", &os.PathError{Op: "open", Path: "/srv/voiceapi.db", Err: os.ErrPermission})
	got := notPermitted("/srv", denied)
	if !errors.Is(got, os.ErrPermission) || !strings.HasSuffix(got.Error(), "permission denied: run it as the user that owns /srv (the service's: sudo -u voiceapi voiceapi …)") {
		t.Errorf("permission denied: %v", got)
	}
	missing := filepath.Join(t.TempDir(), "data")
	denied = fmt.Errorf("creating data directory: %w", &os.PathError{Op: "mkdir", Path: missing, Err: os.ErrPermission})
	want := "permission denied: create " + missing + " for the user that runs voiceapi first (sudo install -d -o voiceapi -g voiceapi -m 0700 " + missing + "), then run it as that user"
	if got := notPermitted(missing, denied); !errors.Is(got, os.ErrPermission) || !strings.HasSuffix(got.Error(), want) {
		t.Errorf("a directory that does not exist: %v, want the suffix %q", got, want)
	}
	if other := errors.New("x"); notPermitted("/srv", other) != other {
		t.Error("another error was changed")
	}
	if notPermitted("/srv", nil) != nil {
		t.Error("no error became one")
	}
}
