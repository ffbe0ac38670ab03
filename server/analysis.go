package server

import (
	"net/http"

	"github.com/gorilla/mux"

	"github.com/voiceapi/voiceapi/data"
)

func (s *Server) analysisRoutes() []route {
	write := data.Write(data.ModuleCallHistory)
	return []route{
		{Method: "POST", Path: "/api/v1/calls/{call_id}/analyze", Need: write, NoBody: true, Idempotent: true, handle: s.handleCallAnalyze, legacyRecheck: s.recheckCallPath},
		{Method: "POST", Path: "/api/v1/agents/{agent_id}/analysis/backfill", Need: write, Idempotent: true, handle: s.handleAnalysisBackfill, legacyRecheck: s.recheckAgentPath},
	}
}

// handleCallAnalyze: POST /api/v1/calls/{call_id}/analyze — 202 with the job that has the
// agent's model analyze the call (docs/analysis.md).
func (s *Server) handleCallAnalyze(w http.ResponseWriter, r *http.Request) error {
	job, err := s.svc.Analysis.AnalyzeCall(r.Context(), mux.Vars(r)["call_id"])
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusAccepted, map[string]any{"data": job})
	return nil
}

// handleAnalysisBackfill: POST /api/v1/agents/{agent_id}/analysis/backfill {from, to,
// agent_version?} — 202 with the one job that analyzes the agent's calls of the range.
func (s *Server) handleAnalysisBackfill(w http.ResponseWriter, r *http.Request) error {
	var in data.AnalysisBackfill
	ctx, err := decodeInput(r, &in)
	if err != nil {
		return err
	}
	job, err := s.svc.Analysis.BackfillAnalysis(ctx, mux.Vars(r)["agent_id"], in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusAccepted, map[string]any{"data": job})
	return nil
}
