package bolt_test

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/voiceapi/voiceapi/bolt"
)

// probeChild names the data directory the test binary, run again as another user, opens.
const probeChild = "VOICEAPI_TEST_PROBE_DIR"

// TestOpenRefusesADirectoryItCannotStoreFilesIn: a data directory whose database and key
// file the process may write but not the directory itself (the database file chowned
// alone), or not its files/, is refused at open, naming the directory, with the file
// system's permission error; it opened, and then every knowledge base file upload was a
// 500. Root writes anywhere, so as root the test binary opens the directory again as
// nobody.
func TestOpenRefusesADirectoryItCannotStoreFilesIn(t *testing.T) {
	if dir := os.Getenv(probeChild); dir != "" {
		checkOpenRefused(t, dir, os.Getenv(probeChild+"_REFUSED"))
		return
	}
	for _, files := range []bool{false, true} {
		base, err := os.MkdirTemp("", "voiceapi-probe-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(base) })
		dir := filepath.Join(base, "data")
		db, err := bolt.Open(dir, bolt.Options{PasswordCost: bcrypt.MinCost, NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		db.Close()
		refused := dir // the directory no file can be made in
		if files {
			refused = filepath.Join(dir, bolt.FilesDir)
			if err := os.Mkdir(refused, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if os.Geteuid() != 0 {
			if err := os.Chmod(refused, 0o500); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.Chmod(refused, 0o700) })
			checkOpenRefused(t, dir, refused)
			continue
		}
		asNobody(t, base, dir, refused)
	}
}

// asNobody gives nobody the database, the key file and every directory of dir but
// refused, and runs the test binary, copied into base, as nobody on dir.
func asNobody(t *testing.T, base, dir, refused string) {
	t.Helper()
	const nobody = 65534
	for _, p := range []string{bolt.FileName, "secret.key", "."} {
		if p := filepath.Join(dir, p); p != refused {
			if err := os.Chown(p, nobody, nobody); err != nil {
				t.Fatal(err)
			}
		}
	}
	// nobody may enter base and refused, and run the copied test binary.
	for _, d := range []string{base, refused} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(base, "bolt.test")
	copyExecutable(t, os.Args[0], bin)
	cmd := exec.Command(bin, "-test.run=^TestOpenRefusesADirectoryItCannotStoreFilesIn$", "-test.count=1")
	cmd.Env = append(os.Environ(), probeChild+"="+dir, probeChild+"_REFUSED="+refused)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("opening %s as nobody: %v\n%s", dir, err, out)
	}
}

// checkOpenRefused opens dir and wants the refusal naming refused.
func checkOpenRefused(t *testing.T, dir, refused string) {
	t.Helper()
	db, err := bolt.Open(dir, bolt.Options{PasswordCost: bcrypt.MinCost, NoSync: true})
	if err == nil {
		db.Close()
		t.Fatalf("%s opened, though no file can be stored in it", dir)
	}
	want := "files cannot be stored in " + refused + ":"
	if !errors.Is(err, fs.ErrPermission) || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("open: %v, want a permission error starting %q", err, want)
	}
}

func copyExecutable(t *testing.T, from, to string) {
	t.Helper()
	src, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
}
