package server_test

import (
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/internal/llmtest"
	"github.com/voiceapi/voiceapi/internal/testkit"
)

// GET /conversations/{id} shows an open conversation's messages as written, an ended
// one's redacted as its call's transcript is, and 404 once its call is deleted.
func TestEndedConversationShowsWhatItsCallKeeps(t *testing.T) {
	e := newConvEnv(t, nil)
	e.stand.Respond(func(r llmtest.Request) llmtest.Reply { return llmtest.Text("You said: " + r.LastUserText()) })
	testkit.Expect(t, e.Do("PUT", "/api/v1/workspaces/"+e.Owner.WorkspaceID, e.tok,
		map[string]any{"privacy": map[string]any{"redaction": map[string]any{"detectors": []string{"card"}}}}), 200)
	agent := e.createAgent(t, map[string]any{"name": "Desk", "llm_config": e.llmConfig(nil)})
	id := e.start(t, agent, map[string]any{"version": "draft"}, 201).Data()["id"].(string)
	testkit.Expect(t, e.Do("POST", "/api/v1/conversations/"+id+"/messages", e.tok, map[string]any{"content": "my card is 4111 1111 1111 1111"}), 200)
	show := func(status int) string {
		r := e.Do("GET", "/api/v1/conversations/"+id, e.tok, nil)
		testkit.Expect(t, r, status)
		return string(r.Body)
	}
	if open := show(200); !strings.Contains(open, "4111 1111 1111 1111") {
		t.Fatalf("the open conversation = %s", open)
	}
	end := e.Do("POST", "/api/v1/conversations/"+id+"/end", e.tok, nil)
	testkit.Expect(t, end, 200)
	ended := show(200)
	if strings.Contains(ended, "4111") || strings.Count(ended, "[card]") != 2 {
		t.Errorf("the ended conversation (the user's message and the reply redacted) = %s", ended)
	}
	testkit.Expect(t, e.Do("DELETE", "/api/v1/calls/"+end.Data()["id"].(string), e.tok, nil), 204)
	show(404)
}
