package server_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/server"
)

// TestFrontSwitchesWithoutARace: requests in flight on several kept-alive connections while
// the front switches from its starting answer to the real handler each get one of the two
// whole answers, never a mix; every request after the switch gets the real handler. Run
// with -race: the switch is one atomic store against each request's atomic load.
func TestFrontSwitchesWithoutARace(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	front := server.StartServing(ln, server.Timeouts{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	defer front.Stop(time.Second)
	url := "http://" + ln.Addr().String() + "/api/v1/agents"
	// One request before the switch: the starting answer.
	client := &http.Client{Timeout: 20 * time.Second}
	if status, _ := fetch(t, client, url); status != http.StatusServiceUnavailable {
		t.Fatalf("before the switch: %d, want 503", status)
	}
	switched := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for after := false; ; {
				select {
				case <-switched:
					after = true
				default:
				}
				status, retry := fetch(t, client, url)
				switch {
				case status == http.StatusTeapot && retry == "":
					return // the real handler: done
				case status == http.StatusServiceUnavailable && retry != "" && !after:
				default:
					t.Errorf("status %d, Retry-After %q (switch seen before the request: %v)", status, retry, after)
					return
				}
			}
		}()
	}
	front.Switch(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTeapot) }))
	close(switched)
	wg.Wait()
}

// fetch GETs url and returns the status and Retry-After.
func fetch(t *testing.T, client *http.Client, url string) (int, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(context.Background(), "GET", url, nil)
	resp, err := client.Do(req)
	if err != nil {
		t.Errorf("GET %s: %v", url, err)
		return 0, ""
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Retry-After")
}

// TestFrontAnswersAreDocumented: a starting server's answer to every operation of the
// OpenAPI document (503 but for liveness) is a status that operation declares.
func TestFrontAnswersAreDocumented(t *testing.T) {
	doc, _ := openapiDocument(t)
	base := startingFront(t)
	seen := map[servedKey]string{}
	for _, op := range documentedOps(t) {
		url := pathParam.ReplaceAllString(op.path, "x1")
		req, _ := http.NewRequestWithContext(context.Background(), op.method, base+url, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", op.method, url, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		seen[servedKey{op.method, op.path, resp.StatusCode}] = op.method + " " + url
	}
	if len(seen) < 100 {
		t.Fatalf("only %d operations walked", len(seen))
	}
	faults, err := undocumentedStatuses(doc, seen)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range faults {
		t.Error(f)
	}
}

// startingFront serves a Front that is never switched, stopped when the test ends, and
// returns its base URL.
func startingFront(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	front := server.StartServing(ln, server.Timeouts{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	t.Cleanup(func() { front.Stop(time.Second) })
	return "http://" + ln.Addr().String()
}
