package service

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/voiceapi/voiceapi/data"
)

// The pairs a limited caller's audit page walks (eventScopes) are exactly the events it
// may read: every event the rule shows it is of a pair (none is lost to the walk), and
// every pair's events are shown, job.failed's too (a pair a job kind it reads, as its job
// decides). A caller who sees every agent but not every type walks its types whatever
// their agent; a caller who reads everything walks no pairs.
func TestEventScopesAreWhatTheCallerReads(t *testing.T) {
	jobs := &jobRegistry{kinds: map[string]*JobKind{
		"run": {Name: "run", Module: data.ModuleAgents}, "embed": {Name: "embed", Module: data.ModuleKnowledgeBase},
		"dial": {Name: "dial", Module: data.ModuleCallHistory}, "sweep": {Name: "sweep", Module: data.ModuleAgents, EveryAgent: true},
	}}
	for _, p := range []*data.Principal{
		{Role: data.RoleDeveloper, Modules: data.Modules, AgentIDs: []string{"agt_1", "agt_2", "agt_1"}},
		{Role: data.RoleMember, Modules: []string{data.ModuleAgents, data.ModuleKnowledgeBase}, AgentIDs: []string{"agt_2"}},
		{Role: data.RoleDeveloper, Modules: data.Modules, AgentIDs: []string{"agt_1"}, Scopes: []string{data.ReadScope(data.ModuleCallHistory)}},
		// Every agent, not every type: no security event, no call's; only security events.
		{Role: data.RoleDeveloper, Modules: data.Modules},
		{Role: data.RoleMember, Modules: []string{data.ModuleAgents, data.ModuleKnowledgeBase}},
		{Role: data.RoleAdmin, Modules: data.Modules, Scopes: []string{data.ScopeAuditRead}},
		{Role: data.RoleOwner, Modules: data.Modules, Scopes: []string{data.ScopeAuditRead, data.ReadScope(data.ModuleAgents)}},
		// The audit log and some job kinds: knowledge bases' and not agents' or calls'.
		{Role: data.RoleAdmin, Modules: data.Modules, Scopes: []string{data.ScopeAuditRead, data.ReadScope(data.ModuleKnowledgeBase)}},
	} {
		p.WorkspaceID = "ws_1"
		v := visibility{p: p, jobs: jobs}
		all := v.eventScopes("")
		for _, typ := range data.EventTypes {
			ofType := v.eventScopes(typ)
			kinds := []string{""}
			if typ == data.EventJobFailed {
				kinds = []string{"run", "embed", "dial", "sweep", "unknown", ""}
			}
			for _, agent := range []string{"agt_1", "agt_2", "agt_3", ""} {
				for _, kind := range kinds {
					body, _ := json.Marshal(map[string]any{"id": agent, "agent_id": agent, "kind": kind, "workspace_id": "ws_1"})
					if agent == "" {
						body, _ = json.Marshal(map[string]any{"name": "x", "agent_id": nil, "kind": kind, "workspace_id": "ws_1"})
					}
					e := &data.Event{Type: typ, Data: body}
					pair := EventScope{Agent: EventAgent(e), Type: typ, Kind: EventKind(e)}
					if v.allAgents() {
						pair = EventScope{Type: typ, Kind: EventKind(e), AnyAgent: true}
					}
					walked := slices.Contains(all, pair)
					if v.event(e) && (!walked || !slices.Contains(ofType, pair)) {
						t.Errorf("%+v: %s of %q, kind %q, is readable but of no pair walked", p, typ, agent, kind)
					}
					if walked && !v.event(e) {
						t.Errorf("%+v: %s of %q, kind %q, is walked but not readable", p, typ, agent, kind)
					}
				}
			}
			for _, s := range ofType {
				if s.Type != typ {
					t.Errorf("%+v: a pair of type %s for the filter %s", p, s.Type, typ)
				}
			}
		}
		if len(all) != len(slices.Compact(slices.Clone(all))) {
			t.Errorf("%+v: a pair twice", p)
		}
	}
	if s := visibilityOf(&data.Principal{Role: data.RoleAdmin, Modules: data.Modules}).eventScopes(""); s != nil {
		t.Errorf("a caller who reads everything walks pairs: %v", s)
	}
}

// An event's agent is neither shown nor linked: the audit chain's hash and the event's
// JSON are the same with it or without it.
func TestEventAgentIsNotHashedNorShown(t *testing.T) {
	e := &data.Event{ID: "evt_1", Type: data.EventCallEnded, WorkspaceID: "ws_1", Data: json.RawMessage(`{"agent_id":"agt_1"}`)}
	key := []byte("k")
	before, _ := json.Marshal(e)
	hash := ChainHash(key, e)
	e.AgentID, e.Kind = EventAgent(e), EventKind(e)
	after, _ := json.Marshal(e)
	if e.AgentID != "agt_1" || ChainHash(key, e) != hash || string(after) != string(before) {
		t.Errorf("agent %q: hash %v, JSON %s", e.AgentID, ChainHash(key, e) == hash, after)
	}
}
