package server_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
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

// TestFrontAnswersWrongMethodsAsTheRouter: while starting, a method a path's routes do not
// take gets the running server's answer (405 method_not_allowed with the same Allow), not
// 503: waiting would not make it right.
func TestFrontAnswersWrongMethodsAsTheRouter(t *testing.T) {
	base := startingFront(t)
	running := httptest.NewServer(server.New(server.Services{}, server.Config{Logger: slog.New(slog.DiscardHandler)}).Handler())
	defer running.Close()
	for _, c := range []struct{ method, path, allow string }{
		{"POST", "/healthz", "GET, HEAD"},
		{"DELETE", "/readyz", "GET, HEAD"},
		{"PUT", "/api/v1/openapi.json", "GET, HEAD"},
		{"OPTIONS", "/api/v1/agents", "GET, HEAD, POST"},
		{"POST", "/api/v1/agents/a1", "DELETE, GET, HEAD, PUT"},
	} {
		got, want := startingAnswer(t, c.method, base+c.path), startingAnswer(t, c.method, running.URL+c.path)
		if got != want || got.status != http.StatusMethodNotAllowed || got.allow != c.allow || got.code != "method_not_allowed" {
			t.Errorf("%s %s while starting: %+v; running: %+v; want 405 with Allow %q", c.method, c.path, got, want, c.allow)
		}
	}
	// A right method still waits for the store.
	if got := startingAnswer(t, "GET", base+"/api/v1/agents/a1"); got.status != http.StatusServiceUnavailable || got.code != "service_unavailable" {
		t.Errorf("GET of a route while starting: %+v, want 503", got)
	}
}

// startingAnswered is what TestFrontAnswersWrongMethodsAsTheRouter compares of two answers.
type startingAnswered struct {
	status      int
	allow, code string
}

func startingAnswer(t *testing.T, method, url string) startingAnswered {
	t.Helper()
	req, _ := http.NewRequestWithContext(context.Background(), method, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	var body struct{ Code string }
	json.NewDecoder(resp.Body).Decode(&body)
	return startingAnswered{resp.StatusCode, resp.Header.Get("Allow"), body.Code}
}

// TestFrontShowsBrowsersAStartingPage: while starting, a console page is a small HTML page
// in the console's look (its stylesheet is served) that says so and reloads itself after
// Retry-After seconds; an API path keeps its JSON, even for a browser. Both are 503.
func TestFrontShowsBrowsersAStartingPage(t *testing.T) {
	base := startingFront(t)
	get := func(path string) (*http.Response, string) {
		req, _ := http.NewRequestWithContext(context.Background(), "GET", base+path, nil)
		req.Header.Set("Accept", "text/html,application/xhtml+xml,*/*;q=0.8")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp, string(body)
	}
	for _, path := range []string{"/", "/agents", "/login?next=%2Fagents"} {
		resp, page := get(path)
		retry := resp.Header.Get("Retry-After")
		if resp.StatusCode != http.StatusServiceUnavailable || retry != "2" || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
			t.Fatalf("GET %s: %d, Retry-After %q, %s; want a 503 page with Retry-After 2", path, resp.StatusCode, retry, resp.Header.Get("Content-Type"))
		}
		if !strings.Contains(page, `<meta http-equiv="refresh" content="`+retry+`">`) || !strings.Contains(page, "voiceapi is starting") {
			t.Fatalf("GET %s: the page neither refreshes after %s s nor says the server is starting:\n%s", path, retry, page)
		}
		if resp.Header.Get("Content-Security-Policy") == "" {
			t.Errorf("GET %s: no Content-Security-Policy", path)
		}
		css := regexp.MustCompile(`href="(/static/[^"]+\.css)"`).FindStringSubmatch(page)
		if css == nil {
			t.Fatalf("GET %s: no stylesheet:\n%s", path, page)
		}
		if resp, _ := get(css[1]); resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/css") {
			t.Errorf("GET %s while starting: %d %s, want the stylesheet", css[1], resp.StatusCode, resp.Header.Get("Content-Type"))
		}
	}
	for _, path := range []string{"/api/v1/agents", "/readyz"} {
		resp, body := get(path)
		var e struct{ Code string }
		json.Unmarshal([]byte(body), &e)
		if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "2" || e.Code != "service_unavailable" {
			t.Errorf("GET %s for a browser while starting: %d, Retry-After %q, %s; want JSON 503", path, resp.StatusCode, resp.Header.Get("Retry-After"), body)
		}
	}
}
