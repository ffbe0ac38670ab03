package server

import (
	"net/http"

	"github.com/gorilla/mux"

	"github.com/voiceapi/voiceapi/data"
)

func (s *Server) userRoutes() []route {
	return []route{
		{Method: "GET", Path: "/api/v1/user", Need: data.AnyKey, handle: s.handleMe},
		{Method: "PUT", Path: "/api/v1/user", Need: data.Self, handle: s.handleMeUpdate},
		{Method: "GET", Path: "/api/v1/users", Need: data.Admin, handle: s.handleUserList},
		{Method: "POST", Path: "/api/v1/users", Need: data.Admin, Idempotent: true, handle: s.handleUserCreate},
		{Method: "GET", Path: "/api/v1/users/{user_id}", Need: data.Admin, handle: s.handleUserShow},
		{Method: "DELETE", Path: "/api/v1/users/{user_id}", Need: data.Admin, handle: s.handleUserDelete},
	}
}

// handleMe: GET /api/v1/user — the caller.
func (s *Server) handleMe(w http.ResponseWriter, r *http.Request) error {
	u, err := s.svc.Users.Me(r.Context())
	if err != nil {
		return err
	}
	return writeRecord(w, http.StatusOK, u, nil)
}

// handleMeUpdate: PUT /api/v1/user — name, email, or password with current_password.
func (s *Server) handleMeUpdate(w http.ResponseWriter, r *http.Request) error {
	var in data.UserUpdate
	ctx, err := decodeInput(r, &in)
	if err != nil {
		return err
	}
	var attempt *loginAttempt
	if in.Password.Set && data.InputFaults(ctx) == nil {
		me, err := s.svc.Users.Me(ctx)
		if err != nil {
			return err
		}
		if attempt, err = s.limitPasswordGuess(w, r, me.Email); err != nil {
			return err
		}
	}
	u, err := s.svc.Users.UpdateMe(ctx, in)
	attempt.finish(ctx, err)
	if err != nil {
		return err
	}
	return writeRecord(w, http.StatusOK, u, nil)
}

// handleUserList: GET /api/v1/users — every account (instance admins).
func (s *Server) handleUserList(w http.ResponseWriter, r *http.Request) error {
	req, err := pageRequest(r)
	if err != nil {
		return err
	}
	users, page, err := s.svc.Users.ListUsers(r.Context(), req)
	if err != nil {
		return err
	}
	return writeList(w, users, page)
}

// handleUserCreate: POST /api/v1/users — a new account and its personal workspace.
func (s *Server) handleUserCreate(w http.ResponseWriter, r *http.Request) error {
	var in data.UserCreate
	ctx, err := decodeInput(r, &in)
	if err != nil {
		return err
	}
	u, err := s.svc.Users.CreateUser(ctx, in)
	if err != nil {
		return err
	}
	return writeRecord(w, http.StatusCreated, u, nil)
}

// handleUserShow: GET /api/v1/users/{user_id}.
func (s *Server) handleUserShow(w http.ResponseWriter, r *http.Request) error {
	u, err := s.svc.Users.User(r.Context(), mux.Vars(r)["user_id"])
	if err != nil {
		return err
	}
	return writeRecord(w, http.StatusOK, u, nil)
}

// handleUserDelete: DELETE /api/v1/users/{user_id}.
func (s *Server) handleUserDelete(w http.ResponseWriter, r *http.Request) error {
	if err := s.svc.Users.DeleteUser(r.Context(), mux.Vars(r)["user_id"]); err != nil {
		return err
	}
	return writeNoContent(w)
}
