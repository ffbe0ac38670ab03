package server_test

import (
	"fmt"
	"testing"

	"github.com/voiceapi/voiceapi/data"
)

// BenchmarkNumberListAccess: GET /api/v1/numbers?per_page=100, a page of 100 numbers
// with each one's access beside it, in a workspace of 10 agents whose open campaigns
// (20, scheduled for later) dial from 20 of the numbers, and 10 numbers bound to them:
// by the owner (access needs no read: the owner sees every agent) and by a developer
// limited to one agent (access reads the workspace's open campaigns once for the page).
// What the list's access costs a limited caller.
func BenchmarkNumberListAccess(b *testing.B) {
	e := newEnv(b)
	owner, ws := e.Owner.Token, e.Owner.WorkspaceID
	var agents []string
	for i := range 10 {
		r := e.do("POST", "/api/v1/agents", owner, map[string]any{"name": fmt.Sprintf("Agent %d", i)})
		if r.Status != 201 {
			b.Fatalf("agent: %d %s", r.Status, r.Body)
		}
		id := r.Data()["id"].(string)
		if r := e.do("POST", "/api/v1/agents/"+id+"/publish", owner, nil); r.Status != 204 {
			b.Fatalf("publish: %d %s", r.Status, r.Body)
		}
		agents = append(agents, id)
	}
	for i := range 100 {
		body := map[string]any{"phone_number": fmt.Sprintf("+1415555%04d", i), "provider": "twilio"}
		if i >= 90 {
			body["inbound_agent_id"] = agents[i%10]
		}
		r := e.do("POST", "/api/v1/numbers", owner, body)
		if r.Status != 201 {
			b.Fatalf("number: %d %s", r.Status, r.Body)
		}
		if i < 20 {
			if r := e.do("POST", "/api/v1/campaigns", owner, map[string]any{"name": fmt.Sprintf("C%d", i), "agent_id": agents[i%10],
				"number_id": r.Data()["id"], "window": everyDay, "max_concurrent": 1, "start_at": "2099-01-01T00:00:00Z",
				"recipients": []any{map[string]any{"phone_number": "+14155559999"}}}); r.Status != 201 {
				b.Fatalf("campaign: %d %s", r.Status, r.Body)
			}
		}
	}
	u := e.newUser("limited@example.com", false)
	if r := e.do("POST", "/api/v1/workspaces/"+ws+"/users", owner, map[string]any{"id": u.ID, "role": data.RoleDeveloper,
		"agent_ids": []string{agents[0]}}); r.Status != 201 {
		b.Fatalf("member: %d %s", r.Status, r.Body)
	}
	limited := e.tokenIn(u, ws)
	for _, c := range []struct{ name, token string }{{"owner", owner}, {"limited", limited}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if r := e.do("GET", "/api/v1/numbers?per_page=100", c.token, nil); r.Status != 200 || len(r.List()) != 100 {
					b.Fatalf("list: %d %s", r.Status, r.Body)
				}
			}
		})
	}
}
