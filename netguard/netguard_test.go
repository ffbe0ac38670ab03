package netguard

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Only loopback is ever contacted: refused addresses fail in the dialer's Control hook,
// before any packet leaves, and allowed requests go to httptest servers on 127.0.0.1.

func TestOutboundClientRefusesInternalAddresses(t *testing.T) {
	c := NewClient(Options{Timeout: 2 * time.Second})
	for _, u := range []string{
		"http://127.0.0.1:1/", "http://10.1.2.3/", "http://[::1]:80/", "http://169.254.169.254/latest/meta-data",
		"http://[::ffff:127.0.0.1]/", "http://0.0.0.0/", "http://192.168.1.1/", "http://100.64.0.1/", "http://localhost:1/",
	} {
		resp, err := c.Get(u)
		if err == nil {
			resp.Body.Close()
			t.Errorf("GET %s: no error, want refusal", u)
			continue
		}
		if !errors.Is(err, ErrForbiddenAddress) {
			t.Errorf("GET %s: %v, want ErrForbiddenAddress", u, err)
		}
	}
}

func TestOutboundClientReachesLoopbackWhenAllowed(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "hello from loopback")
	}))
	defer srv.Close()

	resp, err := NewClient(Options{AllowPrivate: true}).Get(srv.URL)
	if err != nil {
		t.Fatalf("GET with AllowPrivate: %v", err)
	}
	body, err := ReadLimited(resp.Body, 1024)
	resp.Body.Close()
	if err != nil || string(body) != "hello from loopback" {
		t.Fatalf("body %q, err %v", body, err)
	}

	_, err = NewClient(Options{}).Get(srv.URL)
	if !errors.Is(err, ErrForbiddenAddress) {
		t.Fatalf("same server without AllowPrivate: %v, want ErrForbiddenAddress", err)
	}
}

func TestOutboundClientRedirectLimit(t *testing.T) {
	// /hop/N redirects to /hop/N-1; /hop/0 answers.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/hop/"))
		if n > 0 {
			http.Redirect(w, r, fmt.Sprintf("/hop/%d", n-1), http.StatusFound)
			return
		}
		io.WriteString(w, "arrived")
	}))
	defer srv.Close()
	c := NewClient(Options{AllowPrivate: true, MaxRedirects: 2})

	resp, err := c.Get(srv.URL + "/hop/2")
	if err != nil {
		t.Fatalf("2 redirects with a limit of 2: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if _, err := c.Get(srv.URL + "/hop/3"); err == nil || !strings.Contains(err.Error(), "redirects") {
		t.Fatalf("3 redirects with a limit of 2: %v, want a redirect error", err)
	}
	none := NewClient(Options{AllowPrivate: true, MaxRedirects: -1})
	if _, err := none.Get(srv.URL + "/hop/1"); err == nil {
		t.Fatal("MaxRedirects -1 followed a redirect")
	}
}

func TestOutboundClientRefusesOtherSchemes(t *testing.T) {
	c := NewClient(Options{AllowPrivate: true})
	if _, err := c.Get("file:///etc/passwd"); err == nil {
		t.Fatal("file:// was fetched")
	}
}

func TestOutboundClientTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-release
	}))
	defer srv.Close()
	defer close(release)
	start := time.Now()
	_, err := NewClient(Options{AllowPrivate: true, Timeout: 200 * time.Millisecond}).Get(srv.URL)
	if err == nil || time.Since(start) > 2*time.Second {
		t.Fatalf("err %v after %v, want a timeout near 200ms", err, time.Since(start))
	}
}

func TestBlockedAddr(t *testing.T) {
	for addr, blocked := range map[string]bool{
		"127.0.0.1": true, "127.255.0.9": true, "10.0.0.1": true, "172.16.5.4": true, "172.32.0.1": false,
		"192.168.0.1": true, "169.254.169.254": true, "100.64.0.1": true, "100.100.100.200": true,
		"0.0.0.0": true, "0.1.2.3": true, "224.0.0.1": true, "255.255.255.255": true,
		"8.8.8.8": false, "93.184.216.34": false, "1.1.1.1": false,
		"::1": true, "::": true, "fc00::1": true, "fd00:ec2::254": true, "fe80::1": true, "ff02::1": true,
		"::ffff:127.0.0.1": true, "::ffff:10.0.0.1": true, "::ffff:8.8.8.8": false,
		"64:ff9b::7f00:1": true, "64:ff9b::808:808": false, "2002:7f00:1::": true, "2002:808:808::": false,
		"2606:4700:4700::1111": false, "::127.0.0.1": true,
		"fe80::1%eth0": true, "::ffff:8.8.8.8%0": true, // any zone, mapped too (FuzzGuardControl found the mapped one passed)
		// Teredo and IPv4-translated are refused whatever they carry, at both edges of
		// their ranges, and not past them.
		"2001::": true, "2001:0:4136:e378:8000:63bf:3fff:fdd2": true, "2001:0:7f00:1::": true,
		"2001:0:ffff:ffff:ffff:ffff:ffff:ffff": true, "2001:1::1": false, "2000:ffff:ffff:ffff:ffff:ffff:ffff:ffff": false,
		"::ffff:0:0.0.0.0": true, "::ffff:0:7f00:1": true, "::ffff:0:808:808": true, "::ffff:0:ffff:ffff": true,
		"::ffff:1:0:0": false, "::fffe:ffff:ffff:ffff": false,
	} {
		got := blockedAddr(netip.MustParseAddr(addr)) != ""
		if got != blocked {
			t.Errorf("blockedAddr(%s) = %v, want %v", addr, got, blocked)
		}
	}
}

func TestCheckURL(t *testing.T) {
	for raw, ok := range map[string]bool{
		"https://example.com/faq":                       true,
		"http://example.com:8080/a?b=c":                 true,
		"https://[2001:db8::1]/":                        true, // syntax only: the dialer judges addresses
		"ftp://example.com/":                            false,
		"javascript:alert(1)":                           false,
		"/relative/path":                                false,
		"https://":                                      false,
		"https://user:pass@example.com/":                false,
		"https://example.com:99999/":                    false,
		" https://example.com/":                         false,
		"https://exa mple.com/":                         false,
		"mailto:someone@example.com":                    false,
		"https://" + strings.Repeat("a", 2050) + ".com": false,
	} {
		if err := CheckURL(raw); (err == nil) != ok {
			t.Errorf("CheckURL(%q) = %v, want ok=%v", raw, err, ok)
		}
	}
}

// TestCheckURLLengthInCharacters: MaxURLLength counts characters, as the message and the
// OpenAPI document's maxLength do; a URL at the bound in two-byte characters passes.
func TestCheckURLLengthInCharacters(t *testing.T) {
	const base = "https://example.com/"
	for _, c := range []struct {
		n  int
		ok bool
	}{{MaxURLLength, true}, {MaxURLLength + 1, false}} {
		raw := base + strings.Repeat("é", c.n-len(base))
		if err := CheckURL(raw); (err == nil) != c.ok {
			t.Errorf("a URL of %d characters (%d bytes): %v, want ok=%v", c.n, len(raw), err, c.ok)
		}
	}
}

func TestReadLimited(t *testing.T) {
	b, err := ReadLimited(strings.NewReader("12345"), 5)
	if err != nil || string(b) != "12345" {
		t.Fatalf("at the limit: %q %v", b, err)
	}
	if _, err := ReadLimited(strings.NewReader("123456"), 5); !errors.Is(err, ErrResponseTooLarge) {
		t.Fatalf("past the limit: %v, want ErrResponseTooLarge", err)
	}
}

// TestCrossOriginRedirectDropsCredentialHeaders: a redirect to another origin carries no
// header a credential may travel in (Go itself drops only Authorization and cookies), so
// a tool or provider that redirects cannot hand a function's headers or Azure's api-key
// to a server of its choosing; a redirect within the origin keeps them.
func TestCrossOriginRedirectDropsCredentialHeaders(t *testing.T) {
	got := make(chan http.Header, 1)
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Clone()
	}))
	defer other.Close()
	first := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/away":
			http.Redirect(w, r, other.URL+"/landed", http.StatusTemporaryRedirect)
		case "/here":
			http.Redirect(w, r, "/landed", http.StatusTemporaryRedirect)
		default:
			got <- r.Header.Clone()
		}
	}))
	defer first.Close()
	c := NewClient(Options{AllowPrivate: true})
	send := func(path string) http.Header {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, first.URL+path, strings.NewReader(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Api-Key", "azure-secret")
		req.Header.Set("X-Tool-Token", "tool-secret")
		req.Header.Set("Authorization", "Bearer s3cret")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return <-got
	}
	away := send("/away")
	for _, name := range []string{"Api-Key", "X-Tool-Token", "Authorization"} {
		if v := away.Get(name); v != "" {
			t.Errorf("the other origin received %s: %q", name, v)
		}
	}
	if away.Get("Content-Type") != "application/json" {
		t.Errorf("Content-Type dropped across origins: %q", away.Get("Content-Type"))
	}
	here := send("/here")
	if here.Get("Api-Key") != "azure-secret" || here.Get("X-Tool-Token") != "tool-secret" || here.Get("Authorization") != "Bearer s3cret" {
		t.Errorf("a redirect within the origin lost the headers: %v", here)
	}
}
