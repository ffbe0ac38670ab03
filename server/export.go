package server

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/gorilla/mux"

	"github.com/voiceapi/voiceapi/data"
)

// DefaultMaxImportBody is Config.MaxImportBody when unset: a workspace document carries
// its knowledge base files in base64, so it is allowed far more than a JSON body.
const DefaultMaxImportBody = 100 << 20

// exportRoutes: export and import of a whole workspace (conventions §17). Both are for
// owners and admins who see every agent (a key with scopes: workspace:admin): an export
// holds the whole workspace, and an import creates agents.
func (s *Server) exportRoutes() []route {
	if s.cfg.MaxImportBody == 0 {
		s.cfg.MaxImportBody = DefaultMaxImportBody
	}
	need := data.NeedWorkspaceExport()
	const ws = "/api/v1/workspaces/{workspace_id}"
	return []route{
		{Method: "GET", Path: ws + "/export", Need: need, Long: true, handle: s.handleWorkspaceExport},
		{Method: "POST", Path: ws + "/import", Need: need, Idempotent: true, Long: true, BodyLimit: s.cfg.MaxImportBody, handle: s.handleWorkspaceImport},
	}
}

// handleWorkspaceExport: GET /api/v1/workspaces/{workspace_id}/export[?include_secrets=true]
// — the workspace as one JSON document, streamed, files included.
func (s *Server) handleWorkspaceExport(w http.ResponseWriter, r *http.Request) error {
	var opts data.ExportOptions
	var optErr error
	if v := r.URL.Query().Get("include_secrets"); v != "" || r.URL.Query().Has("include_secrets") {
		b, err := strconv.ParseBool(v)
		if err != nil {
			optErr = data.FieldError("include_secrets", "The include_secrets field must be true or false.")
		}
		opts.IncludeSecrets = b
	}
	if err := withQueryFaults(r, optErr); err != nil {
		return err
	}
	wsID := mux.Vars(r)["workspace_id"]
	stream, err := s.svc.Exports.ExportWorkspace(r.Context(), wsID, opts)
	if err != nil {
		return err
	}
	defer stream.Close()
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Disposition", fmt.Sprintf(`attachment; filename="voiceapi-%s.json"`, wsID))
	// Secrets in the clear must not linger in a shared cache.
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	if _, err := stream.WriteTo(w); err != nil {
		// The status is sent: the client sees a cut document, which does not parse.
		s.log.Warn("writing a workspace export", "workspace_id", wsID, "error", err)
	}
	return nil
}

// handleWorkspaceImport: POST /api/v1/workspaces/{workspace_id}/import — creates what the
// document describes, all or nothing; 201 with the new ids, and each new webhook secret
// once, top-level, as a webhook create returns its secret.
func (s *Server) handleWorkspaceImport(w http.ResponseWriter, r *http.Request) error {
	var doc data.WorkspaceExport
	// The decoder's faults go with the service's, so the 422 names every fault at once.
	ctx, err := decodeInput(r, &doc)
	if err != nil {
		return err
	}
	res, err := s.svc.Exports.ImportWorkspace(ctx, mux.Vars(r)["workspace_id"], &doc, data.ImportOptions{MaxFileSize: s.cfg.MaxFileSize})
	if err != nil {
		return err
	}
	secrets := res.WebhookSecrets
	if secrets == nil {
		secrets = []data.ImportedSecret{}
	}
	return writeRecord(w, http.StatusCreated, res, map[string]any{"webhook_secrets": secrets})
}
