package server

import (
	"net/http"

	"github.com/gorilla/mux"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/validate"
)

// agentTestRoutes are an agent's tests and their runs (conventions §22): module agents;
// reads for any role, writes (and runs, which cost provider calls) for developers and up.
// A test made from a call reads the call too: the service checks the call_history module.
func (s *Server) agentTestRoutes() []route {
	read, write := data.Read(data.ModuleAgents), data.Write(data.ModuleAgents)
	return []route{
		{Method: "GET", Path: "/api/v1/agents/{agent_id}/tests", Need: read, handle: s.handleAgentTestList},
		{Method: "POST", Path: "/api/v1/agents/{agent_id}/tests", Need: write, Idempotent: true, handle: s.handleAgentTestCreate, legacyRecheck: s.recheckAgentPath},
		{Method: "POST", Path: "/api/v1/agents/{agent_id}/tests/from-call/{call_id}", Need: write, Idempotent: true, NoBody: true, handle: s.handleAgentTestFromCall, legacyRecheck: s.recheckAgentPath,
			replayRecheck: s.recheckTestCall},
		{Method: "GET", Path: "/api/v1/agents/{agent_id}/tests/{test_id}", Need: read, handle: s.handleAgentTestShow},
		{Method: "PUT", Path: "/api/v1/agents/{agent_id}/tests/{test_id}", Need: write, handle: s.handleAgentTestUpdate},
		{Method: "DELETE", Path: "/api/v1/agents/{agent_id}/tests/{test_id}", Need: write, handle: s.handleAgentTestDelete},
		{Method: "GET", Path: "/api/v1/agents/{agent_id}/test-runs", Need: read, handle: s.handleTestRunList},
		{Method: "POST", Path: "/api/v1/agents/{agent_id}/test-runs", Need: write, Idempotent: true, handle: s.handleTestRunCreate, legacyRecheck: s.recheckAgentPath},
		{Method: "GET", Path: "/api/v1/agents/{agent_id}/test-runs/{run_id}", Need: read, handle: s.handleTestRunShow},
		{Method: "GET", Path: "/api/v1/agents/{agent_id}/publish-gate", Need: read, handle: s.handlePublishGate},
	}
}

// handleAgentTestList: GET /api/v1/agents/{agent_id}/tests — newest first.
func (s *Server) handleAgentTestList(w http.ResponseWriter, r *http.Request) error {
	req, err := pageRequest(r)
	if err != nil {
		return err
	}
	list, page, err := s.svc.AgentTests.ListAgentTests(r.Context(), mux.Vars(r)["agent_id"], req)
	if err != nil {
		return err
	}
	return writeList(w, list, page)
}

// handleAgentTestCreate: POST /api/v1/agents/{agent_id}/tests — 201 with the test.
func (s *Server) handleAgentTestCreate(w http.ResponseWriter, r *http.Request) error {
	var in data.AgentTestCreate
	ctx, err := decodeInput(r, &in)
	if err != nil {
		return err
	}
	t, err := s.svc.AgentTests.CreateAgentTest(ctx, mux.Vars(r)["agent_id"], in)
	if err != nil {
		return err
	}
	return writeRecord(w, http.StatusCreated, t, nil)
}

// handleAgentTestFromCall: POST /api/v1/agents/{agent_id}/tests/from-call/{call_id} — 201
// with a scripted test of the call's caller turns.
func (s *Server) handleAgentTestFromCall(w http.ResponseWriter, r *http.Request) error {
	v := mux.Vars(r)
	t, err := s.svc.AgentTests.AgentTestFromCall(r.Context(), v["agent_id"], v["call_id"])
	if err != nil {
		return err
	}
	return writeRecord(w, http.StatusCreated, t, nil)
}

// handleAgentTestShow: GET /api/v1/agents/{agent_id}/tests/{test_id}.
func (s *Server) handleAgentTestShow(w http.ResponseWriter, r *http.Request) error {
	v := mux.Vars(r)
	t, err := s.svc.AgentTests.AgentTest(r.Context(), v["agent_id"], v["test_id"])
	if err != nil {
		return err
	}
	return writeRecord(w, http.StatusOK, t, nil)
}

// handleAgentTestUpdate: PUT /api/v1/agents/{agent_id}/tests/{test_id} — each member given
// replaces the stored one.
func (s *Server) handleAgentTestUpdate(w http.ResponseWriter, r *http.Request) error {
	var in data.AgentTestUpdate
	ctx, err := decodeInput(r, &in)
	if err != nil {
		return err
	}
	v := mux.Vars(r)
	t, err := s.svc.AgentTests.UpdateAgentTest(ctx, v["agent_id"], v["test_id"], in)
	if err != nil {
		return err
	}
	return writeRecord(w, http.StatusOK, t, nil)
}

// handleAgentTestDelete: DELETE /api/v1/agents/{agent_id}/tests/{test_id} — 204.
func (s *Server) handleAgentTestDelete(w http.ResponseWriter, r *http.Request) error {
	v := mux.Vars(r)
	if err := s.svc.AgentTests.DeleteAgentTest(r.Context(), v["agent_id"], v["test_id"]); err != nil {
		return err
	}
	return writeNoContent(w)
}

// handleTestRunList: GET /api/v1/agents/{agent_id}/test-runs?status= — newest first,
// without results. The parameters' faults go to the service, which adds its own in one
// 422.
func (s *Server) handleTestRunList(w http.ResponseWriter, r *http.Request) error {
	req, pageErr := pageRequest(r)
	f, filterErr := validate.TestRunFilterParams(r.URL.Query())
	ctx := data.WithInputFaults(r.Context(), validate.Combine(pageErr, filterErr))
	list, page, err := s.svc.TestRuns.ListTestRuns(ctx, mux.Vars(r)["agent_id"], f, req)
	if err != nil {
		return err
	}
	return writeList(w, list, page)
}

// handleTestRunCreate: POST /api/v1/agents/{agent_id}/test-runs — 202 with the run,
// queued as a background job.
func (s *Server) handleTestRunCreate(w http.ResponseWriter, r *http.Request) error {
	var in data.TestRunCreate
	ctx, err := decodeInput(r, &in)
	if err != nil {
		return err
	}
	run, err := s.svc.TestRuns.StartTestRun(ctx, mux.Vars(r)["agent_id"], in)
	if err != nil {
		return err
	}
	return writeRecord(w, http.StatusAccepted, run, nil)
}

// handleTestRunShow: GET /api/v1/agents/{agent_id}/test-runs/{run_id} — with results.
func (s *Server) handleTestRunShow(w http.ResponseWriter, r *http.Request) error {
	v := mux.Vars(r)
	run, err := s.svc.TestRuns.TestRun(r.Context(), v["agent_id"], v["run_id"])
	if err != nil {
		return err
	}
	return writeRecord(w, http.StatusOK, run, nil)
}

// handlePublishGate: GET /api/v1/agents/{agent_id}/publish-gate — what a publish of the
// draft would meet now.
func (s *Server) handlePublishGate(w http.ResponseWriter, r *http.Request) error {
	g, err := s.svc.TestRuns.PublishGate(r.Context(), mux.Vars(r)["agent_id"])
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": g})
	return nil
}

// recheckTestCall is the access check of the call a test is made from (its answer holds
// the call's caller turns), which every replay of the make passes again.
func (s *Server) recheckTestCall(r *http.Request, _ *data.IdempotentResponse) error {
	v := mux.Vars(r)
	return s.svc.AgentTests.CheckTestCall(r.Context(), v["agent_id"], v["call_id"])
}
