package netguard

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
)

func TestAllowURLPrefix(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/models/redirect" {
			http.Redirect(w, r, "/admin", http.StatusFound)
			return
		}
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	c := NewClient(Options{AllowURLPrefixes: []string{srv.URL + "/models/", srv.URL + "/exact"}})
	for path, allowed := range map[string]bool{
		"/models/":           true,
		"/models/v1/chat":    true,
		"/exact":             true,
		"/exact/sub":         true,
		"/exactly":           false, // a prefix without a slash covers its path and what is under it, no more
		"/models":            false,
		"/admin":             false,
		"/models/../admin":   false,
		"/models/%2e%2e/x":   false,
		"/models/%2E%2E/x":   false, // found by FuzzPrefixMatches: the upper-case escape passed
		"/models/%2e%2E/x":   false,
		"/models/x%2f..%2fx": false, // an escaped slash makes a segment of its own once decoded
		"/models/..;/x":      false, // Tomcat reads ..; as ..
		`/models/x\..\x`:     false, // some servers read a backslash as a slash
		"/models/redirect":   false, // the redirect's hop to /admin is guarded again
		"/models/./v1/chat":  false,
	} {
		resp, err := c.Get(srv.URL + path)
		if allowed {
			if err != nil {
				t.Errorf("%s: %v, want it through", path, err)
				continue
			}
			resp.Body.Close()
			continue
		}
		if err == nil {
			resp.Body.Close()
			t.Errorf("%s: status %d, want it refused", path, resp.StatusCode)
		} else if !errors.Is(err, ErrForbiddenAddress) {
			t.Errorf("%s: %v, want the guard's refusal", path, err)
		}
	}
	// Without the prefix the whole server is refused.
	if _, err := NewClient(Options{}).Get(srv.URL + "/models/"); !errors.Is(err, ErrForbiddenAddress) {
		t.Errorf("no prefix: %v", err)
	}
}

func TestCheckURLPrefix(t *testing.T) {
	for raw, ok := range map[string]bool{
		"http://127.0.0.1:11434/":     true,
		"https://models.internal/v1/": true,
		"http://localhost":            true,
		"ftp://host/":                 false,
		"http://user:pw@host/":        false,
		"http://host/?q=1":            false,
		"http://host/#f":              false,
		"http://host/a/../b/":         false,
		"127.0.0.1:11434":             false,
		"":                            false,
	} {
		if err := CheckURLPrefix(raw); (err == nil) != ok {
			t.Errorf("CheckURLPrefix(%q) = %v, want ok=%v", raw, err, ok)
		}
	}
	p, _ := parseURLPrefix("http://Host:80/v1")
	u, _ := url.Parse("http://host:80/v1/x")
	if !p.matches(u) {
		t.Error("host case must not matter")
	}
}
