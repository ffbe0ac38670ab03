package server

import (
	"net/http"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/validate"
)

func (s *Server) analyticsRoutes() []route {
	return []route{
		{Method: "GET", Path: "/api/v1/analytics/calls", Need: data.Read(data.ModuleAnalytics), handle: s.handleCallAnalytics},
		{Method: "GET", Path: "/api/v1/analytics/analysis", Need: data.Read(data.ModuleAnalytics), handle: s.handleAnalysisFigures},
	}
}

// handleCallAnalytics: GET /api/v1/analytics/calls?from&to&agent_id&interval=day|hour. The
// service defaults the range on its clock and checks it.
func (s *Server) handleCallAnalytics(w http.ResponseWriter, r *http.Request) error {
	q, err := validate.CallAnalyticsParams(r.URL.Query())
	if err := withQueryFaults(r, err); err != nil {
		return err
	}
	a, err := s.svc.Analytics.CallAnalytics(r.Context(), q)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": a})
	return nil
}

// handleAnalysisFigures: GET /api/v1/analytics/analysis?agent_id&field&from&to&agent_version&interval
// — one analysis field's figures (docs/analysis.md). The parameters' faults go to the
// service, which adds the range's in one 422.
func (s *Server) handleAnalysisFigures(w http.ResponseWriter, r *http.Request) error {
	q, err := validate.AnalysisParams(r.URL.Query())
	f, err := s.svc.AnalysisFigures.AnalysisFigures(data.WithInputFaults(r.Context(), withQueryFaults(r, err)), q)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": f})
	return nil
}
