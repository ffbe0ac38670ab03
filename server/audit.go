package server

import (
	"net/http"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/validate"
)

// auditRoutes: the audit log is for owners and admins (conventions §17); each reads the
// events the rule lets it see (service/visibility.go). The chain's head and its
// verification describe every event, so they need a token that reads every event
// (data.NeedAuditChain, which the service applies as well).
func (s *Server) auditRoutes() []route {
	return []route{
		{Method: "GET", Path: "/api/v1/audit-log", Need: data.NeedAuditLog(), handle: s.handleAuditLog},
		{Method: "GET", Path: "/api/v1/audit-log/head", Need: data.NeedAuditChain(), handle: s.handleAuditHead},
		{Method: "GET", Path: "/api/v1/audit-log/verify", Need: data.NeedAuditChain(), handle: s.handleAuditVerify},
	}
}

// handleAuditLog: GET /api/v1/audit-log?type&actor&from&to — the current workspace's
// events, newest first, each with its actor and hash chain link.
func (s *Server) handleAuditLog(w http.ResponseWriter, r *http.Request) error {
	req, pageErr := pageRequest(r)
	q := r.URL.Query()
	f := data.AuditFilter{Type: q.Get("type"), Actor: q.Get("actor")}
	var errs validate.Errors
	f.From = data.NewTime(validate.TimeParam(&errs, q, "from"))
	f.To = data.NewTime(validate.TimeParam(&errs, q, "to"))
	// The service checks the filter's rules and answers with these faults too.
	ctx := data.WithInputFaults(r.Context(), validate.Combine(pageErr, errs.Err()))
	list, page, err := s.svc.Audit.ListAuditLog(ctx, f, req)
	if err != nil {
		return err
	}
	return writeList(w, list, page)
}

// handleAuditHead: GET /api/v1/audit-log/head — the newest link of the chain, to record
// elsewhere (docs/webhooks.md, "The audit log").
func (s *Server) handleAuditHead(w http.ResponseWriter, r *http.Request) error {
	head, err := s.svc.Audit.AuditHead(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": head})
	return nil
}

// handleAuditVerify: GET /api/v1/audit-log/verify — the chain of the current workspace
// recomputed, with every fault named (what `voiceapi audit verify` says, online).
func (s *Server) handleAuditVerify(w http.ResponseWriter, r *http.Request) error {
	v, err := s.svc.Audit.VerifyAuditLog(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": v})
	return nil
}
