package server_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
)

// TestEventStreamFollowsNarrowedAgentIDs: a stream open while its member's agent_ids
// shrink carries, from then on, only the agents still held: an agent test's event of the
// agent taken away (agent_test.created, named by its agent_id) never reaches it, the next
// event of the agent kept does. Both engines.
func TestEventStreamFollowsNarrowedAgentIDs(t *testing.T) {
	e := newStreamEnv(t, nil)
	ws := e.Owner.WorkspaceID
	a, b := e.newAgent("A"), e.newAgent("B")
	u := e.User(t, "dev@example.com")
	owner := testkit.AsRole(&data.User{ID: e.Owner.ID}, ws, data.RoleOwner)
	if _, err := e.Svc.WorkspaceUsers.AddWorkspaceUser(owner, ws, data.WorkspaceUserAdd{ID: u.ID, Role: data.RoleDeveloper,
		AgentIDs: data.Some([]string{a, b})}); err != nil {
		t.Fatal(err)
	}
	s := e.openStream(e.Token(t, u, ws), "")
	defer s.kill()
	n := 0
	test := func(agent string) {
		n++
		expect(t, e.do("POST", "/api/v1/agents/"+agent+"/tests", e.Owner.Token, map[string]any{"name": fmt.Sprint("Greets ", n),
			"user": map[string]any{"script": []string{"Hello"}}, "criteria": []any{map[string]any{"type": "says", "pattern": "."}}}), 201)
	}
	test(b)
	if m := s.next(); m.event != data.EventAgentTestCreated || !strings.Contains(m.data, b) {
		t.Fatalf("while B is held: %s %s", m.event, m.data)
	}
	expect(t, e.do("PUT", "/api/v1/workspaces/"+ws+"/users/"+u.ID, e.Owner.Token, map[string]any{"agent_ids": []string{a}}), 200)
	test(b)
	test(a)
	if m := s.next(); m.event != data.EventAgentTestCreated || !strings.Contains(m.data, a) || strings.Contains(m.data, b) {
		t.Fatalf("after B was taken away, the stream sent %s %s; want A's test", m.event, m.data)
	}
}
