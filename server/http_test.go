package server_test

import (
	"net/http"
	"strings"
	"testing"
)

func TestRequestFormat(t *testing.T) {
	e := newEnv(t)
	tok := e.Owner.Token
	big := `{"name":"` + strings.Repeat("a", 1<<20) + `"}`
	cases := []struct {
		name   string
		body   string
		ctype  string
		status int
	}{
		{"no content type", `{"name":"x"}`, "-", 415},
		{"text/plain", `{"name":"x"}`, "text/plain", 415},
		{"charset is fine", `{"name":"x"}`, "application/json; charset=utf-8", 201},
		{"invalid json", `{"name":`, "application/json", 400},
		{"array", `[]`, "application/json", 400},
		{"null", `null`, "application/json", 400},
		{"string", `"x"`, "application/json", 400},
		{"two objects", `{"name":"a"} {}`, "application/json", 400},
		{"over 1 MiB", big, "application/json", 413},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var r *response
			if c.ctype == "-" {
				r = e.do("POST", "/api/v1/workspaces", tok, c.body, "Content-Type", "")
			} else {
				r = e.do("POST", "/api/v1/workspaces", tok, c.body, "Content-Type", c.ctype)
			}
			expect(t, r, c.status)
			want := map[int]string{400: "malformed_json", 413: "payload_too_large", 415: "unsupported_media_type"}[c.status]
			if want != "" && r.Code() != want {
				t.Errorf("code %q, want %q", r.Code(), want)
			}
		})
	}
}

func TestUnknownFieldsAndNulls(t *testing.T) {
	e := newEnv(t)
	r := e.do("POST", "/api/v1/workspaces", e.Owner.Token, map[string]any{"nmae": "x", "description": nil})
	expectFields(t, r, "nmae", "description", "name")
}

func TestRoutingErrors(t *testing.T) {
	e := newEnv(t)
	tok := e.Owner.Token
	// Outside /api every path is the web console's: an unknown one is its HTML 404 page.
	if r := e.do("GET", "/nothing", tok, nil); r.Status != 404 || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") {
		t.Errorf("GET /nothing: %d %s, want the console's HTML 404", r.Status, r.Header.Get("Content-Type"))
	}
	cases := []struct {
		method, path string
		status       int
		allow        string
	}{
		{"GET", "/api/v1/nothing", 404, ""},
		{"GET", "/api/v1/user/", 404, ""},
		{"PATCH", "/api/v1/user", 405, "GET, HEAD, PUT"},
		{"DELETE", "/api/v1/auth/login", 405, "POST"},
		{"GET", "/api/v1/auth/logout", 405, "POST"},
		{"PATCH", "/api/v1/workspaces", 405, "GET, HEAD, POST"},
		{"POST", "/api/v1/workspaces/ws_X", 405, "DELETE, GET, HEAD, PUT"},
		{"POST", "/api/v1/workspaces/ws_X/users/usr_Y", 405, "DELETE, GET, HEAD, PUT"},
		{"PUT", "/api/v1/api-keys/3", 405, "DELETE"},
		{"POST", "/healthz", 405, "GET, HEAD"},
	}
	for _, c := range cases {
		t.Run(c.method+" "+c.path, func(t *testing.T) {
			r := e.do(c.method, c.path, tok, nil)
			expect(t, r, c.status)
			if got := r.Header.Get("Allow"); got != c.allow {
				t.Errorf("Allow = %q, want %q", got, c.allow)
			}
			want := map[int]string{404: "not_found", 405: "method_not_allowed"}[c.status]
			if r.Code() != want {
				t.Errorf("code %q, want %q", r.Code(), want)
			}
			if r.Header.Get("X-Request-Id") == "" {
				t.Error("no X-Request-Id")
			}
		})
	}
}

// Every method Allow advertises must be accepted: HEAD included.
func TestAllowedMethodsWork(t *testing.T) {
	e := newEnv(t)
	for _, path := range []string{"/api/v1/user", "/api/v1/workspaces", "/healthz"} {
		r := e.do("HEAD", path, e.Owner.Token, nil)
		if r.Status != 200 {
			t.Errorf("HEAD %s: %d, but 405 responses advertise HEAD in Allow", path, r.Status)
		}
		if len(r.Body) != 0 {
			t.Errorf("HEAD %s has a body", path)
		}
	}
}

func TestRequestID(t *testing.T) {
	e := newEnv(t)
	seen := map[string]bool{}
	for _, r := range []*response{
		e.do("GET", "/healthz", "", nil),
		e.do("GET", "/readyz", "", nil),
		e.do("GET", "/api/v1/user", e.Owner.Token, nil),
		e.do("GET", "/api/v1/user", "", nil),
		e.do("GET", "/nope", "", nil),
		e.do("POST", "/api/v1/auth/logout", e.Owner.Token, "x", "Content-Type", "text/plain"),
	} {
		id := r.Header.Get("X-Request-Id")
		if id == "" || seen[id] {
			t.Errorf("X-Request-Id %q missing or repeated", id)
		}
		seen[id] = true
	}
	r := e.do("GET", "/healthz", "", nil, "X-Request-Id", "abc-123")
	if got := r.Header.Get("X-Request-Id"); got != "abc-123" {
		t.Errorf("caller's X-Request-Id not kept: %q", got)
	}
	r = e.do("GET", "/healthz", "", nil, "X-Request-Id", "bad id\twith spaces")
	if got := r.Header.Get("X-Request-Id"); got == "" || strings.ContainsAny(got, " \t") {
		t.Errorf("unsafe X-Request-Id echoed: %q", got)
	}
	if !strings.Contains(e.Logs.String(), `"request_id":"abc-123"`) {
		t.Error("request log lacks the request id")
	}
}

func TestHealth(t *testing.T) {
	e := newEnv(t)
	r := e.do("GET", "/healthz", "", nil)
	expect(t, r, 200)
	if r.JSON()["status"] != "ok" {
		t.Errorf("healthz: %s", r.Body)
	}
	r = e.do("GET", "/readyz", "", nil)
	expect(t, r, 200)
	if r.JSON()["status"] != "ready" {
		t.Errorf("readyz: %s", r.Body)
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	_ = http.StatusOK
}
