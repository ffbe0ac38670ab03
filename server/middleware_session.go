package server

import (
	"net/http"

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

// requestIsTLS reports whether r reached this server over TLS, for the session cookie's
// Secure flag.
func requestIsTLS(r *http.Request) bool { return r.TLS != nil }
