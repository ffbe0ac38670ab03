package server

import (
	"net/http"

	"github.com/gorilla/mux"

	"github.com/voiceapi/voiceapi/data"
)

// workspaceAdmin is what managing a workspace needs (data.NeedWorkspaceAdmin).
var workspaceAdmin = data.NeedWorkspaceAdmin()

func (s *Server) workspaceRoutes() []route {
	admin := workspaceAdmin
	return []route{
		{Method: "GET", Path: "/api/v1/workspaces", Need: data.AnyKey, handle: s.handleWorkspaceList},
		{Method: "POST", Path: "/api/v1/workspaces", Need: data.Self, Idempotent: true, handle: s.handleWorkspaceCreate},
		{Method: "GET", Path: "/api/v1/workspaces/{workspace_id}", Need: data.Member("").ForAnyKey(), handle: s.handleWorkspaceShow},
		{Method: "PUT", Path: "/api/v1/workspaces/{workspace_id}", Need: admin, handle: s.handleWorkspaceUpdate},
		{Method: "DELETE", Path: "/api/v1/workspaces/{workspace_id}", Need: data.NeedWorkspaceDelete(), handle: s.handleWorkspaceDelete},
	}
}

// handleWorkspaceList: GET /api/v1/workspaces — the caller's workspaces.
func (s *Server) handleWorkspaceList(w http.ResponseWriter, r *http.Request) error {
	req, err := pageRequest(r)
	if err != nil {
		return err
	}
	list, page, err := s.svc.Workspaces.ListWorkspaces(r.Context(), req)
	if err != nil {
		return err
	}
	return writeList(w, list, page)
}

// handleWorkspaceCreate: POST /api/v1/workspaces — the caller becomes its owner.
func (s *Server) handleWorkspaceCreate(w http.ResponseWriter, r *http.Request) error {
	var in data.WorkspaceCreate
	ctx, err := decodeInput(r, &in)
	if err != nil {
		return err
	}
	ws, err := s.svc.Workspaces.CreateWorkspace(ctx, in)
	if err != nil {
		return err
	}
	return writeRecord(w, http.StatusCreated, ws, nil)
}

// handleWorkspaceShow: GET /api/v1/workspaces/{workspace_id}.
func (s *Server) handleWorkspaceShow(w http.ResponseWriter, r *http.Request) error {
	ws, err := s.svc.Workspaces.Workspace(r.Context(), mux.Vars(r)["workspace_id"])
	if err != nil {
		return err
	}
	return writeRecord(w, http.StatusOK, ws, nil)
}

// handleWorkspaceUpdate: PUT /api/v1/workspaces/{workspace_id} — owners and admins.
func (s *Server) handleWorkspaceUpdate(w http.ResponseWriter, r *http.Request) error {
	var in data.WorkspaceUpdate
	ctx, err := decodeInput(r, &in)
	if err != nil {
		return err
	}
	ws, err := s.svc.Workspaces.UpdateWorkspace(ctx, mux.Vars(r)["workspace_id"], in)
	if err != nil {
		return err
	}
	return writeRecord(w, http.StatusOK, ws, nil)
}

// handleWorkspaceDelete: DELETE /api/v1/workspaces/{workspace_id} — owners; every record
// of the workspace goes with it.
func (s *Server) handleWorkspaceDelete(w http.ResponseWriter, r *http.Request) error {
	if err := s.svc.Workspaces.DeleteWorkspace(r.Context(), mux.Vars(r)["workspace_id"]); err != nil {
		return err
	}
	return writeNoContent(w)
}
