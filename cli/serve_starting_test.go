package cli

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/voiceapi/voiceapi/bolt"
)

// TestServeAnswersWhileTheStoreOpens: while serve waits for another process's lock on the
// bbolt file, its bound port answers at once instead of holding the connection: /healthz
// 200, /readyz and the API 503 service_unavailable with Retry-After, the console a 503
// page. Once the lock is released, the same port serves the real handlers.
func TestServeAnswersWhileTheStoreOpens(t *testing.T) {
	dir := t.TempDir()
	// The first holder of the file, as a running server would be.
	held, err := bolt.Open(dir, bolt.Options{PasswordCost: bcrypt.MinCost})
	if err != nil {
		t.Fatal(err)
	}
	out, logs := &syncBuffer{}, &syncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	o := testServeOptions(t, dir)
	o.lockTimeout = 5 * time.Minute // the test releases the lock; this only bounds a hang
	done := make(chan error, 1)
	go func() { done <- runServe(ctx, o, out, logs) }()
	released := false
	defer func() {
		cancel()
		if !released {
			held.Close() // serve would wait for the lock before it returns
		}
		<-done
	}()
	var addr string
	eventually(t, "the opening log line", func() bool { addr = logAddr(logs.String(), "opening the store"); return addr != "" })

	// The timeout only turns a hang (the defect) into a failure; no answer's speed is
	// asserted.
	client := &http.Client{Timeout: 20 * time.Second}
	get := func(path string) (*http.Response, map[string]any) {
		t.Helper()
		resp, err := client.Get("http://" + addr + path)
		if err != nil {
			t.Fatalf("GET %s while the store opens: %v", path, err)
		}
		defer resp.Body.Close()
		var body map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
			t.Fatalf("GET %s: body not JSON: %v", path, err)
		}
		return resp, body
	}
	if resp, _ := get("/healthz"); resp.StatusCode != http.StatusOK {
		t.Errorf("/healthz while the store opens: %d, want 200 (the process is up)", resp.StatusCode)
	}
	for _, path := range []string{"/readyz", "/api/v1/agents"} {
		resp, body := get(path)
		if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
			t.Errorf("%s while the store opens: %d, Retry-After %q; want 503 with Retry-After", path, resp.StatusCode, resp.Header.Get("Retry-After"))
		}
		if body["code"] != "service_unavailable" || body["message"] == "" {
			t.Errorf("%s while the store opens: body %v, want the error shape with code service_unavailable", path, body)
		}
		if resp.Header.Get("X-Request-Id") == "" {
			t.Errorf("%s while the store opens: no X-Request-Id", path)
		}
	}
	// The console's home is a page saying the server is starting (server's
	// TestFrontShowsBrowsersAStartingPage reads it), 503 too.
	resp, err := client.Get("http://" + addr + "/")
	if err != nil {
		t.Fatalf("GET / while the store opens: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Errorf("/ while the store opens: %d, Retry-After %q, %s; want an HTML 503 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"), resp.Header.Get("Content-Type"))
	}
	if logAddr(logs.String(), "listening") != "" {
		t.Fatal("serve opened the store while the test held its lock")
	}

	held.Close()
	released = true
	eventually(t, "the listening log line", func() bool { return logAddr(logs.String(), "listening") != "" })
	if resp, body := get("/readyz"); resp.StatusCode != http.StatusOK {
		t.Errorf("/readyz once the store is open: %d %v, want 200", resp.StatusCode, body)
	}
	// The real API: it asks for a token.
	if resp, _ := get("/api/v1/agents"); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("/api/v1/agents once the store is open, without a token: %d, want 401", resp.StatusCode)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("serve: %v", err)
	}
	done <- nil // the deferred wait
}
