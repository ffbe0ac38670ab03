package server

import (
	"net/http"
	"strconv"

	"github.com/gorilla/mux"

	"github.com/voiceapi/voiceapi/data"
)

// callStartNeed gates POST /api/v1/calls/start (conventions §23): writing calls, as a call
// registration does (calls:runtime allows it too). The answer holds the agent's
// configuration, so the service also asks for the right to read agents.
var callStartNeed = data.Write(data.ModuleCallHistory)

func (s *Server) callStartRoutes() []route {
	read, write := data.Read(data.ModuleAgents), data.Write(data.ModuleAgents)
	return []route{
		{Method: "POST", Path: "/api/v1/calls/start", Need: callStartNeed, Idempotent: true, handle: s.handleCallStart, legacyRecheck: s.recheckKeptStartAgent, replayRecheck: s.recheckKeptCall},
		{Method: "GET", Path: "/api/v1/agents/{agent_id}/rollout", Need: read, handle: s.handleRolloutShow},
		{Method: "PUT", Path: "/api/v1/agents/{agent_id}/rollout", Need: write, handle: s.handleRolloutSet},
		{Method: "DELETE", Path: "/api/v1/agents/{agent_id}/rollout", Need: write, handle: s.handleRolloutEnd},
	}
}

// handleCallStart: POST /api/v1/calls/start — 201 {"data": {call, agent, variant}}: the
// registered call and the configuration the runtime runs (docs/runtime.md). The answer
// holds the agent's credential in clear: it is written, never logged.
func (s *Server) handleCallStart(w http.ResponseWriter, r *http.Request) error {
	var in data.CallStart
	ctx, err := decodeInput(r, &in)
	if err != nil {
		return err
	}
	a, err := s.svc.CallStart.StartCall(ctx, in)
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store") // a credential: no cache keeps it
	writeJSON(w, http.StatusCreated, map[string]any{"data": a})
	return nil
}

// handleRolloutShow: GET /api/v1/agents/{agent_id}/rollout — the rollout with its
// variants' figures; 404 when none stands.
func (s *Server) handleRolloutShow(w http.ResponseWriter, r *http.Request) error {
	ro, err := s.svc.Rollouts.Rollout(r.Context(), mux.Vars(r)["agent_id"])
	if err != nil {
		return err
	}
	return writeRecord(w, http.StatusOK, ro, nil)
}

// handleRolloutSet: PUT /api/v1/agents/{agent_id}/rollout — start or change the rollout.
func (s *Server) handleRolloutSet(w http.ResponseWriter, r *http.Request) error {
	var in data.RolloutSet
	ctx, err := decodeInput(r, &in)
	if err != nil {
		return err
	}
	ro, err := s.svc.Rollouts.SetRollout(ctx, mux.Vars(r)["agent_id"], in)
	if err != nil {
		return err
	}
	return writeRecord(w, http.StatusOK, ro, nil)
}

// handleRolloutEnd: DELETE /api/v1/agents/{agent_id}/rollout — 204; the published version
// is live again.
func (s *Server) handleRolloutEnd(w http.ResponseWriter, r *http.Request) error {
	if err := s.svc.Rollouts.EndRollout(r.Context(), mux.Vars(r)["agent_id"]); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// concurrencyRetryAfter is the Retry-After of a 429 concurrency_limit, in seconds.
var concurrencyRetryAfter = strconv.Itoa(int(data.ConcurrencyRetryAfter.Seconds()))
