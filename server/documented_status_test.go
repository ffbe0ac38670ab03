package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/voiceapi/voiceapi/server"
)

// servedKey is one kind of answer: an operation (method and route template) and a status.
type servedKey struct {
	method, route string
	status        int
}

// servedStatuses records what the servers of the test binary answered, so that TestMain
// can check each status against the document: every test's requests count, not only
// those of the tests that walk the routes.
type servedStatuses struct {
	mu sync.Mutex
	// seen keeps the first request of each kind, to name it in the report.
	seen map[servedKey]string
}

func newServedStatuses() *servedStatuses { return &servedStatuses{seen: map[servedKey]string{}} }

// record is the server's testHookServed.
func (s *servedStatuses) record(r *http.Request, route string, status int) {
	if route == "unmatched" || route == "console" {
		return // no operation of the document: the console's pages, or no route at all
	}
	method := r.Method
	if method == http.MethodHead {
		method = http.MethodGet // HEAD is answered by GET's operation
	}
	k := servedKey{method, route, status}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.seen[k]; !ok {
		s.seen[k] = r.Method + " " + r.URL.RequestURI()
	}
}

// undocumented checks what was recorded against the document the server serves.
func (s *servedStatuses) undocumented() ([]string, error) {
	doc, err := server.New(server.Services{}, server.Config{}).OpenAPI()
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return undocumentedStatuses(doc, s.seen)
}

// undocumentedStatuses lists, sorted, the answers in seen whose status the document's
// operation does not list, each with the request that drew it.
func undocumentedStatuses(doc []byte, seen map[servedKey]string) ([]string, error) {
	var d struct {
		Paths map[string]map[string]struct {
			Responses map[string]json.RawMessage `json:"responses"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, fmt.Errorf("reading the OpenAPI document: %w", err)
	}
	var out []string
	for k, example := range seen {
		op, ok := d.Paths[k.route][strings.ToLower(k.method)]
		if !ok {
			out = append(out, fmt.Sprintf("%s %s has no operation in the document (%s answered %d)", k.method, k.route, example, k.status))
			continue
		}
		code := strconv.Itoa(k.status)
		if !hasResponse(op.Responses, code) {
			out = append(out, fmt.Sprintf("%s %s answered %d, which it does not document (%s)", k.method, k.route, k.status, example))
		}
	}
	slices.Sort(out)
	return out, nil
}

// hasResponse says whether responses covers the status code: by itself, by its class
// ("4XX") or by a default.
func hasResponse(responses map[string]json.RawMessage, code string) bool {
	for _, key := range []string{code, code[:1] + "XX", "default"} {
		if _, ok := responses[key]; ok {
			return true
		}
	}
	return false
}

// TestUndocumentedStatusesReported checks the check TestMain makes: a status an operation
// lists passes, one it does not list is reported with the request, HEAD is GET's
// operation, a route the document lacks is reported, and requests off the API are left
// out.
func TestUndocumentedStatusesReported(t *testing.T) {
	doc, _ := openapiDocument(t)
	s := newServedStatuses()
	get := func(method, url string) *http.Request {
		r, err := http.NewRequest(method, "http://example.test"+url, nil)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	s.record(get("GET", "/api/v1/agents"), "/api/v1/agents", http.StatusOK)
	s.record(get("HEAD", "/api/v1/agents?per_page=1"), "/api/v1/agents", http.StatusOK)
	s.record(get("POST", "/api/v1/agents"), "/api/v1/agents", http.StatusCreated)
	s.record(get("HEAD", "/api/v1/agents/a1"), "/api/v1/agents/{agent_id}", http.StatusTeapot)
	s.record(get("GET", "/api/v1/agents"), "/api/v1/agents", http.StatusNotFound)
	s.record(get("GET", "/api/v1/nowhere"), "/api/v1/nowhere", http.StatusOK)
	s.record(get("GET", "/api/v1/nowhere"), "unmatched", http.StatusNotFound)
	s.record(get("GET", "/"), "console", http.StatusFound)
	got, err := undocumentedStatuses(doc, s.seen)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"GET /api/v1/agents answered 404, which it does not document (GET /api/v1/agents)",
		"GET /api/v1/agents/{agent_id} answered 418, which it does not document (HEAD /api/v1/agents/a1)",
		"GET /api/v1/nowhere has no operation in the document (GET /api/v1/nowhere answered 200)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("reported:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
