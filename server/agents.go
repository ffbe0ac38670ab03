package server

import (
	"context"
	"encoding/json"
	"math"
	"net/http"

	"github.com/gorilla/mux"

	"github.com/voiceapi/voiceapi/data"
)

func (s *Server) agentRoutes() []route {
	read, write := data.Read(data.ModuleAgents), data.Write(data.ModuleAgents)
	create := data.NeedAgentCreate() // a user limited to some agents cannot add agents
	return []route{
		{Method: "GET", Path: "/api/v1/agents", Need: read, handle: s.handleAgentList},
		{Method: "POST", Path: "/api/v1/agents", Need: create, Idempotent: true, handle: s.handleAgentCreate},
		{Method: "GET", Path: "/api/v1/agents/{agent_id}", Need: read, handle: s.handleAgentShow},
		{Method: "PUT", Path: "/api/v1/agents/{agent_id}", Need: write, handle: s.handleAgentUpdate},
		{Method: "DELETE", Path: "/api/v1/agents/{agent_id}", Need: write, handle: s.handleAgentDelete},
		{Method: "POST", Path: "/api/v1/agents/{agent_id}/publish", Need: write, handle: s.handleAgentPublish},
		{Method: "GET", Path: "/api/v1/agents/{agent_id}/versions", Need: read, handle: s.handleAgentVersionList},
		{Method: "GET", Path: "/api/v1/agents/{agent_id}/versions/{version_number}", Need: read, handle: s.handleAgentVersionShow},
		{Method: "DELETE", Path: "/api/v1/agents/{agent_id}/versions/{version_number}", Need: write, handle: s.handleAgentVersionDelete},
		{Method: "POST", Path: "/api/v1/agents/{agent_id}/versions/{version_number}/restore", Need: write, NoBody: true, handle: s.handleAgentVersionRestore},
		{Method: "GET", Path: "/api/v1/agents/{agent_id}/versions/{version_number}/diff/{other}", Need: read, handle: s.handleAgentVersionDiff},
		// The catalog describes no workspace's data: any token, and a key with agents:read.
		{Method: "GET", Path: "/api/v1/catalog", Need: data.Self.WithScope(data.ReadScope(data.ModuleAgents)), handle: s.handleCatalog},
	}
}

// agentJSONSource is what the agent service may offer besides data.AgentService: agents
// already encoded as responses send them (the service caches them while a row is
// unchanged). Encoding agents was most of the CPU of reading them.
type agentJSONSource interface {
	AgentJSON(ctx context.Context, id string) ([]byte, error)
	ListAgentsJSON(ctx context.Context, f data.AgentFilter) ([]json.RawMessage, data.Page, error)
}

// agentWriteJSON is what the agent service may offer for writes: the written agent with
// its JSON, encoded once for the stored row, the event, the response and its ETag.
type agentWriteJSON interface {
	CreateAgentJSON(ctx context.Context, in data.AgentCreate) (*data.Agent, json.RawMessage, error)
	UpdateAgentJSON(ctx context.Context, id string, in data.AgentUpdate) (*data.Agent, json.RawMessage, error)
}

// handleAgentList: GET /api/v1/agents?status=draft|published&name=….
func (s *Server) handleAgentList(w http.ResponseWriter, r *http.Request) error {
	req, err := pageRequest(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	f := data.AgentFilter{Status: q.Get("status"), Name: q.Get("name"), KnowledgeBaseID: q.Get("knowledge_base_id"), PageRequest: req}
	if src, ok := s.svc.Agents.(agentJSONSource); ok {
		// A page of up to 100 agents, each with its whole configuration, is a heavy page:
		// it takes a turn as the calls page does, for the same tail (see pageTurns).
		release, err := s.pages.take(r.Context())
		if err != nil {
			return err
		}
		list, page, err := src.ListAgentsJSON(r.Context(), f)
		var body []byte
		if err == nil {
			body, err = rawListBody(list, page)
		}
		release()
		if err != nil {
			return err
		}
		sendBody(w, body)
		return nil
	}
	list, page, err := s.svc.Agents.ListAgents(r.Context(), f)
	if err != nil {
		return err
	}
	return writeList(w, list, page)
}

// handleAgentCreate: POST /api/v1/agents — 201; omitted groups get their defaults.
func (s *Server) handleAgentCreate(w http.ResponseWriter, r *http.Request) error {
	var in data.AgentCreate
	ctx, err := decodeInput(r, &in)
	if err != nil {
		return err
	}
	if src, ok := s.svc.Agents.(agentWriteJSON); ok {
		_, raw, err := src.CreateAgentJSON(ctx, in)
		if err != nil {
			return err
		}
		return writeRawRecord(w, http.StatusCreated, raw, nil)
	}
	a, err := s.svc.Agents.CreateAgent(ctx, in)
	if err != nil {
		return err
	}
	return writeRecord(w, http.StatusCreated, a, nil)
}

// handleAgentShow: GET /api/v1/agents/{agent_id}.
func (s *Server) handleAgentShow(w http.ResponseWriter, r *http.Request) error {
	if src, ok := s.svc.Agents.(agentJSONSource); ok {
		raw, err := src.AgentJSON(r.Context(), mux.Vars(r)["agent_id"])
		if err != nil {
			return err
		}
		return writeRawRecord(w, http.StatusOK, raw, nil)
	}
	a, err := s.svc.Agents.Agent(r.Context(), mux.Vars(r)["agent_id"])
	if err != nil {
		return err
	}
	return writeRecord(w, http.StatusOK, a, nil)
}

// handleAgentUpdate: PUT /api/v1/agents/{agent_id} — given groups merge into the stored ones.
func (s *Server) handleAgentUpdate(w http.ResponseWriter, r *http.Request) error {
	var in data.AgentUpdate
	ctx, err := decodeInput(r, &in)
	if err != nil {
		return err
	}
	if src, ok := s.svc.Agents.(agentWriteJSON); ok {
		_, raw, err := src.UpdateAgentJSON(ctx, mux.Vars(r)["agent_id"], in)
		if err != nil {
			return err
		}
		return writeRawRecord(w, http.StatusOK, raw, nil)
	}
	a, err := s.svc.Agents.UpdateAgent(ctx, mux.Vars(r)["agent_id"], in)
	if err != nil {
		return err
	}
	return writeRecord(w, http.StatusOK, a, nil)
}

// handleAgentDelete: DELETE /api/v1/agents/{agent_id} — 204.
func (s *Server) handleAgentDelete(w http.ResponseWriter, r *http.Request) error {
	if err := s.svc.Agents.DeleteAgent(r.Context(), mux.Vars(r)["agent_id"]); err != nil {
		return err
	}
	return writeNoContent(w)
}

// handleAgentPublish: POST /api/v1/agents/{agent_id}/publish — 204, as the spec says.
// The service checks the description and the publish gate (409 tests_required or
// tests_failed; force for owners and admins).
func (s *Server) handleAgentPublish(w http.ResponseWriter, r *http.Request) error {
	var in data.PublishRequest
	ctx, err := decodeInput(r, &in)
	if err != nil {
		return err
	}
	if err := s.svc.Agents.PublishAgent(ctx, mux.Vars(r)["agent_id"], in); err != nil {
		return err
	}
	return writeNoContent(w)
}

// handleAgentVersionList: GET /api/v1/agents/{agent_id}/versions — newest first.
func (s *Server) handleAgentVersionList(w http.ResponseWriter, r *http.Request) error {
	req, err := pageRequest(r)
	if err != nil {
		return err
	}
	list, page, err := s.svc.Agents.ListAgentVersions(r.Context(), mux.Vars(r)["agent_id"], req)
	if err != nil {
		return err
	}
	return writeList(w, list, page)
}

// versionNumber reads a path's version number; anything but a positive integer in its
// one spelling (pathNumber) is not found.
func versionNumber(s string) (int, error) {
	n, ok := pathNumber(s)
	if !ok || n > math.MaxInt32 {
		return 0, data.NotFound("Agent version")
	}
	return int(n), nil
}

// handleAgentVersionShow: GET /api/v1/agents/{agent_id}/versions/{version_number}.
func (s *Server) handleAgentVersionShow(w http.ResponseWriter, r *http.Request) error {
	v := mux.Vars(r)
	n, err := versionNumber(v["version_number"])
	if err != nil {
		return err
	}
	ver, err := s.svc.Agents.AgentVersion(r.Context(), v["agent_id"], n)
	if err != nil {
		return err
	}
	return writeRecord(w, http.StatusOK, ver, nil)
}

// handleAgentVersionDelete: DELETE /api/v1/agents/{agent_id}/versions/{version_number} —
// 204; 409 while the version is in use (published, in the rollout, an open call or
// conversation on it).
func (s *Server) handleAgentVersionDelete(w http.ResponseWriter, r *http.Request) error {
	v := mux.Vars(r)
	n, err := versionNumber(v["version_number"])
	if err != nil {
		return err
	}
	if err := s.svc.Agents.DeleteAgentVersion(r.Context(), v["agent_id"], n); err != nil {
		return err
	}
	return writeNoContent(w)
}

// handleAgentVersionRestore: POST /api/v1/agents/{agent_id}/versions/{version_number}/restore
// — 200 with the agent, published at that version.
func (s *Server) handleAgentVersionRestore(w http.ResponseWriter, r *http.Request) error {
	v := mux.Vars(r)
	n, err := versionNumber(v["version_number"])
	if err != nil {
		return err
	}
	a, err := s.svc.Agents.RestoreAgentVersion(r.Context(), v["agent_id"], n)
	if err != nil {
		return err
	}
	return writeRecord(w, http.StatusOK, a, nil)
}

// handleAgentVersionDiff: GET /api/v1/agents/{agent_id}/versions/{a}/diff/{b|current} —
// the changed fields as dot paths with old and new values.
func (s *Server) handleAgentVersionDiff(w http.ResponseWriter, r *http.Request) error {
	v := mux.Vars(r)
	a, err := versionNumber(v["version_number"])
	if err != nil {
		return err
	}
	var b *int
	if v["other"] != "current" {
		n, err := versionNumber(v["other"])
		if err != nil {
			return err
		}
		b = &n
	}
	changes, err := s.svc.Agents.DiffAgentVersions(r.Context(), v["agent_id"], a, b)
	if err != nil {
		return err
	}
	if changes == nil {
		changes = []data.Change{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": changes})
	return nil
}

// handleCatalog: GET /api/v1/catalog — the models valid per provider.
func (s *Server) handleCatalog(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, map[string]any{"data": s.svc.Catalog})
	return nil
}
