package server_test

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"mime/multipart"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/voiceapi/voiceapi/bolt"
	"github.com/voiceapi/voiceapi/cli"
	"github.com/voiceapi/voiceapi/internal/testkit"
)

// mountSmall mounts a small filesystem of kind ("tmpfs", or "ext4" on a loop device) on
// a new directory and unmounts it when the test ends. It needs root: outside CI the test
// is skipped without it; under CI (CI=true) it fails, as CI runs as root and the proof
// must run there. The ext4 case is skipped when mkfs.ext4 or a loop device is missing.
func mountSmall(t *testing.T, kind string, size int) string {
	t.Helper()
	unable := t.Skipf
	if os.Getenv("CI") == "true" {
		unable = t.Fatalf
	}
	if os.Geteuid() != 0 {
		unable("this test needs root, to mount a small filesystem and fill it")
		return ""
	}
	dir := t.TempDir()
	switch kind {
	case "tmpfs":
		if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d", size)); err != nil {
			unable("mounting a tmpfs on %s: %v (needs root with CAP_SYS_ADMIN)", dir, err)
			return ""
		}
	case "ext4":
		mkfs, err := exec.LookPath("mkfs.ext4")
		if err != nil {
			t.Skip("mkfs.ext4 is not installed (e2fsprogs); the tmpfs case still runs")
		}
		img := filepath.Join(t.TempDir(), "fs.img")
		if err := os.WriteFile(img, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(img, int64(size)); err != nil {
			t.Fatal(err)
		}
		// -m 0: no blocks reserved for root, who would otherwise write past "full".
		if out, err := exec.Command(mkfs, "-q", "-F", "-m", "0", img).CombinedOutput(); err != nil {
			t.Fatalf("mkfs.ext4: %v: %s", err, out)
		}
		if out, err := exec.Command("mount", "-o", "loop", img, dir).CombinedOutput(); err != nil {
			// Loop devices are often missing in containers; the tmpfs case is the proof.
			t.Skipf("mounting an ext4 image on a loop device: %v: %s", err, out)
		}
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, 0); err != nil {
			t.Errorf("unmounting %s: %v", dir, err)
		}
	})
	return dir
}

// fillDisk writes a file on dir's filesystem until it is full, in smaller and smaller
// writes so that no slack is left, and returns its path.
func fillDisk(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "ballast")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for size := 256 << 10; size >= 512; size /= 2 {
		chunk := bytes.Repeat([]byte{1}, size)
		for {
			if _, err := f.Write(chunk); err != nil {
				if !errors.Is(err, syscall.ENOSPC) {
					t.Fatalf("filling the disk: %v", err)
				}
				break
			}
		}
	}
	return path
}

// TestFullDiskRefusesWritesAndRecovers runs the server on a 16 MiB tmpfs (and ext4), fills it, and
// checks that writes answer 507 insufficient_storage in the error shape while reads keep
// working; that once space is freed writes succeed again in the same process (bbolt
// rolls a failed commit back to the last committed state); and that every write
// acknowledged before, during and after survives a reopen and passes voiceapi check.
func TestFullDiskRefusesWritesAndRecovers(t *testing.T) {
	for _, kind := range []string{"tmpfs", "ext4"} {
		t.Run(kind, func(t *testing.T) { testFullDisk(t, kind) })
	}
}

func testFullDisk(t *testing.T, kind string) {
	f := openOnSmallDisk(t, kind)
	for i := range 5 {
		r := f.create(i)
		expect(t, r, 201)
		f.acked = append(f.acked, r.Data()["id"].(string))
	}
	kb := f.e.do("POST", "/api/v1/knowledge-bases", f.tok, map[string]any{"name": "manuals"})
	expect(t, kb, 201)
	kbID := kb.Data()["id"].(string)

	ballast := fillDisk(t, f.dir)
	f.checkWritesRefused(t)
	f.checkOtherWritesRefusedReadsServed(t, kbID)
	// Space freed: writes succeed again, without a restart.
	if err := os.Remove(ballast); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		r := f.create(1000 + i)
		expect(t, r, 201)
		f.acked = append(f.acked, r.Data()["id"].(string))
	}
	expect(t, uploadFile(t, f.e, f.tok, kbID, bytes.Repeat([]byte("manual text "), 64<<10)), 200)
	f.checkKeptAcrossReopen(t)
}

// fullDisk is a server over a bbolt database on a small filesystem, and the agents it
// acknowledged.
type fullDisk struct {
	dir    string
	opts   bolt.Options
	logger *slog.Logger
	logs   *testkit.SyncBuffer
	db     *bolt.DB
	srv    *httptest.Server
	e      *env
	tok    string
	acked  []string
}

// fullDiskPrompt makes each agent 16 kB, so the disk fills in a few writes.
var fullDiskPrompt = strings.Repeat("You are the support line of Example Inc. ", 400)

// openOnSmallDisk mounts a 16 MiB filesystem of kind and serves a database on it, with
// an owner.
func openOnSmallDisk(t *testing.T, kind string) *fullDisk {
	t.Helper()
	f := &fullDisk{dir: mountSmall(t, kind, 16<<20), logs: &testkit.SyncBuffer{}}
	f.logger = slog.New(slog.NewJSONHandler(f.logs, nil))
	f.opts = bolt.Options{PasswordCost: bcrypt.MinCost, Logger: f.logger, SecretKey: bytes.Repeat([]byte{7}, 32)}
	db, err := bolt.Open(f.dir, f.opts)
	if err != nil {
		t.Fatal(err)
	}
	f.db, f.srv = db, httptest.NewServer(cli.NewServer(db, f.logger).Handler())
	// Runs before the unmount (cleanups run last first), whatever state the test ends in;
	// it closes the server and database of the moment (a reopen replaces them).
	t.Cleanup(func() {
		f.srv.Close()
		f.db.Close()
	})
	f.e = &env{t: t, DB: db, URL: f.srv.URL, Logs: f.logs, Dir: f.dir}
	f.e.Owner = f.e.newUser("owner@example.com", true)
	f.tok = f.e.Owner.Token
	return f
}

// create sends the create of agent i.
func (f *fullDisk) create(i int) *response {
	return f.e.do("POST", "/api/v1/agents", f.tok, map[string]any{"name": fmt.Sprintf("agent %d", i), "prompt_config": map[string]any{"prompt": fullDiskPrompt}})
}

// checkWritesRefused creates agents on the full disk until three are refused. Writes may
// still succeed while bbolt reuses pages the file already holds; they must then be kept.
// Sooner or later a commit needs new pages, and fails: 507 insufficient_storage, logged
// for the operator.
func (f *fullDisk) checkWritesRefused(t *testing.T) {
	t.Helper()
	refused := 0
	for i := 5; i < 400 && refused < 3; i++ {
		r := f.create(i)
		switch r.Status {
		case 201:
			f.acked = append(f.acked, r.Data()["id"].(string))
		case 507:
			expect(t, r, 507)
			if r.Code() != "insufficient_storage" {
				t.Fatalf("507 with code %q: %s", r.Code(), r.Body)
			}
			refused++
		default:
			t.Fatalf("create on a full disk: status %d: %s", r.Status, r.Body)
		}
	}
	t.Logf("%d writes acknowledged, %d refused on the full disk", len(f.acked), refused)
	if refused == 0 {
		t.Fatal("no write was refused on a full disk")
	}
	if !strings.Contains(f.logs.String(), "no space left on device") {
		t.Error("the full disk was not logged for the operator")
	}
}

// checkOtherWritesRefusedReadsServed checks that an upload, whose file is written beside
// the database, is refused the same way and leaves no partial file behind; that other
// writes are refused the same way; and that reads keep working.
func (f *fullDisk) checkOtherWritesRefusedReadsServed(t *testing.T, kbID string) {
	t.Helper()
	e, tok := f.e, f.tok
	up := uploadFile(t, e, tok, kbID, bytes.Repeat([]byte("manual text "), 64<<10))
	expect(t, up, 507)
	if leftovers := tempFiles(t, f.dir); len(leftovers) > 0 {
		t.Fatalf("a refused upload left %v", leftovers)
	}
	r := e.do("PUT", "/api/v1/agents/"+f.acked[0], tok, map[string]any{"prompt_config": map[string]any{"prompt": fullDiskPrompt + "changed"}})
	if r.Status != 507 && r.Status != 200 {
		t.Fatalf("update on a full disk: %d: %s", r.Status, r.Body)
	}
	listed := e.do("GET", "/api/v1/agents?per_page=100", tok, nil)
	expect(t, listed, 200)
	if got := len(pageIDs(listed)); got != len(f.acked) {
		t.Fatalf("reads on a full disk: %d agents listed, %d acknowledged", got, len(f.acked))
	}
	expect(t, e.do("GET", "/api/v1/agents/"+f.acked[len(f.acked)-1], tok, nil), 200)
}

// checkKeptAcrossReopen closes the database, checks the file clean with voiceapi check,
// reopens it and checks that nothing acknowledged is lost and nothing refused was stored.
func (f *fullDisk) checkKeptAcrossReopen(t *testing.T) {
	t.Helper()
	f.srv.Close()
	if err := f.db.Close(); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	check := cli.NewRootCommand(&out, &errOut)
	check.SetArgs([]string{"check", "--data", f.dir})
	if err := check.Execute(); err != nil || !strings.Contains(out.String(), ": ok (") {
		t.Fatalf("voiceapi check: %v\n%s%s", err, out.String(), errOut.String())
	}
	db, err := bolt.Open(f.dir, f.opts)
	if err != nil {
		t.Fatal(err)
	}
	f.db, f.srv = db, httptest.NewServer(cli.NewServer(db, f.logger).Handler())
	f.e.DB, f.e.URL = db, f.srv.URL
	for _, id := range f.acked {
		expect(t, f.e.do("GET", "/api/v1/agents/"+id, f.tok, nil), 200)
	}
	if got := listIDs(t, f.e.do("GET", "/api/v1/agents?per_page=100", f.tok, nil)); len(got) != len(f.acked) {
		t.Fatalf("after a reopen: %d agents, %d acknowledged", len(got), len(f.acked))
	}
}

// uploadFile adds content as a file source of the knowledge base kbID.
func uploadFile(t *testing.T, e *env, tok, kbID string, content []byte) *response {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	part, err := mw.CreateFormFile("files", "manual.txt")
	if err != nil {
		t.Fatal(err)
	}
	part.Write(content)
	mw.Close()
	return e.do("POST", "/api/v1/knowledge-bases/"+kbID+"/sources/add", tok, body.Bytes(), "Content-Type", mw.FormDataContentType())
}

// tempFiles lists the temporary files (.tmp-*) under dir.
func tempFiles(t *testing.T, dir string) []string {
	var out []string
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), ".tmp-") {
			out = append(out, path)
		}
		return nil
	})
	return out
}
