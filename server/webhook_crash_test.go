package server_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// proc is a `voiceapi serve` child process.
type proc struct {
	cmd   *exec.Cmd
	addr  chan string
	token chan string
}

// startServe runs the binary on dir, listening on a loopback port, and waits until it
// listens. The bootstrap token (printed on the first start only) arrives on p.token.
func startServe(t *testing.T, bin, dir string) (*proc, string) {
	t.Helper()
	cmd := exec.Command(bin, "serve", "--data", dir, "--addr", "127.0.0.1:0", "--allow-private-urls",
		"--webhook-retry-schedule", strings.TrimSuffix(strings.Repeat("50ms,", 40), ","))
	cmd.Env = append(os.Environ(), "VOICEAPI_SECRET_KEY=")
	stdout, _ := cmd.StdoutPipe()
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, addr: make(chan string, 1), token: make(chan string, 1)}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	go scanLines(stdout, func(line string) {
		if tok, ok := strings.CutPrefix(strings.TrimSpace(line), "api token:"); ok {
			p.token <- strings.TrimSpace(tok)
		}
	})
	go scanLines(stderr, func(line string) {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil && m["msg"] == "listening" {
			p.addr <- m["addr"].(string)
		}
	})
	select {
	case a := <-p.addr:
		return p, "http://" + a
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not start listening")
	}
	return nil, ""
}

func scanLines(r io.Reader, fn func(string)) {
	s := bufio.NewScanner(r)
	for s.Scan() {
		fn(s.Text())
	}
}

// TestDeliveryAfterSIGKILL: events committed while the receiver is down, then SIGKILL of the
// server process, then a restart: every event is delivered.
func TestDeliveryAfterSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := filepath.Join(t.TempDir(), "voiceapi")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/voiceapi/voiceapi").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	var down atomic.Bool
	down.Store(true)
	rc := newReceiver(t, func(int) int {
		if down.Load() {
			return 503
		}
		return 200
	})
	dir := t.TempDir()
	p, url := startServe(t, bin, dir)
	token := <-p.token
	e := &env{t: t, URL: url}
	id, secret := createWebhook(t, e, token, rc.srv.URL, "workspace.updated")
	rc.setSecret(secret)
	wsID := e.do("GET", "/api/v1/user", token, nil).Data()["current_workspace_id"].(string)
	owner := &testUser{Token: token, WorkspaceID: wsID}

	for i := range 10 {
		touchWorkspace(t, e, owner, fmt.Sprint("before ", i))
	}
	waitFor(t, 30*time.Second, "failed attempts while the receiver is down", func() bool { _, n, _ := rc.snapshot(); return n >= 10 })
	// A few more, killed right after commit: some are still in the outbox.
	for i := range 5 {
		touchWorkspace(t, e, owner, fmt.Sprint("just before the kill ", i))
	}
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	p.cmd.Wait()
	if got, _, _ := rc.snapshot(); len(got) != 0 {
		t.Fatalf("the receiver was down but accepted %d posts", len(got))
	}

	down.Store(false)
	_, url = startServe(t, bin, dir)
	e.URL = url
	r := e.do("GET", "/api/v1/audit-log?type=workspace.updated&per_page=100", token, nil)
	expect(t, r, 200)
	want := map[string]bool{}
	for _, x := range r.List() {
		want[x.(map[string]any)["id"].(string)] = true
	}
	if len(want) != 15 {
		t.Fatalf("%d events committed, want 15", len(want))
	}
	waitFor(t, 20*time.Second, "every event delivered after the restart", func() bool {
		got, _, _ := rc.snapshot()
		seen := map[string]bool{}
		for _, g := range got {
			if want[g.ID] {
				seen[g.ID] = true
			}
		}
		return len(seen) == len(want)
	})
	if _, _, bad := rc.snapshot(); len(bad) > 0 {
		t.Fatalf("signature failures: %v", bad)
	}
	// The delivery list agrees (the record commits just after the receiver answers): one
	// succeeded delivery per event.
	waitFor(t, 30*time.Second, "a succeeded delivery record per event", func() bool {
		return len(succeededEvents(t, e, token, id)) == 15
	})
}

// succeededEvents walks every page of a webhook's deliveries and returns the events with a
// succeeded delivery.
func succeededEvents(t *testing.T, e *env, token, webhookID string) map[string]bool {
	out := map[string]bool{}
	for cursor := ""; ; {
		r := e.do("GET", "/api/v1/webhooks/"+webhookID+"/deliveries?per_page=100&cursor="+cursor, token, nil)
		expect(t, r, 200)
		for _, x := range r.List() {
			if d := x.(map[string]any); d["status"] == "succeeded" {
				out[d["event_id"].(string)] = true
			}
		}
		next, _ := r.Meta()["next_cursor"].(string)
		if next == "" {
			return out
		}
		cursor = next
	}
}
