package server

import (
	"net/http"

	"github.com/gorilla/mux"

	"github.com/voiceapi/voiceapi/data"
)

func (s *Server) numberRoutes() []route {
	read, write := data.Read(data.ModulePhoneNumbers), data.Write(data.ModulePhoneNumbers)
	return []route{
		{Method: "GET", Path: "/api/v1/numbers", Need: read, handle: s.handleNumberList},
		{Method: "POST", Path: "/api/v1/numbers", Need: write, Idempotent: true, handle: s.handleNumberCreate},
		{Method: "GET", Path: "/api/v1/numbers/{number_id}", Need: read, handle: s.handleNumberShow},
		{Method: "PUT", Path: "/api/v1/numbers/{number_id}", Need: write, handle: s.handleNumberUpdate},
		{Method: "DELETE", Path: "/api/v1/numbers/{number_id}", Need: write, handle: s.handleNumberDelete},
	}
}

// handleNumberList: GET /api/v1/numbers?agent_id=&q= — numbers bound to the agent either
// way, found by the search q (data.NumberFilter).
func (s *Server) handleNumberList(w http.ResponseWriter, r *http.Request) error {
	req, err := pageRequest(r)
	if err != nil {
		return err
	}
	var f data.NumberFilter
	if q := r.URL.Query(); q.Has("agent_id") {
		f.AgentID = q.Get("agent_id")
		if !data.ValidID(data.PrefixAgent, f.AgentID) {
			return data.FieldError("agent_id", "The agent_id parameter must be the id of an agent.")
		}
	}
	f.Q = r.URL.Query().Get("q")
	list, page, err := s.svc.Numbers.ListNumbers(r.Context(), f, req)
	if err != nil {
		return err
	}
	// What the caller may do with each number, beside the list as beside one number
	// (docs/api.md "What a caller may do with a record"), by id.
	access := make(map[string]data.NumberAccess, len(list))
	for _, n := range list {
		access[n.ID] = n.Access
	}
	if list == nil {
		list = []*data.Number{}
	}
	writeJSON(w, http.StatusOK, numberListBody{Data: list, Meta: page, Access: access})
	return nil
}

// numberListBody is a list of numbers with, beside it, what the caller may do with each.
type numberListBody struct {
	Data   []*data.Number               `json:"data"`
	Meta   data.Page                    `json:"meta"`
	Access map[string]data.NumberAccess `json:"access"`
}

// handleNumberCreate: POST /api/v1/numbers — 201.
func (s *Server) handleNumberCreate(w http.ResponseWriter, r *http.Request) error {
	var in data.NumberCreate
	ctx, err := decodeInput(r, &in)
	if err != nil {
		return err
	}
	n, err := s.svc.Numbers.CreateNumber(ctx, in)
	if err != nil {
		return err
	}
	return writeRecord(w, http.StatusCreated, n, data.AccessAnswer(n.Access))
}

// handleNumberShow: GET /api/v1/numbers/{number_id}.
func (s *Server) handleNumberShow(w http.ResponseWriter, r *http.Request) error {
	n, err := s.svc.Numbers.Number(r.Context(), mux.Vars(r)["number_id"])
	if err != nil {
		return err
	}
	return writeRecord(w, http.StatusOK, n, data.AccessAnswer(n.Access))
}

// handleNumberUpdate: PUT /api/v1/numbers/{number_id}. A bound agent given as null is unbound,
// so the members' presence is read as well as their values.
func (s *Server) handleNumberUpdate(w http.ResponseWriter, r *http.Request) error {
	var in data.NumberUpdate
	ctx, err := decodeInput(r, &in)
	if err != nil {
		return err
	}
	n, err := s.svc.Numbers.UpdateNumber(ctx, mux.Vars(r)["number_id"], in)
	if err != nil {
		return err
	}
	return writeRecord(w, http.StatusOK, n, data.AccessAnswer(n.Access))
}

// handleNumberDelete: DELETE /api/v1/numbers/{number_id} — only a number of the current workspace.
func (s *Server) handleNumberDelete(w http.ResponseWriter, r *http.Request) error {
	if err := s.svc.Numbers.DeleteNumber(r.Context(), mux.Vars(r)["number_id"]); err != nil {
		return err
	}
	return writeNoContent(w)
}
