package netguard

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestAttackFormsNeverConnect tries the usual ways around an SSRF guard against a loopback
// server that counts the requests it is sent: other spellings of a loopback address
// (decimal, octal, hexadecimal, short forms, IPv4-mapped and NAT64 IPv6, a zone), a name
// resolving to loopback, and redirects from a URL the operator allowed (--allow-url-prefix)
// to a guarded one, to another scheme, or to a spelling of loopback. Only the allowed
// prefix may be reached; the check is on the dialed address, so no spelling gets past it.
func TestAttackFormsNeverConnect(t *testing.T) {
	var guarded atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if to, ok := strings.CutPrefix(r.URL.Path, "/allowed/redirect/"); ok {
			http.Redirect(w, r, strings.Replace(to, ":/", "://", 1), http.StatusFound)
			return
		}
		if !strings.HasPrefix(r.URL.Path, "/allowed/") {
			guarded.Add(1)
		}
		w.Write([]byte("ok"))
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	c := NewClient(Options{Timeout: 2 * time.Second, AllowURLPrefixes: []string{srv.URL + "/allowed/"}})

	resp, err := c.Get(srv.URL + "/allowed/x")
	if err != nil {
		t.Fatalf("the allowed prefix: %v", err)
	}
	resp.Body.Close()

	hosts := []string{"2130706433", "0x7f000001", "0177.0.0.1", "0x7f.0.0.1", "127.1", "127.0.1",
		"[::ffff:7f00:1]", "[::ffff:127.0.0.1]", "[64:ff9b::7f00:1]", "[::127.0.0.1]", "[::1]",
		"[fe80::1%25lo]", "localhost", "LOCALHOST.", "0", "0.0.0.0"}
	var urls []string
	for _, h := range hosts {
		urls = append(urls, "http://"+h+":"+port+"/secret")
	}
	for _, u := range append([]string{}, urls...) {
		urls = append(urls, srv.URL+"/allowed/redirect/"+strings.Replace(u, "://", ":/", 1))
	}
	urls = append(urls, srv.URL+"/allowed/redirect/"+"http:/127.0.0.1:"+port+"/secret",
		srv.URL+"/allowed/redirect/"+"http:/127.0.0.1:"+port+"/allowed/../secret",
		srv.URL+"/allowed/redirect/file:/etc/passwd",
		srv.URL+"/allowed/redirect/gopher:/127.0.0.1:"+port+"/secret")
	for _, u := range urls {
		resp, err := c.Get(u)
		if err == nil {
			resp.Body.Close()
			t.Errorf("GET %s: %s, want a refusal", u, resp.Status)
		}
	}
	if n := guarded.Load(); n != 0 {
		t.Fatalf("the guarded paths of the loopback server were reached %d times", n)
	}
}
