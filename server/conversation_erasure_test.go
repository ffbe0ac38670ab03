package server_test

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/voiceapi/voiceapi/internal/llmtest"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/llm"
	"github.com/voiceapi/voiceapi/server"
)

// A call deleted (its conversation with it) takes what its conversation's
// Idempotency-Keys kept: the start's answer, which holds its variables and opening, is
// cut to its claim, so a retry of the start is told it was carried out (409), neither
// replayed the erased data nor given a second conversation; the ending turn's answer,
// which holds what the caller said, goes, so its retry finds no conversation (404).
// Both were replayed for up to a day after the erasure. Both engines.
func TestDeletedCallTakesItsConversationsKeptAnswers(t *testing.T) {
	e := newConvEnv(t, nil)
	e.stand.Respond(func(r llmtest.Request) llmtest.Reply { return llmtest.Text("You said: " + r.LastUserText()) })
	tokenID := tokenIDOf(t, e.tok)
	agent := e.createAgent(t, map[string]any{"name": "Greeter", "llm_config": e.llmConfig(map[string]any{
		"tools": []any{map[string]any{"name": "hang_up", "type": "end_call"}}}),
		"prompt_config": map[string]any{"welcome_message": "Hello {{name}}, how can I help?"}})
	startPath, startBody := "/api/v1/agents/"+agent+"/conversations", map[string]any{"version": "draft", "variables": map[string]any{"name": "Ada Lovelace"}}
	start := e.Do("POST", startPath, e.tok, startBody, "Idempotency-Key", "start")
	testkit.Expect(t, start, 201)
	msgPath, msg := "/api/v1/conversations/"+start.Data()["id"].(string)+"/messages", `{"content":"I live at 12 Analytical Row"}`
	e.stand.Queue(llmtest.Reply{Text: "Goodbye!", ToolCalls: []llm.ToolCall{{ID: "call_end1", Name: "hang_up", Arguments: "{}"}}})
	bye := e.Do("POST", msgPath, e.tok, msg, "Idempotency-Key", "bye")
	testkit.Expect(t, bye, 200)
	callID, _ := bye.Data()["call_id"].(string)
	if bye.Data()["status"] != "ended" || callID == "" {
		t.Fatalf("the ending turn's answer: %s", bye.Body)
	}
	if !strings.Contains(keptBody(t, e, tokenID, "start"), "Ada Lovelace") || !strings.Contains(keptBody(t, e, tokenID, "bye"), "Analytical Row") {
		t.Fatal("before the delete, the kept answers hold no personal data: nothing to erase")
	}
	testkit.Expect(t, e.Do("DELETE", "/api/v1/calls/"+callID, e.tok, nil), 204)

	for _, key := range []string{"start", "bye"} {
		if kept := keptBody(t, e, tokenID, key); kept != "" {
			t.Errorf("after the call's delete, key %q keeps %s", key, kept)
		}
	}
	retry := e.Do("POST", startPath, e.tok, startBody, "Idempotency-Key", "start")
	testkit.Expect(t, retry, 409)
	if msg, _ := retry.JSON()["message"].(string); strings.Contains(string(retry.Body), "Ada") || !strings.Contains(msg, "carried out") {
		t.Errorf("the start's retry after the delete: %s", retry.Body)
	}
	testkit.Expect(t, e.Do("POST", msgPath, e.tok, msg, "Idempotency-Key", "bye"), 404)
	if r, err := e.Svc.Idempotency.IdempotentResponse(context.Background(), tokenID, "start"); err != nil || r == nil || r.Status != 0 {
		t.Errorf("the start's key after the delete: %+v, %v; want its claim", r, err)
	}
}

// An agent's delete keeps its conversations (and their calls), and cuts what their
// Idempotency-Keys kept to its claims: the start's answer (its variables and opening) and
// a message's (the turn's words) are not kept a day longer. A retry of either is refused
// as a first request would be, 404 "Agent not found." (the replay re-checks the agent
// kept with the claim), never the kept answer, a second conversation or a second turn.
// Before, the answers stayed whole until they expired (the 404 held already). Both
// engines.
func TestDeletedAgentsKeptStartNotReplayed(t *testing.T) {
	e := newConvEnv(t, nil)
	e.stand.Respond(func(r llmtest.Request) llmtest.Reply { return llmtest.Text("You said: " + r.LastUserText()) })
	tokenID := tokenIDOf(t, e.tok)
	agent := e.createAgent(t, map[string]any{"name": "Greeter", "llm_config": e.llmConfig(nil),
		"prompt_config": map[string]any{"welcome_message": "Hello {{name}}"}})
	path, body := "/api/v1/agents/"+agent+"/conversations", map[string]any{"version": "draft", "variables": map[string]any{"name": "Ada Lovelace"}}
	start := e.Do("POST", path, e.tok, body, "Idempotency-Key", "start")
	testkit.Expect(t, start, 201)
	msgPath, msg := "/api/v1/conversations/"+start.Data()["id"].(string)+"/messages", `{"content":"I live at 12 Analytical Row"}`
	testkit.Expect(t, e.Do("POST", msgPath, e.tok, msg, "Idempotency-Key", "turn"), 200)
	if !strings.Contains(keptBody(t, e, tokenID, "start"), "Ada Lovelace") || !strings.Contains(keptBody(t, e, tokenID, "turn"), "Analytical Row") {
		t.Fatal("before the delete, the kept answers hold no personal data: nothing to cut")
	}
	testkit.Expect(t, e.Do("DELETE", "/api/v1/agents/"+agent, e.tok, nil), 204)

	for _, key := range []string{"start", "turn"} {
		r, err := e.Svc.Idempotency.IdempotentResponse(context.Background(), tokenID, key)
		if err != nil || r == nil || r.Status != 0 || len(r.Body) != 0 || r.AgentID != agent {
			t.Errorf("after the agent's delete, key %q keeps %+v (%v); want its claim, naming the agent", key, r, err)
		}
	}
	for _, retry := range []*testkit.Response{e.Do("POST", path, e.tok, body, "Idempotency-Key", "start"),
		e.Do("POST", msgPath, e.tok, msg, "Idempotency-Key", "turn")} {
		testkit.Expect(t, retry, 404)
		if m, _ := retry.JSON()["message"].(string); m != "Agent not found." || strings.Contains(string(retry.Body), "Ada") {
			t.Errorf("a retry after the agent's delete: %s", retry.Body)
		}
	}
	if c := e.Do("GET", "/api/v1/conversations/"+start.Data()["id"].(string), e.tok, nil); c.Status != 200 {
		t.Errorf("the conversation after its agent's delete: %d %s; want it kept", c.Status, c.Body)
	}
}

// A message whose turn committed before its agent's delete, and whose answer the server
// keeps after it (the hook runs the delete in between), keeps only its claim: the delete
// found the claim, not yet the answer, to cut, and the keeping finds the agent gone.
// Before, the turn's words were kept whole after the delete, for the rest of the day.
// Both engines.
func TestMessageAnswerNotKeptAfterItsAgentsDelete(t *testing.T) {
	e := newConvEnv(t, nil)
	e.stand.Respond(func(r llmtest.Request) llmtest.Reply { return llmtest.Text("You said: " + r.LastUserText()) })
	tokenID := tokenIDOf(t, e.tok)
	agent := e.createAgent(t, map[string]any{"name": "Greeter", "llm_config": e.llmConfig(nil)})
	start := e.Do("POST", "/api/v1/agents/"+agent+"/conversations", e.tok, map[string]any{"version": "draft"})
	testkit.Expect(t, start, 201)
	const key = "turn"
	var deleted atomic.Bool
	server.BeforeKeepingAnswer(t, func(r *http.Request) {
		if r.Header.Get("Idempotency-Key") == key && deleted.CompareAndSwap(false, true) {
			if err := e.Svc.Agents.DeleteAgent(ownerOf(e.Server), agent); err != nil {
				t.Error(err)
			}
		}
	})
	msgPath := "/api/v1/conversations/" + start.Data()["id"].(string) + "/messages"
	testkit.Expect(t, e.Do("POST", msgPath, e.tok, `{"content":"I live at 12 Analytical Row"}`, "Idempotency-Key", key), 200)
	if !deleted.Load() {
		t.Fatal("the agent was not deleted between the turn and the keeping of its answer")
	}
	if r, err := e.Svc.Idempotency.IdempotentResponse(context.Background(), tokenID, key); err != nil || r == nil || r.Status != 0 || len(r.Body) != 0 {
		t.Errorf("after the agent's delete, the turn's key keeps %+v (%v); want its claim", r, err)
	}
	retry := e.Do("POST", msgPath, e.tok, `{"content":"I live at 12 Analytical Row"}`, "Idempotency-Key", key)
	testkit.Expect(t, retry, 404)
}
