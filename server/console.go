package server

import (
	"net/http"

	"github.com/gorilla/mux"

	"github.com/voiceapi/voiceapi/console"
	"github.com/voiceapi/voiceapi/data"
)

// mountConsole serves the web console (package console) on r for the paths it owns (/,
// /login, /agents/…): registered after the API routes and never matching their paths, so
// that the API's 404 and 405 answers stay its own.
func (s *Server) mountConsole(r *mux.Router) {
	// The console calls the API in process; s.router is read per call because r is not
	// yet installed when this runs.
	api := s.observe(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) { s.router.ServeHTTP(w, req) }))
	c := console.New(console.Options{API: api, Secure: s.requestIsTLS, NoBackups: !s.takesBackups()})
	s.console = c
	h := http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if info, ok := req.Context().Value(requestInfoKey).(*requestInfo); ok {
			info.route = "console"
		}
		if console.LongRequest(req) { // a workspace document, as the API's import route
			w, req = s.longTransfer(w, req)
		}
		// A page knows its user (for the sections it offers) from the session's principal;
		// a session that no longer authenticates is no session.
		// A session that cannot be checked now (the database is unreachable) is not
		// taken for a signed-out one: the page says why it cannot be served.
		if tok := console.SessionToken(req); tok != "" {
			p, err := s.svc.Auth.Authenticate(req.Context(), tok)
			if known := classify(err); data.ErrorCode(known) == data.EUNAVAILABLE {
				s.log.ErrorContext(req.Context(), "console page refused: the database is unavailable", "error", err)
				c.Unavailable(w, req, data.ErrorMessage(known))
				return
			}
			if err == nil && p.Role != "" {
				p.Modules = data.EffectiveModules(p.Role, p.Modules)
				req = req.WithContext(data.WithPrincipal(req.Context(), p))
			}
		}
		c.ServeHTTP(w, req)
	})
	r.MatcherFunc(func(req *http.Request, _ *mux.RouteMatch) bool { return console.Owns(req.URL.Path) }).Handler(h)
}
