package server

import (
	"net"
	"net/http"
	"net/netip"
	"strings"

	"github.com/voiceapi/voiceapi/console"
	"github.com/voiceapi/voiceapi/data"
)

// hasSession reports whether r carries the console's session cookie.
func hasSession(r *http.Request) bool { return console.SessionToken(r) != "" }

// authenticateSession resolves the console's session cookie (a login token) to its
// principal, as a bearer token would be. A request that may change state must also carry
// the session's CSRF token (X-CSRF-Token): the browser sends the cookie on its own, the
// token only from the console's pages.
func (s *Server) authenticateSession(r *http.Request) (*data.Principal, error) {
	tok := console.SessionToken(r)
	p, err := s.svc.Auth.Authenticate(r.Context(), tok)
	if err != nil {
		return nil, err
	}
	if !console.SafeMethod(r.Method) && !console.ValidCSRF(r, tok) {
		return nil, data.Errorf(data.EFORBIDDEN, "A request with the console's session cookie must carry its CSRF token in the %s header.", console.CSRFHeader)
	}
	return p, nil
}

// requestIsTLS reports whether r reached the client's side over TLS, for the session
// cookie's Secure flag: this server's own TLS, or a trusted proxy (--trusted-proxies) that
// says so with X-Forwarded-Proto: https or Forwarded proto=https. From any other peer those
// headers are ignored.
func (s *Server) requestIsTLS(r *http.Request) bool {
	if r.TLS != nil {
		return true
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	peer, err := netip.ParseAddr(host)
	if err != nil || !s.trusts(peer) {
		return false
	}
	if strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https") {
		return true
	}
	return strings.Contains(strings.ToLower(r.Header.Get("Forwarded")), "proto=https")
}
