package server

import (
	"net/http"

	"github.com/voiceapi/voiceapi/data"
)

func (s *Server) healthRoutes() []route {
	return []route{
		{Method: "GET", Path: "/healthz", Public: true, handle: s.handleHealthz},
		{Method: "GET", Path: "/readyz", Public: true, handle: s.handleReadyz},
	}
}

// handleHealthz: GET /healthz — the process is up.
func (s *Server) handleHealthz(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	return nil
}

// handleReadyz: GET /readyz — the database answers, and is still this binary's (a
// replica whose database a newer voiceapi migrated says so, for good: postgres/fence.go).
func (s *Server) handleReadyz(w http.ResponseWriter, r *http.Request) error {
	if s.svc.Ready != nil {
		if err := s.svc.Ready(r.Context()); err != nil {
			if data.LoggedByStorage(err) {
				return err // logged once by storage; the answer says why
			}
			s.log.Error("not ready", "error", err)
			return data.Errorf(data.EUNAVAILABLE, "The database is not available.")
		}
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
	return nil
}
