package server

import (
	"net/http"

	"github.com/voiceapi/voiceapi/data"
)

func (s *Server) subscriptionRoutes() []route {
	return []route{
		{Method: "GET", Path: "/api/v1/subscription", Need: data.Member("").ForAnyKey(), handle: s.handleSubscriptionShow},
	}
}

// handleSubscriptionShow: GET /api/v1/subscription — the current workspace's plan and usage.
func (s *Server) handleSubscriptionShow(w http.ResponseWriter, r *http.Request) error {
	sub, err := s.svc.Subscriptions.Subscription(r.Context(), data.PrincipalFrom(r.Context()).WorkspaceID)
	if err != nil {
		return err
	}
	return writeRecord(w, http.StatusOK, sub, nil)
}
