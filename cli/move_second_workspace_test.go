package cli_test

import (
	"bytes"
	"testing"

	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/service"
)

// secondWorkspace is another account's workspace in the installation, with its own agent,
// member (the first owner), call, webhook, keys and campaign: a move that mixes
// workspaces or leaves one behind answers otherwise here, or holds fewer keys in a
// bucket after the round trip (checkRoundTripKeepsEveryKey).
type secondWorkspace struct {
	owner   *testkit.Account
	before  map[string]*testkit.Response // its answers before the move, by path
	agentID string
}

// seedSecondWorkspace fills a second account's workspace through the API at base.
func seedSecondWorkspace(t *testing.T, svc *service.Services, base, firstOwnerID string) *secondWorkspace {
	t.Helper()
	ws := &secondWorkspace{owner: testkit.NewAccount(t, svc, "second@example.com", false)}
	do := func(method, path string, body any) *testkit.Response {
		t.Helper()
		return testkit.Request(t, base, method, path, ws.owner.Token, body)
	}
	agent := do("POST", "/api/v1/agents", map[string]any{"name": "Sales"})
	testkit.Expect(t, agent, 201)
	ws.agentID = agent.Data()["id"].(string)
	testkit.Expect(t, do("POST", "/api/v1/agents/"+ws.agentID+"/publish", map[string]any{"description": "second's first"}), 204)
	testkit.Expect(t, do("POST", "/api/v1/workspaces/"+ws.owner.WorkspaceID+"/users", map[string]any{"id": firstOwnerID, "role": "member"}), 201)
	testkit.Expect(t, do("POST", "/api/v1/calls", map[string]any{"agent_id": ws.agentID, "direction": "web", "status": "ended", "duration_ms": 30000,
		"transcript": []map[string]any{{"role": "user", "content": "a second workspace's call", "start_ms": 0}}}), 201)
	testkit.Expect(t, do("POST", "/api/v1/webhooks", map[string]any{"url": "https://example.com/second", "events": []string{"agent.created"}}), 201)
	testkit.Expect(t, do("POST", "/api/v1/api-keys", map[string]any{"name": "second's limited", "agent_ids": []string{ws.agentID}}), 201)
	number := do("POST", "/api/v1/numbers", map[string]any{"phone_number": "+14155550124", "provider": "twilio", "inbound_agent_id": ws.agentID})
	testkit.Expect(t, number, 201)
	testkit.Expect(t, do("POST", "/api/v1/campaigns", map[string]any{"name": "Second's", "agent_id": ws.agentID,
		"number_id": number.Data()["id"], "timezone": "UTC", "max_concurrent": 1,
		"window":     map[string]any{"days": []string{"mon"}, "start": "09:00", "end": "10:00"},
		"recipients": []any{map[string]any{"phone_number": "+14155550103"}}}), 201)
	return ws
}

// recordAnswers records the second workspace's answers at base before the move. Its
// keys' list is not among them: the token reading it is marked used since.
func (ws *secondWorkspace) recordAnswers(t *testing.T, base string) {
	t.Helper()
	paths := []string{"/api/v1/agents", "/api/v1/agents/" + ws.agentID + "/versions", "/api/v1/calls", "/api/v1/numbers",
		"/api/v1/webhooks", "/api/v1/campaigns", "/api/v1/workspaces/" + ws.owner.WorkspaceID + "/users",
		"/api/v1/audit-log?per_page=100", "/api/v1/audit-log/verify"}
	ws.before = answersAt(t, base, ws.owner.Token, paths)
}

// answersAt returns the answers at base to a GET of each of paths with token, each 200.
func answersAt(t *testing.T, base, token string, paths []string) map[string]*testkit.Response {
	t.Helper()
	answers := map[string]*testkit.Response{}
	for _, p := range paths {
		answers[p] = testkit.Request(t, base, "GET", p, token, nil)
		testkit.Expect(t, answers[p], 200)
	}
	return answers
}

// checkSameAnswersAt compares the answers at base to a GET of each path of before with
// token, body and ETag, with before's; whose names the workspace in the errors.
func checkSameAnswersAt(t *testing.T, base, token, whose string, before map[string]*testkit.Response) {
	t.Helper()
	for p, was := range before {
		after := testkit.Request(t, base, "GET", p, token, nil)
		if after.Status != 200 || !bytes.Equal(after.Body, was.Body) {
			t.Errorf("%s GET %s after the move: %d\n%s\nbefore:\n%s", whose, p, after.Status, after.Body, was.Body)
		}
		if a, b := after.Header.Get("ETag"), was.Header.Get("ETag"); a != b {
			t.Errorf("%s GET %s: ETag %q after the move, %q before", whose, p, a, b)
		}
	}
}
