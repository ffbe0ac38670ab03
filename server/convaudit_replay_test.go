package server_test

import (
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
)

// Conventions §22's routes under §17's Idempotency-Key and §6's agent_ids ("a member
// limited by agent_ids" reaches only those agents; docs/api.md: "A replay passes the
// checks a first request passes: ... for every request about one agent or its calls,
// the member's agent_ids as they are now"). A test's create, a test made from a call (its
// caller turns and variables) and a run, retried by a member whose agent_ids no longer
// hold the agent, are 404, not the kept answer; while allowed, the retry is replayed.
func TestConvAuditTestRoutesReplayRecheckTheAgent(t *testing.T) {
	e := newTestsEnvWithoutRunner(t)
	ws := e.Owner.WorkspaceID
	agent := e.bookingAgent(t, "Trattoria")
	other := e.bookingAgent(t, "Other")
	e.createTest(t, agent, scripted("greets", []string{"hello"}, map[string]any{"type": "says", "pattern": "."}))
	call := e.Do("POST", "/api/v1/calls", e.tok, map[string]any{"agent_id": agent, "direction": "web", "status": "ended",
		"transcript": []any{map[string]any{"role": "user", "content": "the private words", "start_ms": 0}}})
	testkit.Expect(t, call, 201)
	dev := e.Member("dev@example.com", ws, data.RoleDeveloper, nil, []string{agent})
	base := "/api/v1/agents/" + agent
	for _, c := range []struct {
		name, path string
		body       map[string]any
		status     int
	}{
		{"a test's create", base + "/tests", scripted("books", []string{"a table"}, map[string]any{"type": "says", "pattern": "."}), 201},
		{"a test from a call", base + "/tests/from-call/" + call.Data()["id"].(string), map[string]any{}, 201},
		{"a run", base + "/test-runs", map[string]any{}, 202},
	} {
		key := "k-" + c.name
		first := e.Do("POST", c.path, dev.Token, c.body, "Idempotency-Key", key)
		testkit.Expect(t, first, c.status)
		if again := e.Do("POST", c.path, dev.Token, c.body, "Idempotency-Key", key); again.Status != c.status || again.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("%s: the retry while allowed: %d %v", c.name, again.Status, again.Header)
		}
		testkit.Expect(t, e.Do("PUT", "/api/v1/workspaces/"+ws+"/users/"+dev.ID, e.tok, map[string]any{"agent_ids": []string{other}}), 200)
		r := e.Do("POST", c.path, dev.Token, c.body, "Idempotency-Key", key)
		if r.Status != 404 || r.Header.Get("Idempotent-Replayed") != "" || strings.Contains(string(r.Body), first.Data()["id"].(string)) ||
			strings.Contains(string(r.Body), "private words") {
			t.Errorf("%s: a member no longer allowed the agent got %d %.300s", c.name, r.Status, r.Body)
		}
		testkit.Expect(t, e.Do("PUT", "/api/v1/workspaces/"+ws+"/users/"+dev.ID, e.tok, map[string]any{"agent_ids": []string{agent}}), 200)
	}
}

// A test made from a call holds the call's caller turns, so making one needs the right to
// read that call (call_history), beyond the route's agents:write. Its replay checks that
// right again: a member who lost call_history since is answered as a first request is
// (404 for the call), never the kept answer with the call's words.
func TestTestFromCallReplayRechecksTheCall(t *testing.T) {
	e := newTestsEnvWithoutRunner(t)
	ws := e.Owner.WorkspaceID
	agent := e.bookingAgent(t, "Trattoria")
	call := e.Do("POST", "/api/v1/calls", e.tok, map[string]any{"agent_id": agent, "direction": "web", "status": "ended",
		"transcript": []any{map[string]any{"role": "user", "content": "the private words", "start_ms": 0}}})
	testkit.Expect(t, call, 201)
	dev := e.Member("dev@example.com", ws, data.RoleDeveloper, nil, nil)
	path := "/api/v1/agents/" + agent + "/tests/from-call/" + call.Data()["id"].(string)
	first := e.Do("POST", path, dev.Token, nil, "Idempotency-Key", "k")
	testkit.Expect(t, first, 201)
	if !strings.Contains(string(first.Body), "private words") {
		t.Fatalf("the test made from the call does not hold its caller turn: %s", first.Body)
	}
	if again := e.Do("POST", path, dev.Token, nil, "Idempotency-Key", "k"); again.Status != 201 || again.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("the retry while allowed: %d %v", again.Status, again.Header)
	}
	without := []string{data.ModuleAgents, data.ModuleKnowledgeBase, data.ModulePhoneNumbers, data.ModuleAnalytics}
	testkit.Expect(t, e.Do("PUT", "/api/v1/workspaces/"+ws+"/users/"+dev.ID, e.tok, map[string]any{"modules": without}), 200)
	fresh := e.Do("POST", path, dev.Token, nil)
	testkit.Expect(t, fresh, 404)
	r := e.Do("POST", path, dev.Token, nil, "Idempotency-Key", "k")
	if r.Status != fresh.Status || r.Header.Get("Idempotent-Replayed") != "" || strings.Contains(string(r.Body), "private words") {
		t.Errorf("a member who lost call_history got %d %v %.300s, want as a first request: %d %s", r.Status, r.Header, r.Body, fresh.Status, fresh.Body)
	}
}
