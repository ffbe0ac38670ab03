package server_test

import (
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// The audit log of an API key that sees every agent but not every event type (scopes
// audit:read and agents:read: no call_history, knowledge_base or phone_numbers) reads
// only the types it may read. More than service.MaxAuditScan call events, newer than its
// own and by the same user, neither hide its events nor shape its page: they come on the
// first page with no next_cursor, with no filter and an actor filter alike. Before, the
// page was empty with a next_cursor: how many call events there are.
func TestAuditLogOfSomeTypesReadsOnlyThem(t *testing.T) {
	e := newEnv(t)
	agent := e.do("POST", "/api/v1/agents", e.Owner.Token, map[string]any{"name": "Mine"})
	expect(t, agent, 201)
	expect(t, e.do("POST", "/api/v1/knowledge-bases", e.Owner.Token, map[string]any{"name": "Manuals"}), 201)
	key := e.do("POST", "/api/v1/api-keys", e.Owner.Token, map[string]any{"name": "auditor",
		"scopes": []string{data.ScopeAuditRead, data.ReadScope(data.ModuleAgents)}})
	expect(t, key, 201)
	token := key.JSON()["token"].(string)
	agentID := agent.Data()["id"].(string)

	// What the key may read of the log so far: the owner's log but the other modules'.
	hidden := func(typ string) bool {
		for _, p := range []string{"call.", "campaign.", "knowledge_base.", "number.", "job."} {
			if strings.HasPrefix(typ, p) {
				return true
			}
		}
		return false
	}
	ids := func(r *response) (out []string) {
		for _, item := range r.List() {
			ev := item.(map[string]any)
			if hidden(ev["type"].(string)) {
				t.Errorf("the key reads an event of a type it may not: %v", ev)
			}
			out = append(out, ev["id"].(string))
		}
		return out
	}
	owners := e.do("GET", "/api/v1/audit-log?per_page=100", e.Owner.Token, nil)
	expect(t, owners, 200)
	var want, byOwner []string
	for _, item := range owners.List() {
		if ev := item.(map[string]any); !hidden(ev["type"].(string)) {
			want = append(want, ev["id"].(string))
			if actor, _ := ev["actor"].(map[string]any); actor["user_id"] == e.Owner.ID {
				byOwner = append(byOwner, ev["id"].(string))
			}
		}
	}
	if len(byOwner) < 2 || len(want) == len(owners.List()) {
		t.Fatalf("the log before: %d events, %d readable by the key, %d by the owner; want some of each", len(owners.List()), len(want), len(byOwner))
	}

	// Call events of the agent, as the service records them, newer than everything
	// above: written straight to the store, as many as a long log holds.
	appendNewerEvents(t, e, service.MaxAuditScan+10, data.EventCallEnded, `{"id":"call_1","agent_id":"`+agentID+`"}`)
	for _, c := range []struct {
		query string
		want  []string
	}{{"", want}, {"actor=" + url.QueryEscape(e.Owner.ID), byOwner}} {
		r := e.do("GET", "/api/v1/audit-log?per_page=100&"+c.query, token, nil)
		expect(t, r, 200)
		if got := ids(r); !slices.Equal(got, c.want) || r.Meta()["next_cursor"] != nil {
			t.Errorf("?%s: %v, next_cursor %v; want %v on the first page, no next_cursor", c.query, got, r.Meta()["next_cursor"], c.want)
		}
	}
	// The owner, who reads every type, pages through the long log as before.
	r := e.do("GET", "/api/v1/audit-log?per_page=50", e.Owner.Token, nil)
	expect(t, r, 200)
	if len(r.List()) != 50 || r.Meta()["next_cursor"] == nil {
		t.Errorf("the owner's first page: %d events, next_cursor %v; want 50 and a cursor", len(r.List()), r.Meta()["next_cursor"])
	}
}
