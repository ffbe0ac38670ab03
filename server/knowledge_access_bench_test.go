package server_test

import (
	"fmt"
	"testing"

	"github.com/voiceapi/voiceapi/data"
)

// BenchmarkKnowledgeBaseShowAccess: GET /api/v1/knowledge-bases/{id} in a workspace of
// 200 agents with 3 versions each, none using the knowledge base, by the owner (access
// needs no read: the owner sees every agent) and by a developer limited to one agent
// (access reads which agents use it: every agent and version, as the refusal of a write
// does). What a limited caller's access costs a show.
func BenchmarkKnowledgeBaseShowAccess(b *testing.B) {
	e := newEnv(b)
	owner, ws := e.Owner.Token, e.Owner.WorkspaceID
	kb := e.createKB(owner, map[string]any{"name": "Facts"})["id"].(string)
	var first string
	for i := range 200 {
		r := e.do("POST", "/api/v1/agents", owner, map[string]any{"name": fmt.Sprintf("Agent %d", i)})
		if r.Status != 201 {
			b.Fatalf("agent: %d %s", r.Status, r.Body)
		}
		id := r.Data()["id"].(string)
		if first == "" {
			first = id
		}
		for v := range 3 {
			e.do("PUT", "/api/v1/agents/"+id, owner, map[string]any{"name": fmt.Sprintf("Agent %d v%d", i, v)})
			if r := e.do("POST", "/api/v1/agents/"+id+"/publish", owner, nil); r.Status != 204 {
				b.Fatalf("publish: %d %s", r.Status, r.Body)
			}
		}
	}
	u := e.newUser("limited@example.com", false)
	if r := e.do("POST", "/api/v1/workspaces/"+ws+"/users", owner, map[string]any{"id": u.ID, "role": data.RoleDeveloper,
		"agent_ids": []string{first}}); r.Status != 201 {
		b.Fatalf("member: %d %s", r.Status, r.Body)
	}
	limited := e.tokenIn(u, ws)
	for _, c := range []struct{ name, token string }{{"owner", owner}, {"limited", limited}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if r := e.do("GET", "/api/v1/knowledge-bases/"+kb, c.token, nil); r.Status != 200 || accessWrite(b, r) != true {
					b.Fatalf("show: %d %s", r.Status, r.Body)
				}
			}
		})
	}
}
