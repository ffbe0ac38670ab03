package server

import (
	"net/http"

	"github.com/gorilla/mux"

	"github.com/voiceapi/voiceapi/data"
)

// workspaceUserRoutes: adding, changing and removing members needs an admin's token that
// is not limited itself (conventions §20): a key with scopes (Scope "" admits none) or
// with agent_ids (AllAgents) could otherwise add a member, or change its own membership,
// with more than it holds.
func (s *Server) workspaceUserRoutes() []route {
	const base = "/api/v1/workspaces/{workspace_id}/users"
	read := data.Member("").WithScope(data.ScopeWorkspaceAdmin)
	admin := data.NeedMemberChange()
	return []route{
		{Method: "GET", Path: base, Need: read, handle: s.handleWorkspaceUserList},
		{Method: "POST", Path: base, Need: admin, Idempotent: true, handle: s.handleWorkspaceUserAdd},
		{Method: "GET", Path: base + "/{user_id}", Need: read, handle: s.handleWorkspaceUserShow},
		{Method: "PUT", Path: base + "/{user_id}", Need: admin, handle: s.handleWorkspaceUserUpdate},
		{Method: "DELETE", Path: base + "/{user_id}", Need: admin, handle: s.handleWorkspaceUserRemove},
	}
}

// handleWorkspaceUserList: GET /api/v1/workspaces/{workspace_id}/users.
func (s *Server) handleWorkspaceUserList(w http.ResponseWriter, r *http.Request) error {
	req, err := pageRequest(r)
	if err != nil {
		return err
	}
	list, page, err := s.svc.WorkspaceUsers.ListWorkspaceUsers(r.Context(), mux.Vars(r)["workspace_id"], req)
	if err != nil {
		return err
	}
	return writeList(w, list, page)
}

// handleWorkspaceUserAdd: POST /api/v1/workspaces/{workspace_id}/users — 201.
func (s *Server) handleWorkspaceUserAdd(w http.ResponseWriter, r *http.Request) error {
	var in data.WorkspaceUserAdd
	ctx, err := decodeInput(r, &in)
	if err != nil {
		return err
	}
	wu, err := s.svc.WorkspaceUsers.AddWorkspaceUser(ctx, mux.Vars(r)["workspace_id"], in)
	if err != nil {
		return err
	}
	return writeRecord(w, http.StatusCreated, wu, nil)
}

// handleWorkspaceUserShow: GET /api/v1/workspaces/{workspace_id}/users/{user_id}.
func (s *Server) handleWorkspaceUserShow(w http.ResponseWriter, r *http.Request) error {
	v := mux.Vars(r)
	wu, err := s.svc.WorkspaceUsers.WorkspaceUser(r.Context(), v["workspace_id"], v["user_id"])
	if err != nil {
		return err
	}
	return writeRecord(w, http.StatusOK, wu, nil)
}

// handleWorkspaceUserUpdate: PUT /api/v1/workspaces/{workspace_id}/users/{user_id}.
func (s *Server) handleWorkspaceUserUpdate(w http.ResponseWriter, r *http.Request) error {
	var in data.WorkspaceUserUpdate
	ctx, err := decodeInput(r, &in)
	if err != nil {
		return err
	}
	v := mux.Vars(r)
	wu, err := s.svc.WorkspaceUsers.UpdateWorkspaceUser(ctx, v["workspace_id"], v["user_id"], in)
	if err != nil {
		return err
	}
	return writeRecord(w, http.StatusOK, wu, nil)
}

// handleWorkspaceUserRemove: DELETE /api/v1/workspaces/{workspace_id}/users/{user_id}.
func (s *Server) handleWorkspaceUserRemove(w http.ResponseWriter, r *http.Request) error {
	v := mux.Vars(r)
	if err := s.svc.WorkspaceUsers.RemoveWorkspaceUser(r.Context(), v["workspace_id"], v["user_id"]); err != nil {
		return err
	}
	return writeNoContent(w)
}
