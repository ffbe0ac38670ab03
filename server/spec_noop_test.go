package server_test

import (
	"fmt"
	"testing"
)

// TestSpecUpdatesThatChangeNothing: an update that changes nothing changes nothing
// (conventions §7 for agents: "An empty body changes nothing"; §11: "Every change worth
// telling is an event"; §17: If-Match answers 412 only "when the record changed
// meanwhile"). Agents and knowledge bases kept their updated_at, ETag and silence on a
// no-op update; numbers, webhooks, workspaces and workspace users bumped updated_at,
// changed their ETag (so another client's If-Match failed with nothing changed) and
// sent an *.updated event to every webhook, and the caller's own account (PUT /user,
// which has no event) bumped its updated_at and ETag. Each is updated with an empty body and with
// its own values: 200 with the record, same ETag, no event; a real change still is one.
func TestSpecUpdatesThatChangeNothing(t *testing.T) {
	e := newEnv(t)
	tok, ws := e.Owner.Token, e.Owner.WorkspaceID
	r := e.do("POST", "/api/v1/numbers", tok, map[string]any{"phone_number": "+33140000009", "provider": "twilio", "nickname": "Paris"})
	expect(t, r, 201)
	number := "/api/v1/numbers/" + r.Data()["id"].(string)
	r = e.do("POST", "/api/v1/webhooks", tok, map[string]any{"url": "https://example.com/hook", "events": []string{"*"}, "description": "CRM"})
	expect(t, r, 201)
	webhook := "/api/v1/webhooks/" + r.Data()["id"].(string)
	member := e.newUser("m@example.com", false)
	e.addMember(member, "developer", []string{"agents"}, nil)
	agent := "/api/v1/agents/" + e.createAgent(tok, map[string]any{"name": "Same"})["id"].(string)
	kb := "/api/v1/knowledge-bases/" + e.createKB(tok, map[string]any{"name": "Same"})["id"].(string)

	cases := []struct {
		path, event string
		same        map[string]any // the record's own values
		change      map[string]any
	}{
		{number, "number.updated", map[string]any{"nickname": "Paris", "provider": "twilio", "inbound_agent_id": nil}, map[string]any{"nickname": "Lyon"}},
		{webhook, "webhook.updated", map[string]any{"url": "https://example.com/hook", "events": []string{"*"}, "description": "CRM", "enabled": true}, map[string]any{"enabled": false}},
		{"/api/v1/workspaces/" + ws, "workspace.updated", map[string]any{"name": "owner's workspace", "description": "Personal workspace"}, map[string]any{"description": "Ours"}},
		{"/api/v1/workspaces/" + ws + "/users/" + member.ID, "member.updated", map[string]any{"role": "developer", "modules": []string{"agents"}, "agent_ids": []string{}}, map[string]any{"role": "member"}},
		{agent, "agent.updated", map[string]any{"name": "Same"}, map[string]any{"name": "Other"}},
		{kb, "knowledge_base.updated", map[string]any{"name": "Same"}, map[string]any{"name": "Other"}},
		{"/api/v1/user", "", map[string]any{"name": "owner", "email": e.Owner.Email}, map[string]any{"name": "Renamed"}},
	}
	for _, c := range cases {
		before := e.do("GET", c.path, tok, nil)
		expect(t, before, 200)
		events := e.countEvents(ws, c.event)
		for _, body := range []map[string]any{{}, c.same} {
			r := e.do("PUT", c.path, tok, body, "If-Match", before.Header.Get("ETag"))
			expect(t, r, 200)
			if r.Header.Get("ETag") != before.Header.Get("ETag") || fmt.Sprint(r.Data()) != fmt.Sprint(before.Data()) {
				t.Errorf("PUT %s %v changed the record:\nbefore %s\nafter  %s", c.path, body, before.Body, r.Body)
			}
		}
		if n := e.countEvents(ws, c.event) - events; n != 0 {
			t.Errorf("PUT %s without a change sent %d %s events", c.path, n, c.event)
		}
		r := e.do("PUT", c.path, tok, c.change, "If-Match", before.Header.Get("ETag"))
		expect(t, r, 200)
		if r.Header.Get("ETag") == before.Header.Get("ETag") || (c.event != "" && e.countEvents(ws, c.event) != events+1) {
			t.Errorf("PUT %s %v: a change kept the ETag or sent no event", c.path, c.change)
		}
	}
}
