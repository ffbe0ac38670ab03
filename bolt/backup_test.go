package bolt_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/voiceapi/voiceapi/bolt"
	"github.com/voiceapi/voiceapi/cli"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testdirs"
)

// stoppedInstance makes a data directory with a user, a key file and a stored file, and
// closes the database, as `voiceapi backup` finds it.
func stoppedInstance(t *testing.T) (dir, userID string) {
	t.Helper()
	dir = t.TempDir()
	db, err := bolt.Open(dir, bolt.Options{PasswordCost: bcrypt.MinCost, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	u := mustUser(t, db, "a@example.com")
	db.Close()
	if err := os.MkdirAll(filepath.Join(dir, bolt.FilesDir, "kb_1"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, bolt.FilesDir, "kb_1", "doc.pdf"), []byte("%PDF-1.7 original"), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir, u.ID
}

func backupOf(t *testing.T, dir string, opts data.BackupOptions) ([]byte, *bolt.Manifest) {
	t.Helper()
	var buf bytes.Buffer
	m, err := bolt.BackupStopped(dir, &buf, opts)
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), m
}

func TestBackupStoppedAndRestore(t *testing.T) {
	dir, userID := stoppedInstance(t)
	archive, m := backupOf(t, dir, data.BackupOptions{})
	names := map[string]bool{}
	for _, mm := range m.Members {
		names[mm.Name] = len(mm.SHA256) == 64 && mm.Size > 0
	}
	if !names["voiceapi.db"] || !names["secret.key"] || !names["files/kb_1/doc.pdf"] || len(names) != 3 || !m.SecretKeyIncluded {
		t.Fatalf("manifest members %v (key included %v)", names, m.SecretKeyIncluded)
	}

	target := testdirs.NewRestoreTarget(t)
	if _, err := bolt.Restore(target, bytes.NewReader(archive), bolt.RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(target); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("restored directory mode: %v, %v", fi, err)
	}
	// The restored key file is the one in use: Open must not make a new one, and the
	// user must be there.
	db, err := bolt.Open(target, bolt.Options{PasswordCost: bcrypt.MinCost, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := cli.NewServices(db).Users.User(asAdmin(), userID); err != nil {
		t.Errorf("restored user: %v", err)
	}
	orig, _ := os.ReadFile(filepath.Join(dir, bolt.SecretKeyFile))
	restored, _ := os.ReadFile(filepath.Join(target, bolt.SecretKeyFile))
	if len(orig) == 0 || !bytes.Equal(orig, restored) {
		t.Error("the secret key file was not restored as it was")
	}
}

func TestBackupStoppedFailsFastOnARunningServer(t *testing.T) {
	dir := t.TempDir()
	db, err := bolt.Open(dir, bolt.Options{PasswordCost: bcrypt.MinCost, NoSync: true, SecretKey: make([]byte, 32)})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	start := time.Now()
	_, err = bolt.BackupStopped(dir, io.Discard, data.BackupOptions{})
	if !errors.Is(err, bolt.ErrLocked) {
		t.Fatalf("err = %v, want ErrLocked", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Errorf("took %v to give up", time.Since(start))
	}
}

func TestRestoreRefusesNonEmptyUnlessForced(t *testing.T) {
	dir, _ := stoppedInstance(t)
	archive, _ := backupOf(t, dir, data.BackupOptions{ExcludeSecretKey: true})

	target := t.TempDir()
	stale := filepath.Join(target, bolt.FilesDir, "old.txt")
	os.MkdirAll(filepath.Dir(stale), 0o700)
	os.WriteFile(stale, []byte("old"), 0o600)
	os.WriteFile(filepath.Join(target, "keep.txt"), []byte("operator's"), 0o600)

	if _, err := bolt.Restore(target, bytes.NewReader(archive), bolt.RestoreOptions{}); !errors.Is(err, bolt.ErrNotEmpty) {
		t.Fatalf("err = %v, want ErrNotEmpty", err)
	}
	m, err := bolt.Restore(target, bytes.NewReader(archive), bolt.RestoreOptions{Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if m.SecretKeyIncluded {
		t.Error("the key was excluded but the manifest says included")
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Error("a stored file of the replaced data survived a forced restore")
	}
	if _, err := os.Stat(filepath.Join(target, bolt.FilesDir, "kb_1", "doc.pdf")); err != nil {
		t.Error("the archive's stored file is missing")
	}
	if _, err := os.Stat(filepath.Join(target, "keep.txt")); err != nil {
		t.Error("a forced restore removed a file it does not own")
	}
	if _, err := os.Stat(filepath.Join(target, bolt.SecretKeyFile)); err == nil {
		t.Error("an excluded key file appeared")
	}
}

func TestRestoreRefusesForcedRestoreUnderARunningServer(t *testing.T) {
	dir, _ := stoppedInstance(t)
	archive, _ := backupOf(t, dir, data.BackupOptions{})
	db, err := bolt.Open(dir, bolt.Options{PasswordCost: bcrypt.MinCost, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := bolt.Restore(dir, bytes.NewReader(archive), bolt.RestoreOptions{Force: true}); !errors.Is(err, bolt.ErrLocked) {
		t.Fatalf("err = %v, want ErrLocked", err)
	}
}

// rewrite copies an archive through edit, which may change or add members.
func rewrite(t *testing.T, archive []byte, edit func(hdr *tar.Header, body []byte) []byte, extra ...[2]string) []byte {
	t.Helper()
	gr, err := gzip.NewReader(bytes.NewReader(archive))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gr)
	var out bytes.Buffer
	gw := gzip.NewWriter(&out)
	tw := tar.NewWriter(gw)
	for _, x := range extra {
		tw.WriteHeader(&tar.Header{Name: x[0], Mode: 0o600, Size: int64(len(x[1])), Typeflag: tar.TypeReg})
		tw.Write([]byte(x[1]))
	}
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(tr)
		body = edit(hdr, body)
		hdr.Size = int64(len(body))
		tw.WriteHeader(hdr)
		tw.Write(body)
	}
	tw.Close()
	gw.Close()
	return out.Bytes()
}

func TestRestoreRejectsDamagedOrHostileArchives(t *testing.T) {
	dir, _ := stoppedInstance(t)
	archive, _ := backupOf(t, dir, data.BackupOptions{})
	same := func(hdr *tar.Header, b []byte) []byte { return b }
	cases := map[string][]byte{
		"flipped byte in a stored file": rewrite(t, archive, func(hdr *tar.Header, b []byte) []byte {
			if strings.HasPrefix(hdr.Name, "files/") {
				b[0] ^= 1
			}
			return b
		}),
		"member outside the data directory": rewrite(t, archive, same, [2]string{"../escape.txt", "x"}),
		"absolute member":                   rewrite(t, archive, same, [2]string{"/tmp/abs.txt", "x"}),
		"member not in the manifest":        rewrite(t, archive, same, [2]string{"files/extra.txt", "x"}),
		"newer schema": rewrite(t, archive, func(hdr *tar.Header, b []byte) []byte {
			if hdr.Name == bolt.ManifestName {
				return regexp.MustCompile(`"schema_version": \d+`).ReplaceAll(b, []byte(`"schema_version": 99`))
			}
			return b
		}),
		"truncated":     archive[:len(archive)/2],
		"not a tar.gz":  []byte("hello"),
		"two manifests": rewrite(t, archive, same, [2]string{bolt.ManifestName, "{}"}),
		"no manifest": rewrite(t, archive, func(hdr *tar.Header, b []byte) []byte {
			if hdr.Name == bolt.ManifestName {
				hdr.Name = "files/manifest.json"
			}
			return b
		}),
	}
	for name, bad := range cases {
		t.Run(name, func(t *testing.T) {
			target := filepath.Join(t.TempDir(), "d")
			if _, err := bolt.Restore(target, bytes.NewReader(bad), bolt.RestoreOptions{}); err == nil {
				t.Fatal("restore accepted the archive")
			} else {
				t.Log(err)
			}
			if _, err := os.Stat(target); !os.IsNotExist(err) {
				t.Error("a failed restore left the target directory behind")
			}
			leftovers, _ := filepath.Glob(filepath.Join(filepath.Dir(target), ".voiceapi-restore-*"))
			if len(leftovers) != 0 {
				t.Errorf("staging left behind: %v", leftovers)
			}
		})
	}
}

func asAdmin() context.Context {
	return data.WithPrincipal(context.Background(), &data.Principal{IsAdmin: true})
}
