package server

import (
	"encoding/json"
	"io"
	"mime"
	"net/http"

	"github.com/gorilla/mux"

	"github.com/voiceapi/voiceapi/data"
)

// The rechecks below stand in for the agent a kept response carries (recheckReplay) when
// it carries none because an earlier release kept it: they make the replay pass the
// record-level access checks (a member's agent_ids) its first request passed, the route's
// record as that release checked it, or the agent its kept answer shows. Such responses
// are replayed for 24 hours after the upgrade at most; these checks, and the routes'
// legacyRecheck fields, can go a release later (docs/upgrading.md).

// recheckAgentPath is the access check of the agent a route's path names.
func (s *Server) recheckAgentPath(r *http.Request, _ *data.IdempotentResponse) error {
	_, err := s.svc.Agents.Agent(r.Context(), mux.Vars(r)["agent_id"])
	return err
}

// recheckCallPath is the access check of the call a route's path names.
func (s *Server) recheckCallPath(r *http.Request, _ *data.IdempotentResponse) error {
	_, err := s.svc.Calls.Call(r.Context(), mux.Vars(r)["call_id"])
	return err
}

// recheckBodyAgent is the access check of the agent a request's body names (a call's
// registration). The body was the first request's (the key's hash matched), so it was
// valid JSON; one without an agent_id has nothing to check.
func (s *Server) recheckBodyAgent(r *http.Request, _ *data.IdempotentResponse) error {
	var in struct {
		AgentID string `json:"agent_id"`
	}
	body, err := io.ReadAll(r.Body)
	if err != nil || json.Unmarshal(body, &in) != nil || in.AgentID == "" {
		return nil
	}
	_, err = s.svc.Agents.Agent(r.Context(), in.AgentID)
	return err
}

// recheckCampaignAgent is the access check of the agent a campaign's create names, in its
// JSON body or in the campaign part of its multipart body.
func (s *Server) recheckCampaignAgent(r *http.Request, _ *data.IdempotentResponse) error {
	var in data.CampaignCreate
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt == "multipart/form-data" {
		parsed, _, err := s.readCampaignParts(r)
		if err != nil {
			return nil
		}
		in = parsed
	} else if body, err := io.ReadAll(r.Body); err != nil || json.Unmarshal(body, &in) != nil {
		return nil
	}
	if in.AgentID == "" {
		return nil
	}
	_, err := s.svc.Agents.Agent(r.Context(), in.AgentID)
	return err
}

// recheckKeptStartAgent is the access check of the agent a call's start was routed to,
// read from its kept answer (data.agent.id; data.agent_id in the call a claim kept after a
// crash): the request does not name it when the number's routing chose it.
func (s *Server) recheckKeptStartAgent(r *http.Request, kept *data.IdempotentResponse) error {
	var answer struct {
		Data struct {
			AgentID string `json:"agent_id"`
			Agent   struct {
				ID string `json:"id"`
			} `json:"agent"`
		} `json:"data"`
	}
	if json.Unmarshal(kept.Body, &answer) != nil {
		return nil // a claim without its answer, which a replay refuses (409) anyway
	}
	id := answer.Data.Agent.ID
	if id == "" {
		id = answer.Data.AgentID
	}
	if id == "" {
		return nil
	}
	return s.svc.Idempotency.CheckReplayAgent(r.Context(), id)
}

// recheckKeptCall refuses the replay of a call's registration or start whose call was
// deleted since (DELETE, the retention sweep): its kept answer holds the call as it was
// (transcript, numbers, variables), which the delete was to remove. A claim kept without
// its answer names no call and is refused by the replay anyway.
func (s *Server) recheckKeptCall(r *http.Request, kept *data.IdempotentResponse) error {
	var answer struct {
		Data struct {
			ID   string `json:"id"` // a registration's: the call
			Call struct {
				ID string `json:"id"`
			} `json:"call"` // a start's
		} `json:"data"`
	}
	if kept.Status == 0 || json.Unmarshal(kept.Body, &answer) != nil {
		return nil
	}
	id := answer.Data.ID
	if id == "" {
		id = answer.Data.Call.ID
	}
	if !data.ValidID(data.PrefixCall, id) {
		return nil
	}
	return s.svc.Idempotency.CheckReplayCall(r.Context(), id)
}
