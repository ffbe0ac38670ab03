package server

import (
	"net/http"

	"github.com/gorilla/mux"

	"github.com/voiceapi/voiceapi/data"
)

func (s *Server) authRoutes() []route {
	return []route{
		{Method: "POST", Path: "/api/v1/auth/login", Public: true, handle: s.handleLogin},
		{Method: "POST", Path: "/api/v1/auth/logout", Need: data.AnyKey, NoBody: true, handle: s.handleLogout},
		{Method: "GET", Path: "/api/v1/api-keys", Need: data.AnyKey, handle: s.handleAPIKeyList},
		{Method: "POST", Path: "/api/v1/api-keys", Need: data.AnyKey, Idempotent: true, handle: s.handleAPIKeyCreate},
		{Method: "DELETE", Path: "/api/v1/api-keys/{key_id}", Need: data.Self, handle: s.handleAPIKeyDelete},
		{Method: "GET", Path: "/api/v1/workspaces/{workspace_id}/api-keys", Need: workspaceKeys, handle: s.handleWorkspaceAPIKeyList},
		{Method: "DELETE", Path: "/api/v1/workspaces/{workspace_id}/api-keys/{key_id}", Need: workspaceKeys, handle: s.handleWorkspaceAPIKeyRevoke},
	}
}

// workspaceKeys is the requirement of a workspace's API keys: every member's keys, with
// the agents and scopes each holds, are the workspace's credentials, managed like its
// members (conventions §20): by owners and admins (a key with scopes needs
// workspace:admin) whose token sees every agent, not one narrowed by a key's agent_ids.
var workspaceKeys = func() data.Requirement {
	r := workspaceAdmin
	r.AllAgents = true
	return r
}()

// handleLogin: POST /api/v1/auth/login — a token for valid credentials (no Authorization).
func (s *Server) handleLogin(w http.ResponseWriter, r *http.Request) error {
	var in data.LoginRequest
	ctx, err := decodeInput(r, &in)
	if err != nil {
		return err
	}
	// Counted once the body decodes with an email (the pair needs one) and before the
	// password hash is checked, which is the costly part a guesser wants to repeat.
	var attempt *loginAttempt
	if in.Email != "" && data.InputFaults(ctx) == nil {
		if attempt, err = s.limitLogin(w, r, in.Email); err != nil {
			return err
		}
	}
	key, token, err := s.svc.Auth.Login(ctx, in.Email, in.Password, in.WorkspaceID)
	attempt.finish(ctx, err)
	if err != nil {
		return err
	}
	return writeRecord(w, http.StatusOK, key, map[string]any{"token": token})
}

// handleLogout: POST /api/v1/auth/logout — revokes the calling token.
func (s *Server) handleLogout(w http.ResponseWriter, r *http.Request) error {
	if err := s.svc.Auth.Logout(r.Context()); err != nil {
		return err
	}
	return writeNoContent(w)
}

// handleAPIKeyList: GET /api/v1/api-keys — the caller's own keys.
func (s *Server) handleAPIKeyList(w http.ResponseWriter, r *http.Request) error {
	req, err := pageRequest(r)
	if err != nil {
		return err
	}
	keys, page, err := s.svc.Auth.ListAPIKeys(r.Context(), req)
	if err != nil {
		return err
	}
	return writeList(w, keys, page)
}

// handleAPIKeyCreate: POST /api/v1/api-keys — 201 with the token once, top-level.
func (s *Server) handleAPIKeyCreate(w http.ResponseWriter, r *http.Request) error {
	var in data.APIKeyCreate
	ctx, err := decodeInput(r, &in)
	if err != nil {
		return err
	}
	key, token, err := s.svc.Auth.CreateAPIKey(ctx, in)
	if err != nil {
		return err
	}
	return writeRecord(w, http.StatusCreated, key, map[string]any{"token": token})
}

// handleAPIKeyDelete: DELETE /api/v1/api-keys/{key_id} — revokes one of the caller's keys.
func (s *Server) handleAPIKeyDelete(w http.ResponseWriter, r *http.Request) error {
	id, ok := pathNumber(mux.Vars(r)["key_id"])
	if !ok {
		return data.NotFound("API key")
	}
	if err := s.svc.Auth.DeleteAPIKey(r.Context(), id); err != nil {
		return err
	}
	return writeNoContent(w)
}

// handleWorkspaceAPIKeyList: GET /api/v1/workspaces/{workspace_id}/api-keys — every
// member's API keys bound to the workspace (owners and admins).
func (s *Server) handleWorkspaceAPIKeyList(w http.ResponseWriter, r *http.Request) error {
	req, err := pageRequest(r)
	if err != nil {
		return err
	}
	keys, page, err := s.svc.Auth.ListWorkspaceAPIKeys(r.Context(), mux.Vars(r)["workspace_id"], req)
	if err != nil {
		return err
	}
	return writeList(w, keys, page)
}

// handleWorkspaceAPIKeyRevoke: DELETE /api/v1/workspaces/{workspace_id}/api-keys/{key_id}
// — 204; a departing member's keys can be cut off.
func (s *Server) handleWorkspaceAPIKeyRevoke(w http.ResponseWriter, r *http.Request) error {
	v := mux.Vars(r)
	id, ok := pathNumber(v["key_id"])
	if !ok {
		return data.NotFound("API key")
	}
	if err := s.svc.Auth.RevokeWorkspaceAPIKey(r.Context(), v["workspace_id"], id); err != nil {
		return err
	}
	return writeNoContent(w)
}
