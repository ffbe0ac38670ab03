package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/internal/pgtest"
	"github.com/voiceapi/voiceapi/internal/testkit"
)

// TestDurabilityAfterSIGKILL builds the real binary, makes acknowledged writes over HTTP,
// kills the process without warning, restarts it on the same data and finds every write.
func TestDurabilityAfterSIGKILL(t *testing.T) {
	tmp := t.TempDir()
	bin := voiceapiBinary(t)
	dataDir := filepath.Join(tmp, "data")

	first, stdout := startServer(t, bin, dataDir)
	token := bootstrapToken(t, stdout)
	var created []string
	for i := 0; i < 50; i++ {
		status, body := call(t, "POST", first.url+"/api/v1/workspaces", token, fmt.Sprintf(`{"name":"durable %d"}`, i))
		if status != 201 {
			t.Fatalf("create %d: %d %s", i, status, body)
		}
		var out struct{ Data struct{ ID string } }
		json.Unmarshal(body, &out)
		created = append(created, out.Data.ID)
	}
	// No graceful anything: SIGKILL right after the last acknowledgement.
	if err := first.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	first.cmd.Wait()

	second, stdout := startServer(t, bin, dataDir)
	if strings.Contains(stdout, "api token") || strings.Contains(stdout, "password") {
		t.Errorf("second start printed credentials again:\n%s", stdout)
	}
	status, body := call(t, "GET", second.url+"/api/v1/workspaces?per_page=100", token, "")
	if status != 200 {
		t.Fatalf("list after restart: %d %s", status, body)
	}
	var list struct{ Data []struct{ ID string } }
	json.Unmarshal(body, &list)
	have := map[string]bool{}
	for _, w := range list.Data {
		have[w.ID] = true
	}
	for i, id := range created {
		if !have[id] {
			t.Errorf("acknowledged workspace %d (%s) lost after SIGKILL", i, id)
		}
	}
	if err := second.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- second.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("graceful stop on SIGTERM: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Error("SIGTERM did not stop the server within 10 s")
	}
}

type proc struct {
	cmd *exec.Cmd
	url string
}

// databases are the PostgreSQL databases of the data directories of the tests' servers,
// when they run on PostgreSQL: a restarted server finds the records it had.
var databases sync.Map

// databaseOf returns the database of dataDir's installation, made on first use.
func databaseOf(t *testing.T, dataDir string) string {
	if url, ok := databases.Load(dataDir); ok {
		return url.(string)
	}
	url := pgtest.Database(t)
	databases.Store(dataDir, url)
	return url
}

// startServer runs `voiceapi serve` on a free loopback port, with extra flags, and waits
// for /readyz; it returns what the process printed on stdout by then.
func startServer(t *testing.T, bin, dataDir string, extra ...string) (*proc, string) {
	t.Helper()
	return launchServer(t, bin, dataDir, true, extra...)
}

// restartServer is startServer for a test that needs nothing of stdout: it returns as
// soon as /readyz answers, so that a test can watch work the start begins (a job its
// kind queues at start) from its first moment.
func restartServer(t *testing.T, bin, dataDir string, extra ...string) *proc {
	t.Helper()
	p, _ := launchServer(t, bin, dataDir, false, extra...)
	return p
}

// launchServer starts the server; collect waits for stdout to be quiet and returns it.
func launchServer(t *testing.T, bin, dataDir string, collect bool, extra ...string) (*proc, string) {
	t.Helper()
	return launchServerAt(t, bin, dataDir, freeAddr(t), collect, extra...)
}

// freeAddr is a loopback address with a port free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// launchServerAt is launchServer listening on addr (one a load balancer was given before
// the server started).
func launchServerAt(t *testing.T, bin, dataDir, addr string, collect bool, extra ...string) (*proc, string) {
	t.Helper()
	args := []string{"serve", "--data", dataDir, "--addr", addr, "--log-level", "warn"}
	if testkit.OnPostgres() {
		args = append(args, "--database-url", databaseOf(t, dataDir))
	}
	cmd := exec.Command(bin, append(args, extra...)...)
	var stdout bytes.Buffer
	pr, pw := io.Pipe()
	cmd.Stdout = pw
	cmd.Stderr = io.Discard
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait(); pw.Close() })
	url := "http://" + addr
	deadline := time.Now().Add(15 * time.Second)
	for {
		resp, err := http.Get(url + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("server on %s not ready", addr)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The bootstrap lines are printed before the listener opens; collect them until the
	// output has been quiet for a moment.
	for quiet := !collect; !quiet; {
		select {
		case l := <-lines:
			stdout.WriteString(l + "\n")
		case <-time.After(300 * time.Millisecond):
			quiet = true
		}
	}
	return &proc{cmd: cmd, url: url}, stdout.String()
}

func call(t *testing.T, method, url, token, body string) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, url, rd)
	req.Header.Set("Authorization", "Bearer "+token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}
