package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.etcd.io/bbolt"
	"golang.org/x/crypto/bcrypt"

	"github.com/voiceapi/voiceapi/bolt"
	"github.com/voiceapi/voiceapi/cli"
	"github.com/voiceapi/voiceapi/internal/testdirs"
	"github.com/voiceapi/voiceapi/internal/testkit"
)

// createWorkspace creates a workspace over HTTP without touching t (it runs in
// goroutines) and returns its id once the server has acknowledged it.
func createWorkspace(url, token, name string) (string, error) {
	req, _ := http.NewRequest("POST", url+"/api/v1/workspaces", strings.NewReader(fmt.Sprintf(`{"name":%q}`, name)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var body struct {
		Data struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || resp.StatusCode != 201 {
		return "", fmt.Errorf("create workspace: status %d, %v", resp.StatusCode, err)
	}
	return body.Data.ID, nil
}

func TestOnlineBackupUnderWriteLoadRestores(t *testing.T) {
	testkit.NeedBolt(t) // PostgreSQL is backed up with its own tools (TestBackupRefusedOnPostgres)
	e := newEnv(t)
	stored := filepath.Join(e.Dir, bolt.FilesDir, "kb_1", "src_1.txt")
	if err := os.MkdirAll(filepath.Dir(stored), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(stored, []byte("an uploaded original"), 0o600); err != nil {
		t.Fatal(err)
	}

	load := startWorkspaceLoad(e)
	waitFor(t, 30*time.Second, "40 acknowledged writes", func() bool { return len(load.ackedSoFar()) >= 40 })
	before := load.ackedSoFar()
	r := e.do("GET", "/api/v1/admin/backup", e.Owner.Token, nil)
	during := len(load.ackedSoFar()) - len(before) // acknowledged while the backup streamed
	close(load.stop)
	load.wg.Wait()
	close(load.errs)
	for err := range load.errs {
		t.Fatalf("writer failed while the backup ran: %v", err)
	}
	expect(t, r, 200)
	if ct := r.Header.Get("Content-Type"); ct != "application/gzip" {
		t.Errorf("Content-Type = %q", ct)
	}
	if cd := r.Header.Get("Content-Disposition"); !strings.Contains(cd, "voiceapi-backup-") {
		t.Errorf("Content-Disposition = %q", cd)
	}
	t.Logf("%d workspaces acknowledged before the backup, %d while it ran; archive %d bytes", len(before), during, len(r.Body))
	checkRestoredBackup(t, r.Body, before, e.Owner.Token)
}

// workspaceLoad is four writers creating workspaces until stop, and the ids they were
// acknowledged.
type workspaceLoad struct {
	mu    sync.Mutex
	acked []string
	stop  chan struct{}
	wg    sync.WaitGroup
	errs  chan error
}

// startWorkspaceLoad starts the writers on e; close stop, wait on wg, then read errs.
func startWorkspaceLoad(e *env) *workspaceLoad {
	l := &workspaceLoad{stop: make(chan struct{}), errs: make(chan error, 8)}
	for g := 0; g < 4; g++ {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			for i := 0; ; i++ {
				select {
				case <-l.stop:
					return
				default:
				}
				id, err := createWorkspace(e.URL, e.Owner.Token, fmt.Sprintf("load %d-%d", g, i))
				if err != nil {
					l.errs <- err
					return
				}
				l.mu.Lock()
				l.acked = append(l.acked, id)
				l.mu.Unlock()
			}
		}()
	}
	return l
}

// ackedSoFar copies the ids acknowledged so far.
func (l *workspaceLoad) ackedSoFar() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.acked)
}

// checkRestoredBackup restores archive into a new directory and checks it: a manifest
// without the key, the stored file, a database that opens and checks clean, holds every
// workspace of before and authenticates token.
func checkRestoredBackup(t *testing.T, archive []byte, before []string, token string) {
	t.Helper()
	target := testdirs.NewRestoreTarget(t)
	m, err := bolt.Restore(target, bytes.NewReader(archive), bolt.RestoreOptions{})
	if err != nil {
		t.Fatalf("restore: %v", err)
	}
	if m.SchemaVersion < 1 || m.SecretKeyIncluded {
		t.Errorf("manifest %+v: want a schema version and no key (this instance's key is not a file)", m)
	}
	got, err := os.ReadFile(filepath.Join(target, bolt.FilesDir, "kb_1", "src_1.txt"))
	if err != nil || string(got) != "an uploaded original" {
		t.Errorf("stored file after restore: %q, %v", got, err)
	}

	db, err := bolt.Open(target, bolt.Options{PasswordCost: bcrypt.MinCost, NoSync: true, SecretKey: bytes.Repeat([]byte{7}, 32)})
	if err != nil {
		t.Fatalf("the restored database does not open: %v", err)
	}
	defer db.Close()
	err = db.Bolt().View(func(tx *bbolt.Tx) error {
		for err := range tx.Check() {
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatalf("consistency check of the restored database: %v", err)
	}
	all, err := cli.NewServices(db).Workspaces.ListAllWorkspaces(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, ws := range all {
		have[ws.ID] = true
	}
	for _, id := range before {
		if !have[id] {
			t.Errorf("workspace %s was acknowledged before the backup began but is not in it", id)
		}
	}
	// The restored instance works: the owner's token still authenticates.
	if _, err := cli.NewServices(db).Auth.Authenticate(context.Background(), token); err != nil {
		t.Errorf("the owner's token does not authenticate on the restored data: %v", err)
	}
}

func TestOnlineBackupAccess(t *testing.T) {
	e := newEnv(t)
	expect(t, e.do("GET", "/api/v1/admin/backup", "", nil), 401)
	user := e.newUser("user@example.com", false)
	expect(t, e.do("GET", "/api/v1/admin/backup", user.Token, nil), 403)
	expectFields(t, e.do("GET", "/api/v1/admin/backup?exclude_secret_key=perhaps", e.Owner.Token, nil), "exclude_secret_key")
}

func TestOnlineBackupIncludesOrExcludesTheKeyFile(t *testing.T) {
	testkit.NeedBolt(t)
	e := newEnv(t)
	key := []byte(strings.Repeat("ab", 32) + "\n")
	if err := os.WriteFile(filepath.Join(e.Dir, bolt.SecretKeyFile), key, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, exclude := range []bool{false, true} {
		r := e.do("GET", fmt.Sprintf("/api/v1/admin/backup?exclude_secret_key=%v", exclude), e.Owner.Token, nil)
		expect(t, r, 200)
		target := testdirs.NewRestoreTarget(t)
		m, err := bolt.Restore(target, bytes.NewReader(r.Body), bolt.RestoreOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(target, bolt.SecretKeyFile))
		if exclude {
			if m.SecretKeyIncluded || err == nil {
				t.Errorf("exclude_secret_key=true: the key was restored (%v)", m.SecretKeyIncluded)
			}
			continue
		}
		if !m.SecretKeyIncluded || !bytes.Equal(got, key) {
			t.Errorf("the key file was not restored: %q, %v", got, err)
		}
		if fi, err := os.Stat(filepath.Join(target, bolt.SecretKeyFile)); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("restored key file mode: %v, %v", fi, err)
		}
	}
}
