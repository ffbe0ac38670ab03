package cli

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/voiceapi/voiceapi/bolt"
	"github.com/voiceapi/voiceapi/data"
)

// stoppedDataDir returns a data directory holding one user, its database closed.
func stoppedDataDir(t *testing.T) (string, *data.User) {
	t.Helper()
	dir := t.TempDir()
	db, err := bolt.Open(dir, bolt.Options{PasswordCost: bcrypt.MinCost, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	u, err := NewServices(db).Users.CreateUser(context.Background(), data.UserCreate{Name: "A", Email: "a@example.com", Password: "password123"})
	if err != nil {
		t.Fatal(err)
	}
	return dir, u
}

// archiveMembers lists the members of a tar.gz archive; it fails the test on a file that
// is not a complete archive.
func archiveMembers(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s is not gzip: %v", path, err)
	}
	tr := tar.NewReader(zr)
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return names
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		names = append(names, h.Name)
	}
}

// dirNames lists a directory, to catch temporary files left behind.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func TestBackupRefusesToOverwriteWithoutForce(t *testing.T) {
	dir, _ := stoppedDataDir(t)
	outDir := t.TempDir()
	archive := filepath.Join(outDir, "b.tar.gz")
	const precious = "an older archive the operator keeps"
	if err := os.WriteFile(archive, []byte(precious), 0o600); err != nil {
		t.Fatal(err)
	}

	out, err := runCombined(t, "backup", "--data", dir, "--out", archive)
	if err == nil || !strings.Contains(err.Error(), "--force") || !strings.Contains(err.Error(), archive) {
		t.Fatalf("backup over an existing file: %v, want an error naming the file and --force\n%s", err, out)
	}
	if b, _ := os.ReadFile(archive); string(b) != precious {
		t.Fatalf("the existing file was changed: %q", b)
	}
	if names := dirNames(t, outDir); len(names) != 1 {
		t.Fatalf("files beside the archive after the refusal: %v", names)
	}

	// --force replaces it with a complete archive, through a rename: no temporary left.
	if out, err := runCombined(t, "backup", "--data", dir, "--out", archive, "--force"); err != nil {
		t.Fatalf("backup --force: %v\n%s", err, out)
	}
	members := archiveMembers(t, archive)
	if len(members) == 0 || members[len(members)-1] != "manifest.json" {
		t.Fatalf("replaced archive members %v", members)
	}
	if fi, err := os.Stat(archive); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("replaced archive: %v, %v", fi, err)
	}
	if names := dirNames(t, outDir); len(names) != 1 {
		t.Fatalf("files beside the archive after --force: %v", names)
	}
}

func TestWorkspaceExportRefusesToOverwriteWithoutForce(t *testing.T) {
	dir, u := stoppedDataDir(t)
	doc := filepath.Join(t.TempDir(), "ws.json")
	if err := os.WriteFile(doc, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"workspace", "export", "--data", dir, "--workspace", u.PersonalWorkspaceID, "--out", doc}
	if out, err := runCombined(t, args...); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("export over an existing file: %v\n%s", err, out)
	}
	if b, _ := os.ReadFile(doc); string(b) != "keep me" {
		t.Fatalf("the existing file was changed: %q", b)
	}
	if out, err := runCombined(t, append(args, "--force")...); err != nil {
		t.Fatalf("export --force: %v\n%s", err, out)
	}
	if b, _ := os.ReadFile(doc); !strings.Contains(string(b), `"format": "voiceapi.workspace"`) {
		t.Fatalf("export --force did not write the document: %.200s", b)
	}
}

// placeNew is the last step without --force: a file that appeared at the name while the
// archive was being written is kept, and the finished temporary is not put in its place.
func TestPlaceNewNeverReplaces(t *testing.T) {
	dir := t.TempDir()
	tmp, path := filepath.Join(dir, ".tmp"), filepath.Join(dir, "out")
	os.WriteFile(tmp, []byte("new"), 0o600)
	os.WriteFile(path, []byte("raced in"), 0o600)
	if err := placeNew(tmp, path); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("placeNew over an existing file: %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "raced in" {
		t.Fatalf("the file that raced in was replaced: %q", b)
	}
	os.Remove(path)
	if err := placeNew(tmp, path); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "new" {
		t.Fatalf("placed file holds %q", b)
	}
}

// TestReadableFilesKeepTheUmasksMode: pulled configuration and JUnit reports are read by
// other programs and users (a CI reporter, a teammate's editor), so they get the mode
// os.WriteFile gives a new file, not the 0600 of backups and exports.
func TestReadableFilesKeepTheUmasksMode(t *testing.T) {
	dir := t.TempDir()
	ref := filepath.Join(dir, "ref")
	if err := os.WriteFile(ref, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	want, err := os.Stat(ref)
	if err != nil {
		t.Fatal(err)
	}
	for _, force := range []bool{false, true} {
		path := filepath.Join(dir, "voiceapi.yaml")
		err := writeReadableFileAtomically(path, force, func(w io.Writer) error {
			_, err := io.WriteString(w, "agents: []\n")
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if got.Mode().Perm() != want.Mode().Perm() {
			t.Errorf("force %v: mode %v, want %v as os.WriteFile gives", force, got.Mode().Perm(), want.Mode().Perm())
		}
	}
	secret := filepath.Join(dir, "backup.tar.gz")
	if err := writeFileAtomically(secret, false, func(io.Writer) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.Stat(secret); got.Mode().Perm() != 0o600 {
		t.Errorf("a backup's mode %v, want 0600", got.Mode().Perm())
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 3 {
		t.Errorf("left in the directory: %v", entries)
	}
}

// TestOutputIntoMissingOrClosedDirectory: an --out in a directory that is missing or not
// writable is named, with its directory and what to do, not as the temporary file beside
// it ("open /backups/.voiceapi-x.tgz-1573090062: no such file or directory").
func TestOutputIntoMissingOrClosedDirectory(t *testing.T) {
	dir, u := stoppedDataDir(t)
	missing := filepath.Join(t.TempDir(), "not-made")
	for _, args := range [][]string{
		{"backup", "--data", dir, "--out", filepath.Join(missing, "b.tar.gz")},
		{"workspace", "export", "--data", dir, "--workspace", u.PersonalWorkspaceID, "--out", filepath.Join(missing, "ws.json")},
	} {
		out, err := runCombined(t, args...)
		want := "cannot write " + args[len(args)-1] + ": the directory " + missing + " does not exist; create it first"
		if err == nil || !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), ".voiceapi-") {
			t.Errorf("%v: %v, want %q\n%s", args[:2], err, want, out)
		}
	}
	// Root may write anywhere, so the permission case is the wording alone.
	denied := &os.PathError{Op: "open", Path: "/srv/.voiceapi-b.tar.gz-1", Err: os.ErrPermission}
	if got := outDirError("/srv/b.tar.gz", denied).Error(); !strings.HasPrefix(got, "cannot write /srv/b.tar.gz: no permission to create files in /srv") {
		t.Errorf("permission denied: %q", got)
	}
}
