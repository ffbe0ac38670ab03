package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/spf13/pflag"
	"go.etcd.io/bbolt"
	"golang.org/x/crypto/bcrypt"

	"github.com/voiceapi/voiceapi/bolt"
)

// syncBuffer is a bytes.Buffer safe for the server's goroutines and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// logAddr returns the addr attribute of the first JSON log line with message msg.
func logAddr(logs, msg string) string {
	for _, line := range strings.Split(logs, "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) == nil && rec["msg"] == msg {
			addr, _ := rec["addr"].(string)
			return addr
		}
	}
	return ""
}

// eventually polls cond for up to 30 s (a hang guard: it costs time only when broken).
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func refused(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
	if err != nil {
		return true
	}
	c.Close()
	return false
}

// TestServeDrainsAndClosesCleanly runs the real serve command on loopback: a request in
// flight when shutdown begins completes, new connections are refused meanwhile, serve
// returns without error, and the database reopens at once and passes bbolt's check.
func TestServeDrainsAndClosesCleanly(t *testing.T) {
	dir := t.TempDir()
	out, logs := &syncBuffer{}, &syncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	o := testServeOptions(t, dir, "--metrics-addr", "127.0.0.1:0")
	done := make(chan error, 1)
	go func() { done <- runServe(ctx, o, out, logs) }()

	var addr, metricsAddr string
	eventually(t, "the listening log line", func() bool {
		addr, metricsAddr = logAddr(logs.String(), "listening"), logAddr(logs.String(), "serving metrics")
		return addr != "" && metricsAddr != ""
	})
	m := regexp.MustCompile(`api token: (\S+)`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("no bootstrap token printed:\n%s", out.String())
	}
	token := m[1]

	checkRateLimitHeaders(t, addr, token)
	checkMetricsListener(t, addr, metricsAddr)
	conn, br, body := startHeldRequest(t, addr, token)
	defer conn.Close()

	cancel() // SIGTERM
	eventually(t, "new connections to be refused", func() bool { return refused(addr) })
	select {
	case err := <-done:
		t.Fatalf("serve returned (%v) with a request in flight", err)
	default:
	}
	finishHeldRequest(t, conn, br, body)

	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not return after draining")
	}
	if !refused(metricsAddr) {
		t.Error("the metrics listener still accepts connections after shutdown")
	}
	checkClosedCleanly(t, dir)
}

// checkRateLimitHeaders checks that a normal request carries the rate-limit headers of
// the configured limit.
func checkRateLimitHeaders(t *testing.T, addr, token string) {
	t.Helper()
	req, _ := http.NewRequest("GET", "http://"+addr+"/api/v1/user", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("X-RateLimit-Limit") != "300" {
		t.Fatalf("GET /api/v1/user: %d, X-RateLimit-Limit %q", resp.StatusCode, resp.Header.Get("X-RateLimit-Limit"))
	}
	http.DefaultClient.CloseIdleConnections()
}

// checkMetricsListener checks that the private metrics listener answers without a token,
// with the requests made so far, and serves the operator's profiles, which the API
// listener does not.
func checkMetricsListener(t *testing.T, addr, metricsAddr string) {
	t.Helper()
	resp, err := http.Get("http://" + metricsAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("scraping --metrics-addr: %d, %v", resp.StatusCode, err)
	}
	if families["voiceapi_http_requests_total"] == nil || families["voiceapi_db_size_bytes"] == nil {
		t.Errorf("metrics listener lacks voiceapi's metrics: %d families", len(families))
	}
	for _, target := range []struct {
		url  string
		want int
	}{{"http://" + metricsAddr + "/debug/pprof/heap", 200}, {"http://" + addr + "/debug/pprof/heap", 404}} {
		resp, err := http.Get(target.url)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != target.want {
			t.Errorf("GET %s: %d, want %d", target.url, resp.StatusCode, target.want)
		}
	}
}

// startHeldRequest starts a request whose handler is running and waits for its body:
// with Expect: 100-continue, the server says "100 Continue" only when the handler
// starts reading the body. It returns the connection, its reader and the body to send.
func startHeldRequest(t *testing.T, addr, token string) (net.Conn, *bufio.Reader, string) {
	t.Helper()
	body := `{"name":"in flight"}`
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "POST /api/v1/workspaces HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\nExpect: 100-continue\r\n\r\n", addr, token, len(body))
	br := bufio.NewReader(conn)
	cont, err := http.ReadResponse(br, nil)
	if err != nil || cont.StatusCode != http.StatusContinue {
		conn.Close()
		t.Fatalf("want 100 Continue, got %v, %v", cont, err)
	}
	return conn, br, body
}

// finishHeldRequest sends the held request's body after the shutdown began: it must
// still be answered, 201.
func finishHeldRequest(t *testing.T, conn net.Conn, br *bufio.Reader, body string) {
	t.Helper()
	io.WriteString(conn, body)
	final, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("the in-flight request was cut: %v", err)
	}
	final.Body.Close()
	if final.StatusCode != http.StatusCreated {
		t.Fatalf("in-flight request: status %d, want 201", final.StatusCode)
	}
}

// checkClosedCleanly checks that the database in dir was closed: it opens at once, is
// consistent, and holds the workspace the in-flight request created.
func checkClosedCleanly(t *testing.T, dir string) {
	t.Helper()
	db, err := bolt.Open(dir, bolt.Options{LockTimeout: 500 * time.Millisecond})
	if err != nil {
		t.Fatalf("reopening after shutdown: %v", err)
	}
	defer db.Close()
	err = db.Bolt().View(func(tx *bbolt.Tx) error {
		for err := range tx.Check() {
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatalf("consistency check after shutdown: %v", err)
	}
	all, err := NewServices(db).Workspaces.ListAllWorkspaces(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, ws := range all {
		found = found || ws.Name == "in flight"
	}
	if !found {
		t.Error("the workspace of the in-flight request is not in the database")
	}
}

// TestServeBodyLimitFlag: --max-json-body bounds a JSON body (conventions §15: the limits
// are configurable), 413 beyond it.
func TestServeBodyLimitFlag(t *testing.T) {
	dir := t.TempDir()
	out, logs := &syncBuffer{}, &syncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	o := testServeOptions(t, dir, "--max-json-body", "64")
	done := make(chan error, 1)
	go func() { done <- runServe(ctx, o, out, logs) }()
	defer func() { cancel(); <-done }()
	var addr string
	eventually(t, "the listening log line", func() bool { addr = logAddr(logs.String(), "listening"); return addr != "" })
	m := regexp.MustCompile(`api token: (\S+)`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("no bootstrap token printed:\n%s", out.String())
	}
	body := `{"name": "` + strings.Repeat("x", 100) + `"}`
	req, _ := http.NewRequest("POST", "http://"+addr+"/api/v1/workspaces", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+m[1])
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("a %d-byte body with --max-json-body 64: %d, want 413", len(body), resp.StatusCode)
	}
}

// testServeOptions returns serve's options as its flags define them, for dir on a free
// loopback port, with args applied; the bootstrap password is hashed at bcrypt's lowest
// cost so that a first start is quick under -race.
func testServeOptions(t *testing.T, dir string, args ...string) serveOptions {
	t.Helper()
	var o serveOptions
	f := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	o.register(f)
	if err := f.Parse(append([]string{"--data", dir, "--addr", "127.0.0.1:0", "--login-ttl", "1h", "--drain-timeout", "10s"}, args...)); err != nil {
		t.Fatal(err)
	}
	o.passwordCost = bcrypt.MinCost
	return o
}
