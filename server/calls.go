package server

import (
	"net/http"

	"github.com/gorilla/mux"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/validate"
)

func (s *Server) callRoutes() []route {
	read, write := data.Read(data.ModuleCallHistory), data.Write(data.ModuleCallHistory)
	return []route{
		{Method: "GET", Path: "/api/v1/calls", Need: read, handle: s.handleCallList},
		{Method: "GET", Path: "/api/v1/calls/export", Need: read, Long: true, handle: s.handleCallExport},
		{Method: "POST", Path: "/api/v1/calls", Need: write, Idempotent: true, handle: s.handleCallRegister, legacyRecheck: s.recheckBodyAgent, replayRecheck: s.recheckKeptCall},
		{Method: "GET", Path: "/api/v1/calls/{call_id}", Need: read, handle: s.handleCallShow},
		{Method: "PUT", Path: "/api/v1/calls/{call_id}", Need: write, handle: s.handleCallUpdate},
		{Method: "DELETE", Path: "/api/v1/calls/{call_id}", Need: write, handle: s.handleCallDelete},
	}
}

// handleCallList: GET /api/v1/calls?agent_id&number_id&direction&status&from&to&q&sort.
// The parameters' faults go to the service, which adds the range's in one 422. With q,
// the list is a search: each call carries its "search" member.
func (s *Server) handleCallList(w http.ResponseWriter, r *http.Request) error {
	req, pageErr := pageRequest(r)
	f, filterErr := validate.CallFilterParams(r.URL.Query())
	search, searchErr := validate.CallSearchParams(r.URL.Query())
	ctx := data.WithInputFaults(r.Context(), validate.Combine(pageErr, filterErr, searchErr))
	if r.URL.Query().Has("q") {
		hits, page, err := s.svc.Calls.SearchCalls(ctx, f, search, req)
		if err != nil {
			return err
		}
		return writeList(w, hits, page)
	}
	release, err := s.pages.take(ctx)
	if err != nil {
		return err
	}
	list, page, err := s.svc.Calls.ListCalls(ctx, f, req)
	if err != nil {
		release()
		return err
	}
	buf, err := encodeList(list, page)
	release()
	if err != nil {
		return err
	}
	sendJSON(w, buf)
	return nil
}

// handleCallRegister: POST /api/v1/calls — the voice runtime registers a call; 201.
func (s *Server) handleCallRegister(w http.ResponseWriter, r *http.Request) error {
	var in data.CallCreate
	ctx, err := decodeInput(r, &in)
	if err != nil {
		return err
	}
	c, err := s.svc.Calls.RegisterCall(ctx, in)
	if err != nil {
		return err
	}
	return writeRecord(w, http.StatusCreated, c, nil)
}

// handleCallShow: GET /api/v1/calls/{call_id}.
func (s *Server) handleCallShow(w http.ResponseWriter, r *http.Request) error {
	c, err := s.svc.Calls.Call(r.Context(), mux.Vars(r)["call_id"])
	if err != nil {
		return err
	}
	return writeRecord(w, http.StatusOK, c, nil)
}

// handleCallUpdate: PUT /api/v1/calls/{call_id} — status moves forward only (409 otherwise).
func (s *Server) handleCallUpdate(w http.ResponseWriter, r *http.Request) error {
	var in data.CallUpdate
	ctx, err := decodeInput(r, &in)
	if err != nil {
		return err
	}
	c, err := s.svc.Calls.UpdateCall(ctx, mux.Vars(r)["call_id"], in)
	if err != nil {
		return err
	}
	if c == nil {
		return writeNoContent(w) // changed; the caller may not read calls (calls:runtime)
	}
	return writeRecord(w, http.StatusOK, c, nil)
}

// handleCallDelete: DELETE /api/v1/calls/{call_id} — 204.
func (s *Server) handleCallDelete(w http.ResponseWriter, r *http.Request) error {
	if err := s.svc.Calls.DeleteCall(r.Context(), mux.Vars(r)["call_id"]); err != nil {
		return err
	}
	return writeNoContent(w)
}
