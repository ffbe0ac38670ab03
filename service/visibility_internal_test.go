package service

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
)

// Every event type says what it is about: a type missing from eventSubjects would be shown
// as a security event (audit log readers only), which is safe but wrong for a record's.
func TestEveryEventTypeHasASubject(t *testing.T) {
	for _, typ := range data.EventTypes {
		s, ok := eventSubjects[typ]
		if !ok {
			t.Errorf("%s has no subject in eventSubjects", typ)
			continue
		}
		record := strings.HasPrefix(typ, "agent.") || strings.HasPrefix(typ, "call.") || strings.HasPrefix(typ, "knowledge_base.") || strings.HasPrefix(typ, "number.") ||
			strings.HasPrefix(typ, "agent_test.") || strings.HasPrefix(typ, "test_run.") ||
			strings.HasPrefix(typ, "campaign.") || strings.HasPrefix(typ, "job.")
		if record == (s.module == "" && !s.job) {
			t.Errorf("%s: subject %+v", typ, s)
		}
	}
	unknown := &data.Event{Type: "something.new", Data: json.RawMessage(`{}`)}
	developer := visibilityOf(&data.Principal{Role: data.RoleDeveloper, Modules: data.Modules})
	if developer.event(unknown) || !visibilityOf(nil).event(unknown) {
		t.Error("an unknown type is not treated as a security event")
	}
}

// topLevelString finds a member of the top-level object only, stops reading once found,
// and answers "" for anything it cannot read.
func TestTopLevelString(t *testing.T) {
	call, _ := json.Marshal(data.Call{ID: "call_1", WorkspaceID: "ws_1", AgentID: "agt_1",
		Transcript: []data.TranscriptItem{{Role: "user", Content: `{"agent_id":"agt_2"}`}}, Variables: map[string]any{"agent_id": "agt_3"}})
	cases := []struct {
		raw, name, want string
	}{
		{string(call), "agent_id", "agt_1"},
		{`{"data":{"agent_id":"agt_2"},"agent_id":"agt_1"}`, "agent_id", "agt_1"},
		{`{"data":{"agent_id":"agt_2"}}`, "agent_id", ""},
		{`{"agent_id":7}`, "agent_id", ""},
		{`{"agent_id":"agt_1"` + strings.Repeat(" ", 10) + `, broken`, "agent_id", "agt_1"},
		{`[{"agent_id":"agt_1"}]`, "agent_id", ""},
		{`not json`, "agent_id", ""},
		{``, "agent_id", ""},
	}
	for _, c := range cases {
		if got := topLevelString(json.RawMessage(c.raw), c.name); got != c.want {
			t.Errorf("topLevelString(%.60q, %q) = %q, want %q", c.raw, c.name, got, c.want)
		}
	}
}

// The rule on a few principals, read as docs/api.md states it (the property test in
// server/ checks every channel against it at large).
func TestVisibilityOfEvents(t *testing.T) {
	agentEvent := &data.Event{Type: data.EventAgentUpdated, Data: json.RawMessage(`{"id":"agt_a"}`)}
	callEvent := &data.Event{Type: data.EventCallEnded, Data: json.RawMessage(`{"id":"call_1","agent_id":"agt_b"}`)}
	keyEvent := &data.Event{Type: data.EventAPIKeyCreated, Data: json.RawMessage(`{}`)}
	kbEvent := &data.Event{Type: data.EventKnowledgeBaseCreated, Data: json.RawMessage(`{}`)}
	all := data.EffectiveModules(data.RoleAdmin, nil)
	cases := []struct {
		name                 string
		p                    *data.Principal
		agent, call, key, kb bool
	}{
		{"no principal (system)", nil, true, true, true, true},
		{"owner", &data.Principal{Role: data.RoleOwner, Modules: all}, true, true, true, true},
		{"admin's key narrowed to agt_a", &data.Principal{Role: data.RoleAdmin, Modules: all, AgentIDs: []string{"agt_a"}}, true, false, false, true},
		{"admin's key with audit:read", &data.Principal{Role: data.RoleAdmin, Modules: all, Scopes: []string{data.ScopeAuditRead}}, false, false, true, false},
		{"admin's key with calls", &data.Principal{Role: data.RoleAdmin, Modules: all, Scopes: []string{"call_history:write"}}, false, true, false, false},
		{"developer", &data.Principal{Role: data.RoleDeveloper, Modules: all}, true, true, false, true},
		{"member without call_history", &data.Principal{Role: data.RoleMember, Modules: []string{data.ModuleAgents}}, true, false, false, false},
	}
	for _, c := range cases {
		v := visibilityOf(c.p)
		for _, ev := range []struct {
			e    *data.Event
			want bool
		}{{agentEvent, c.agent}, {callEvent, c.call}, {keyEvent, c.key}, {kbEvent, c.kb}} {
			if got := v.event(ev.e); got != ev.want {
				t.Errorf("%s reads %s: %v, want %v", c.name, ev.e.Type, got, ev.want)
			}
		}
	}
}
