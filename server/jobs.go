package server

import (
	"net/http"

	"github.com/gorilla/mux"

	"github.com/voiceapi/voiceapi/data"
)

// jobRoutes: a job is read by any member of its workspace and any key at route level; the
// service then asks for the module its kind was registered with (and that module's read
// scope of a key with scopes), and answers not_found to a caller without it, as for a
// record of another workspace.
func (s *Server) jobRoutes() []route {
	need := data.Requirement{Workspace: true, AnyKey: true}
	return []route{
		{Method: "GET", Path: "/api/v1/jobs/{job_id}", Need: need, handle: s.handleJobShow},
	}
}

// handleJobShow: GET /api/v1/jobs/{job_id} — a background job's status, attempt,
// progress, last error and times.
func (s *Server) handleJobShow(w http.ResponseWriter, r *http.Request) error {
	if s.svc.Jobs == nil {
		return data.NotFound("Job")
	}
	j, err := s.svc.Jobs.Job(r.Context(), mux.Vars(r)["job_id"])
	if err != nil {
		return err
	}
	return writeRecord(w, http.StatusOK, j, nil)
}
