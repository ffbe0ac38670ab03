package server

import (
	"net/http/httptest"
	"net/netip"
	"testing"
)

// The session cookie is Secure when the client reached us over TLS: our own, or a trusted
// proxy's that says so; a forwarded protocol from anyone else is ignored.
func TestRequestIsTLSBehindTrustedProxies(t *testing.T) {
	s := New(Services{}, Config{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}})
	cases := []struct {
		peer, header, value string
		want                bool
	}{
		{"10.1.2.3:5000", "X-Forwarded-Proto", "https", true},
		{"10.1.2.3:5000", "Forwarded", "for=192.0.2.7;proto=https", true},
		{"10.1.2.3:5000", "X-Forwarded-Proto", "http", false},
		{"10.1.2.3:5000", "", "", false},
		{"192.0.2.9:5000", "X-Forwarded-Proto", "https", false},
		{"192.0.2.9:5000", "Forwarded", "proto=https", false},
	}
	for _, c := range cases {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = c.peer
		if c.header != "" {
			r.Header.Set(c.header, c.value)
		}
		if got := s.requestIsTLS(r); got != c.want {
			t.Errorf("peer %s %s: %q: %v, want %v", c.peer, c.header, c.value, got, c.want)
		}
	}
}
