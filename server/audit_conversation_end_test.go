package server_test

import (
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/llmtest"
	"github.com/voiceapi/voiceapi/internal/testkit"
)

// TestEndingAnEndedConversationReadsItsCallOnlyForCallReaders: a conversation needs the
// agents module (conventions §21), its call is call history (§12). The first end answers
// the call the caller's own conversation became; ending it again reads the call as stored
// now, which others may have changed since (metadata, analysis, recording_url): only a
// caller who may read call history gets it (module call_history; on a key with scopes,
// call_history:read), the others 403, as GET /calls/{call_id} answers them.
func TestEndingAnEndedConversationReadsItsCallOnlyForCallReaders(t *testing.T) {
	e := newConvEnv(t, nil)
	e.stand.Respond(func(llmtest.Request) llmtest.Reply { return llmtest.Text("ok") })
	agent := e.createAgent(t, map[string]any{"name": "A"})
	testkit.Expect(t, e.Do("POST", "/api/v1/agents/"+agent+"/publish", e.tok, nil), 204)
	ws := e.Owner.WorkspaceID
	key := func(scopes ...string) string {
		r := e.Do("POST", "/api/v1/api-keys", e.tok, map[string]any{"name": strings.Join(scopes, " "), "scopes": scopes})
		testkit.Expect(t, r, 201)
		return r.JSON()["token"].(string)
	}
	const secret = "note only call history readers may read"
	for _, c := range []struct {
		name      string
		token     string
		readsCall bool
	}{
		{"member with the agents module alone", e.Member("agents-only@example.com", ws, data.RoleMember, []string{data.ModuleAgents}, nil).Token, false},
		{"key with conversations:write alone", key(data.ScopeConversationsWrite), false},
		{"member with both modules", e.Member("both@example.com", ws, data.RoleMember, []string{data.ModuleAgents, data.ModuleCallHistory}, nil).Token, true},
		{"key with conversations:write and call_history:read", key(data.ScopeConversationsWrite, data.ReadScope(data.ModuleCallHistory)), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			start := e.Do("POST", "/api/v1/agents/"+agent+"/conversations", c.token, map[string]any{})
			testkit.Expect(t, start, 201)
			end := "/api/v1/conversations/" + start.Data()["id"].(string) + "/end"
			first := e.Do("POST", end, c.token, nil)
			testkit.Expect(t, first, 200)
			callID := first.Data()["id"].(string)
			testkit.Expect(t, e.Do("GET", "/api/v1/calls/"+callID, c.token, nil), map[bool]int{true: 200, false: 403}[c.readsCall])
			// Someone who may change calls adds to it.
			testkit.Expect(t, e.Do("PUT", "/api/v1/calls/"+callID, e.tok, map[string]any{"metadata": map[string]any{"note": secret}}), 200)
			again := e.Do("POST", end, c.token, nil)
			if !c.readsCall {
				testkit.Expect(t, again, 403)
				if strings.Contains(string(again.Body), secret) {
					t.Errorf("the refusal shows the call: %s", again.Body)
				}
				return
			}
			testkit.Expect(t, again, 200)
			if again.Data()["id"] != callID || !strings.Contains(string(again.Body), secret) {
				t.Errorf("ending twice: %s, want call %s as stored now", again.Body, callID)
			}
		})
	}
}
