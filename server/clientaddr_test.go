package server_test

import (
	"encoding/json"
	"net/netip"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/server"
)

// newProxiedEnv is a server with a login limit of 2 a minute that trusts the proxies of
// cidrs. Test clients connect from 127.0.0.1.
func newProxiedEnv(t *testing.T, cidrs ...string) *env {
	proxies, err := server.ParseTrustedProxies(cidrs)
	if err != nil {
		t.Fatal(err)
	}
	return newEnvWith(t, nil, func(c *server.Config) {
		c.LoginRateLimit = 2
		c.TrustedProxies = proxies
	})
}

// loginFrom attempts a login with a wrong password, sending xff as X-Forwarded-For.
func loginFrom(e *env, email, xff string) *response {
	return e.do("POST", "/api/v1/auth/login", "", map[string]any{"email": email, "password": "wrong-password"}, "X-Forwarded-For", xff)
}

// clientsLogged returns the client address of each request line of the log.
func clientsLogged(t *testing.T, e *env) []string {
	var out []string
	for line := range strings.SplitSeq(e.Logs.String(), "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) != nil || rec["msg"] != "request" {
			continue
		}
		c, _ := rec["client"].(string)
		out = append(out, c)
	}
	return out
}

// TestLoginLimitKeyedByForwardedAddressBehindTrustedProxy: with loopback trusted, each
// forwarded client address has its own login allowance, and a client cannot escape its
// limit by writing addresses left of the one the proxy appended.
func TestLoginLimitKeyedByForwardedAddressBehindTrustedProxy(t *testing.T) {
	e := newProxiedEnv(t, "127.0.0.0/8", "::1/128")
	email := e.Owner.Email
	expect(t, loginFrom(e, email, "203.0.113.7"), 422)
	expect(t, loginFrom(e, email, "203.0.113.7"), 422)
	expect(t, loginFrom(e, email, "203.0.113.7"), 429)
	// A forged left-hand address does not change who the proxy says the client is.
	expect(t, loginFrom(e, email, "198.51.100.1, 203.0.113.7"), 429)
	// Another client behind the same proxy has its own allowance.
	expect(t, loginFrom(e, email, "203.0.113.8"), 422)
	expect(t, e.do("POST", "/api/v1/auth/login", "", map[string]any{"email": email, "password": "wrong-password"}, "Forwarded", `for="203.0.113.9:443"`), 422)
	logged := clientsLogged(t, e)
	want := []string{"203.0.113.7", "203.0.113.7", "203.0.113.7", "203.0.113.7", "203.0.113.8", "203.0.113.9"}
	if strings.Join(logged, " ") != strings.Join(want, " ") {
		t.Fatalf("request log clients %v, want %v", logged, want)
	}
}

// TestForwardedHeadersIgnoredFromUntrustedPeer: when the peer is not a trusted proxy, the
// headers do not matter: every attempt counts against the peer's own address.
func TestForwardedHeadersIgnoredFromUntrustedPeer(t *testing.T) {
	for _, cidrs := range [][]string{nil, {"10.0.0.0/8"}} {
		e := newProxiedEnv(t, cidrs...)
		email := e.Owner.Email
		expect(t, loginFrom(e, email, "203.0.113.7"), 422)
		expect(t, loginFrom(e, email, "203.0.113.8"), 422)
		expect(t, loginFrom(e, email, "203.0.113.9"), 429)
		expect(t, e.do("POST", "/api/v1/auth/login", "", map[string]any{"email": email, "password": "x-password"}, "Forwarded", "for=203.0.113.10"), 429)
		for _, c := range clientsLogged(t, e) {
			if a, err := netip.ParseAddr(c); err != nil || !a.IsLoopback() {
				t.Fatalf("trusting %v: logged client %q, want the loopback peer", cidrs, c)
			}
		}
	}
}
