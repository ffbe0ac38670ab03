package server_test

import (
	"encoding/json"
	"testing"

	"github.com/voiceapi/voiceapi/data"
)

// TestKnowledgeBaseAccessSaysWhatAWriteGets: a knowledge base's show answers, beside the
// record, whether the caller may change it (access.write), and that is what a write then
// gets: 200 where it says true, 403 where it says false. Callers: an owner; a developer
// limited to agent A (a knowledge base only A uses or none does is theirs; one agent B's
// draft or live version names is not); a member (reads only); a developer's key scoped to
// knowledge_base:read. The verdict is the caller's, not the record's: every caller's ETag
// of one knowledge base is the same, and the record's events carry no access. Both engines.
func TestKnowledgeBaseAccessSaysWhatAWriteGets(t *testing.T) {
	e := newEnv(t)
	owner, ws := e.Owner.Token, e.Owner.WorkspaceID
	kb := func(name string) string {
		r := e.do("POST", "/api/v1/knowledge-bases", owner, map[string]any{"name": name})
		expect(t, r, 201)
		if got := accessWrite(t, r); got != true {
			t.Errorf("the owner's create answers access.write %v, want true", got)
		}
		return r.Data()["id"].(string)
	}
	agent := func(name string, kbIDs ...string) string {
		r := e.do("POST", "/api/v1/agents", owner, map[string]any{"name": name, "llm_config": map[string]any{"knowledge_base_ids": kbIDs}})
		expect(t, r, 201)
		return r.Data()["id"].(string)
	}
	ofA, unused, ofB, liveOfB2 := kb("A's"), kb("nobody's"), kb("B's"), kb("B2's live")
	a := agent("A", ofA)
	agent("B", ofB)
	// B2's live version retrieves from liveOfB2; its draft no longer names it.
	b2 := agent("B2", liveOfB2)
	expect(t, e.do("POST", "/api/v1/agents/"+b2+"/publish", owner, nil), 204)
	expect(t, e.do("PUT", "/api/v1/agents/"+b2, owner, map[string]any{"llm_config": map[string]any{"knowledge_base_ids": []string{}}}), 200)

	member := func(email, role string, agentIDs []string) string {
		u := e.newUser(email, false)
		expect(t, e.do("POST", "/api/v1/workspaces/"+ws+"/users", owner, map[string]any{"id": u.ID, "role": role,
			"modules": []string{data.ModuleAgents, data.ModuleKnowledgeBase}, "agent_ids": agentIDs}), 201)
		return e.tokenIn(u, ws)
	}
	limited := member("limited@example.com", data.RoleDeveloper, []string{a})
	reader := member("reader@example.com", data.RoleMember, []string{})
	dev := member("dev@example.com", data.RoleDeveloper, []string{})
	key := e.do("POST", "/api/v1/api-keys", dev, map[string]any{"name": "read only", "scopes": []string{data.ReadScope(data.ModuleKnowledgeBase)}})
	expect(t, key, 201)
	readKey := key.JSON()["token"].(string)

	callers := []struct {
		name, token string
		writes      map[string]bool
	}{
		{"owner", owner, map[string]bool{ofA: true, unused: true, ofB: true, liveOfB2: true}},
		{"developer limited to A", limited, map[string]bool{ofA: true, unused: true, ofB: false, liveOfB2: false}},
		{"member", reader, map[string]bool{ofA: false, unused: false, ofB: false, liveOfB2: false}},
		{"knowledge_base:read key", readKey, map[string]bool{ofA: false, unused: false, ofB: false, liveOfB2: false}},
	}
	etags := map[string]string{}
	for _, c := range callers {
		for id, want := range c.writes {
			show := e.do("GET", "/api/v1/knowledge-bases/"+id, c.token, nil)
			expect(t, show, 200)
			if got := accessWrite(t, show); got != want {
				t.Errorf("%s: knowledge base %s answers access.write %v, want %v", c.name, id, got, want)
			}
			if tag := show.Header.Get("ETag"); etags[id] == "" {
				etags[id] = tag
			} else if tag != etags[id] {
				t.Errorf("%s: knowledge base %s has ETag %s, another caller's is %s: access is the caller's, not the record's", c.name, id, tag, etags[id])
			}
			// What the write gets: an update that changes nothing, with the show's ETag.
			put := e.do("PUT", "/api/v1/knowledge-bases/"+id, c.token, map[string]any{}, "If-Match", show.Header.Get("ETag"))
			if want {
				expect(t, put, 200)
				if got := accessWrite(t, put); got != true {
					t.Errorf("%s: the update of %s answers access.write %v, want true", c.name, id, got)
				}
			} else {
				expect(t, put, 403)
			}
		}
	}
	events := e.do("GET", "/api/v1/audit-log?type="+data.EventKnowledgeBaseCreated, owner, nil)
	expect(t, events, 200)
	if len(events.List()) != 4 {
		t.Fatalf("%d knowledge_base.created events, want 4: %s", len(events.List()), events.Body)
	}
	for _, ev := range events.List() {
		if d, _ := ev.(map[string]any)["data"].(map[string]any); d == nil || d["access"] != nil {
			t.Errorf("an event's record carries access: %v", ev)
		}
	}
}

// accessWrite is the access.write beside the record of an answer, nil when absent.
func accessWrite(t testing.TB, r *response) any {
	t.Helper()
	var body struct {
		Access map[string]any `json:"access"`
	}
	if err := json.Unmarshal(r.Body, &body); err != nil {
		t.Fatalf("answer is not JSON: %v: %s", err, r.Body)
	}
	return body.Access["write"]
}
