package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/voiceapi/voiceapi/bolt"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testdirs"
)

// run executes the command line with args and returns its output and error.
// runCombined runs the command line and returns its output and error output together.
func runCombined(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	root := NewRootCommand(&out, &out)
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	return out.String(), err
}

func TestBackupAndRestoreCommands(t *testing.T) {
	dir := t.TempDir()
	db, err := bolt.Open(dir, bolt.Options{PasswordCost: bcrypt.MinCost, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	u, err := NewServices(db).Users.CreateUser(context.Background(), data.UserCreate{Name: "A", Email: "a@example.com", Password: "password123"})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()

	archive := filepath.Join(t.TempDir(), "b.tar.gz")
	out, err := runCombined(t, "backup", "--data", dir, "--out", archive)
	if err != nil {
		t.Fatalf("backup: %v\n%s", err, out)
	}
	if !strings.Contains(out, "secret.key") {
		t.Errorf("backup output does not warn about the key file:\n%s", out)
	}
	if fi, err := os.Stat(archive); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("archive mode: %v, %v", fi, err)
	}

	target := testdirs.NewRestoreTarget(t)
	if out, err := runCombined(t, "restore", "--data", target, "--in", archive); err != nil {
		t.Fatalf("restore: %v\n%s", err, out)
	}
	if out, err := runCombined(t, "restore", "--data", target, "--in", archive); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("restore into a non-empty directory: %v\n%s", err, out)
	}
	if out, err := runCombined(t, "restore", "--data", target, "--in", archive, "--force"); err != nil {
		t.Fatalf("forced restore: %v\n%s", err, out)
	}
	out, err = runCombined(t, "user", "list", "--data", target)
	if err != nil || !strings.Contains(out, u.ID) {
		t.Fatalf("user list on the restored data: %v\n%s", err, out)
	}
}

// TestRestoreTruncatedArchiveSaysSo: an archive cut short (an interrupted download) is
// refused with what happened and that nothing changed, not a bare "unexpected EOF"; a
// missing --in file (of restore, of workspace import) is named with the flag.
func TestRestoreTruncatedArchiveSaysSo(t *testing.T) {
	dir, _ := stoppedDataDir(t)
	archive := filepath.Join(t.TempDir(), "b.tar.gz")
	if out, err := runCombined(t, "backup", "--data", dir, "--out", archive); err != nil {
		t.Fatalf("backup: %v\n%s", err, out)
	}
	whole, err := os.ReadFile(archive)
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(t.TempDir(), "cut.tar.gz")
	if err := os.WriteFile(cut, whole[:len(whole)/2], 0o600); err != nil {
		t.Fatal(err)
	}
	target := testdirs.NewRestoreTarget(t)
	_, err = runCombined(t, "restore", "--data", target, "--in", cut)
	if err == nil || !strings.HasPrefix(err.Error(), "the archive ends early, truncated") || !strings.Contains(err.Error(), "nothing was restored into "+target) {
		t.Errorf("truncated archive: %v", err)
	}
	if _, serr := os.Stat(target); !os.IsNotExist(serr) {
		t.Errorf("the target was made: %v", serr)
	}
	missing := filepath.Join(t.TempDir(), "none.tar.gz")
	if _, err := runCombined(t, "restore", "--data", target, "--in", missing); err == nil || !strings.HasPrefix(err.Error(), "--in "+missing+": ") {
		t.Errorf("missing archive: %v", err)
	}
	missingDoc := filepath.Join(t.TempDir(), "none.json")
	if _, err := runCombined(t, "workspace", "import", "--data", dir, "--workspace", "ws_1", "--in", missingDoc); err == nil || !strings.HasPrefix(err.Error(), "--in "+missingDoc+": ") {
		t.Errorf("missing import document: %v", err)
	}
}

// TestRestoreAsRootUnderRootsDirectoryRefused: `sudo voiceapi restore --data
// /var/lib/voiceapi-new` made the directory root's, and the service user's server could
// not open it. Refused now, naming the commands to run, with nothing created. Needs root.
func TestRestoreAsRootUnderRootsDirectoryRefused(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the refusal is root's")
	}
	dir, _ := stoppedDataDir(t)
	archive := filepath.Join(t.TempDir(), "b.tar.gz")
	if out, err := runCombined(t, "backup", "--data", dir, "--out", archive); err != nil {
		t.Fatalf("backup: %v\n%s", err, out)
	}
	parent := t.TempDir()
	target := filepath.Join(parent, "restored")
	out, err := runCombined(t, "restore", "--data", target, "--in", archive)
	if err == nil || !strings.Contains(out, "sudo install -d -o voiceapi -g voiceapi -m 0700 "+target) || !strings.Contains(out, "sudo -u voiceapi voiceapi restore --data "+target) {
		t.Fatalf("restore as root into a new directory under root's: %v\n%s", err, out)
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 0 {
		t.Errorf("the refused restore left %v", entries)
	}
}
