package server

import (
	"net/http"

	"github.com/gorilla/mux"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/validate"
)

// jobRoutes: a job is read by any member of its workspace and any key at route level; the
// service then asks for the module its kind was registered with (and that module's read
// scope of a key with scopes), and answers not_found to a caller without it, as for a
// record of another workspace. The list applies the same rule to each job.
func (s *Server) jobRoutes() []route {
	need := data.Requirement{Workspace: true, AnyKey: true}
	return []route{
		{Method: "GET", Path: "/api/v1/jobs", Need: need, handle: s.handleJobList},
		{Method: "GET", Path: "/api/v1/jobs/{job_id}", Need: need, handle: s.handleJobShow},
	}
}

// handleJobList: GET /api/v1/jobs?kind&status&agent_id&from&to — the jobs of the
// workspace the caller may read, newest first. The parameters' faults go to the service,
// which adds the kind's and the range's in one 422.
func (s *Server) handleJobList(w http.ResponseWriter, r *http.Request) error {
	req, pageErr := pageRequest(r)
	f, filterErr := validate.JobFilterParams(r.URL.Query())
	faults := validate.Combine(pageErr, filterErr)
	if s.svc.Jobs == nil {
		if faults != nil {
			return faults
		}
		return writeList(w, []*data.Job{}, data.Page{PerPage: req.PerPage})
	}
	list, page, err := s.svc.Jobs.ListJobs(data.WithInputFaults(r.Context(), faults), f, req)
	if err != nil {
		return err
	}
	return writeList(w, list, page)
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
