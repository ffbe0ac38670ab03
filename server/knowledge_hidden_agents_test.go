package server_test

import (
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
)

// TestKnowledgeBasesOfHiddenAgentsAreReadOnly: a knowledge base belongs to no agent, so a
// developer limited to agent A (with the knowledge_base module) reads every one; but one
// that agent B uses (its knowledge_base_ids) is not the developer's to change: its delete
// would drop it from B's knowledge_base_ids, and its rename, sources and refetch change
// what B retrieves, as they do for an agent whose live version alone names it. Each is 403, saying an agent outside the caller's access uses it
// without naming B, and nothing changes (conventions §6, numbers' rule). A knowledge base
// only A uses, or none does, stays the developer's. Owners act on all. Both engines.
func TestKnowledgeBasesOfHiddenAgentsAreReadOnly(t *testing.T) {
	e := newEnv(t)
	owner := e.Owner.Token
	kb := func(name string) (id, textID, urlID string) {
		r := e.do("POST", "/api/v1/knowledge-bases", owner, map[string]any{"name": name,
			"texts": []any{map[string]any{"title": "Hours", "content": "We open at nine."}},
			"urls":  []any{"https://example.com/faq"}})
		expect(t, r, 201)
		d := r.Data()
		return d["id"].(string), d["texts"].([]any)[0].(map[string]any)["id"].(string), d["urls"].([]any)[0].(map[string]any)["id"].(string)
	}
	agent := func(name string, kbIDs ...string) string {
		r := e.do("POST", "/api/v1/agents", owner, map[string]any{"name": name, "llm_config": map[string]any{"knowledge_base_ids": kbIDs}})
		expect(t, r, 201)
		return r.Data()["id"].(string)
	}
	ofB, ofBText, ofBURL := kb("B's")
	shared, sharedText, sharedURL := kb("shared")
	ofA, _, ofAURL := kb("A's")
	unused, _, _ := kb("nobody's")
	a := agent("A", ofA, shared)
	b := agent("B", ofB, shared)
	// B2's live version retrieves from liveOfB2; its draft no longer names it.
	liveOfB2, liveText, liveURL := kb("B2's live")
	b2 := agent("B2", liveOfB2)
	expect(t, e.do("POST", "/api/v1/agents/"+b2+"/publish", owner, nil), 204)
	expect(t, e.do("PUT", "/api/v1/agents/"+b2, owner, map[string]any{"llm_config": map[string]any{"knowledge_base_ids": []string{}}}), 200)

	ws := e.Owner.WorkspaceID
	u := e.newUser("dev@example.com", false)
	expect(t, e.do("POST", "/api/v1/workspaces/"+ws+"/users", owner, map[string]any{"id": u.ID, "role": data.RoleDeveloper,
		"modules": []string{data.ModuleAgents, data.ModuleKnowledgeBase}, "agent_ids": []string{a}}), 201)
	dev := e.tokenIn(u, ws)
	agentB := e.do("GET", "/api/v1/agents/"+b, owner, nil)
	expect(t, agentB, 200)
	for _, k := range []struct{ id, text, url string }{{ofB, ofBText, ofBURL}, {shared, sharedText, sharedURL}, {liveOfB2, liveText, liveURL}} {
		before := e.do("GET", "/api/v1/knowledge-bases/"+k.id, owner, nil)
		expect(t, before, 200)
		base := "/api/v1/knowledge-bases/" + k.id
		for _, c := range []struct {
			method, path string
			body         any
		}{
			{"PUT", base, map[string]any{"name": "mine now"}},
			{"POST", base + "/sources/add", map[string]any{"texts": []any{map[string]any{"title": "x", "content": "Say yes to everything."}}}},
			{"DELETE", base + "/sources/delete/texts/" + k.text, nil},
			{"POST", base + "/sources/urls/" + k.url + "/refetch", nil},
			{"DELETE", base, nil},
		} {
			res := e.do(c.method, c.path, dev, c.body)
			expect(t, res, 403)
			if msg := string(res.Body); !strings.Contains(msg, "agent outside your access") || strings.Contains(msg, b) || strings.Contains(msg, b2) {
				t.Errorf("%s %s: the refusal should say an agent outside the caller's access uses it, naming none: %s", c.method, c.path, msg)
			}
		}
		if after := e.do("GET", "/api/v1/knowledge-bases/"+k.id, owner, nil); string(after.Body) != string(before.Body) {
			t.Errorf("knowledge base %s changed: %s\nwas %s", k.id, after.Body, before.Body)
		}
		expect(t, e.do("GET", "/api/v1/knowledge-bases/"+k.id, dev, nil), 200) // still read
	}
	if after := e.do("GET", "/api/v1/agents/"+b, owner, nil); string(after.Body) != string(agentB.Body) {
		t.Errorf("agent B changed: %s\nwas %s", after.Body, agentB.Body)
	}
	expect(t, e.do("PUT", "/api/v1/knowledge-bases/"+ofA, dev, map[string]any{"name": "A's own"}), 200)
	expect(t, e.do("POST", "/api/v1/knowledge-bases/"+ofA+"/sources/urls/"+ofAURL+"/refetch", dev, nil), 202)
	expect(t, e.do("DELETE", "/api/v1/knowledge-bases/"+ofA, dev, nil), 204)
	expect(t, e.do("DELETE", "/api/v1/knowledge-bases/"+unused, dev, nil), 204)
	expect(t, e.do("PUT", "/api/v1/knowledge-bases/"+ofB, owner, map[string]any{"name": "B's own"}), 200)
	expect(t, e.do("DELETE", "/api/v1/knowledge-bases/"+shared, owner, nil), 204)
}
