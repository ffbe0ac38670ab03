package server_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/internal/llmtest"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/llm"
	"github.com/voiceapi/voiceapi/server"
	"github.com/voiceapi/voiceapi/service"
)

const cardMessage = `{"content":"my card is 4111 1111 1111 1111"}`

// echoConv is a conversation with an agent that says back what it heard, in a workspace
// that redacts card numbers; tools are the agent's tools.
func echoConv(t *testing.T, tools ...any) (*convEnv, string, int64) {
	t.Helper()
	e := newConvEnv(t, nil)
	e.stand.Respond(func(r llmtest.Request) llmtest.Reply { return llmtest.Text("You said: " + r.LastUserText()) })
	redactCards(t, e)
	llmConfig := e.llmConfig(nil)
	if len(tools) > 0 {
		llmConfig = e.llmConfig(map[string]any{"tools": tools})
	}
	agent := e.createAgent(t, map[string]any{"name": "Desk", "llm_config": llmConfig})
	id := e.start(t, agent, map[string]any{"version": "draft"}, 201).Data()["id"].(string)
	tokenID := tokenIDOf(t, e.tok)
	return e, id, tokenID
}

// keptBody is the body kept under the token's key, "" when nothing is.
func keptBody(t *testing.T, e *convEnv, tokenID int64, key string) string {
	t.Helper()
	r, err := e.Svc.Idempotency.IdempotentResponse(context.Background(), tokenID, key)
	if err != nil {
		t.Fatal(err)
	}
	if r == nil {
		return ""
	}
	return string(r.Body)
}

// A message's answer kept under its Idempotency-Key, which holds the turn as answered
// (before redaction), is replayed while the conversation is open and deleted with its
// end: a retry after the end is told the conversation ended, and nothing of the turn's
// raw text is kept. Kept, it was replayed raw for a day after the end had redacted the
// conversation and its call.
func TestConversationMessageAnswerGoesAtTheEnd(t *testing.T) {
	e, id, tokenID := echoConv(t)
	path := "/api/v1/conversations/" + id + "/messages"
	testkit.Expect(t, e.Do("POST", path, e.tok, cardMessage, "Idempotency-Key", "m1"), 200)
	replay := e.Do("POST", path, e.tok, cardMessage, "Idempotency-Key", "m1")
	testkit.Expect(t, replay, 200)
	if replay.Header.Get("Idempotent-Replayed") != "true" || !strings.Contains(string(replay.Body), "4111 1111 1111 1111") {
		t.Fatalf("the replay while open: %s %v", replay.Body, replay.Header)
	}
	testkit.Expect(t, e.Do("POST", "/api/v1/conversations/"+id+"/end", e.tok, nil), 200)
	if kept := keptBody(t, e, tokenID, "m1"); kept != "" {
		t.Errorf("after the end the key keeps %s", kept)
	}
	asked := len(e.stand.Requests())
	retry := e.Do("POST", path, e.tok, cardMessage, "Idempotency-Key", "m1")
	testkit.Expect(t, retry, 409)
	if strings.Contains(string(retry.Body), "4111") || !strings.Contains(retry.JSON()["message"].(string), "ended") {
		t.Errorf("the retry after the end: %s", retry.Body)
	}
	if n := len(e.stand.Requests()) - asked; n != 0 {
		t.Errorf("the retry asked the model %d times", n)
	}
}

// The turn that ends the conversation keeps its answer as the end stores it (redacted),
// so its retry after a lost answer is still answered with the turn and its call; the
// answer the server would keep after writing it, raw, is not kept over it.
func TestConversationEndingTurnKeptRedacted(t *testing.T) {
	e, id, tokenID := echoConv(t, map[string]any{"name": "hang_up", "type": "end_call"})
	path := "/api/v1/conversations/" + id + "/messages"
	e.stand.Queue(llmtest.Reply{Text: "Goodbye!", ToolCalls: []llm.ToolCall{{ID: "call_end1", Name: "hang_up", Arguments: "{}"}}})
	first := e.Do("POST", path, e.tok, cardMessage, "Idempotency-Key", "bye")
	testkit.Expect(t, first, 200)
	if first.Data()["status"] != "ended" || !strings.Contains(string(first.Body), "4111 1111 1111 1111") {
		t.Fatalf("the ending turn's answer: %s", first.Body)
	}
	if kept := keptBody(t, e, tokenID, "bye"); strings.Contains(kept, "4111") || !strings.Contains(kept, "[card]") {
		t.Errorf("the ending turn's key keeps %s", kept)
	}
	retry := e.Do("POST", path, e.tok, cardMessage, "Idempotency-Key", "bye")
	testkit.Expect(t, retry, 200)
	if retry.Header.Get("Idempotent-Replayed") != "true" || retry.Data()["call_id"] != first.Data()["call_id"] || strings.Contains(string(retry.Body), "4111") {
		t.Errorf("the retry of the ending turn: %s %v", retry.Body, retry.Header)
	}
}

// An end that commits between a message's turn and the keeping of its answer (another
// request, another replica) leaves nothing kept: the answer is not written after the end
// deleted what was kept.
func TestConversationMessageAnswerNotKeptAfterTheEnd(t *testing.T) {
	e, id, tokenID := echoConv(t)
	path := "/api/v1/conversations/" + id + "/messages"
	server.BeforeKeepingAnswer(t, func(r *http.Request) {
		if r.URL.Path == path {
			testkit.Expect(t, e.Do("POST", "/api/v1/conversations/"+id+"/end", e.tok, nil), 200)
		}
	})
	testkit.Expect(t, e.Do("POST", path, e.tok, cardMessage, "Idempotency-Key", "late"), 200)
	if kept := keptBody(t, e, tokenID, "late"); kept != "" {
		t.Errorf("kept after the end: %s", kept)
	}
}

// A streamed turn that ends the conversation keeps only its claim (a stream's frames are
// not kept past the end, and cannot be rebuilt): its retry is told the message was
// carried out, and that the conversation is where its turn is, never answered twice.
func TestConversationStreamedEndingTurnNotKept(t *testing.T) {
	e, id, tokenID := echoConv(t, map[string]any{"name": "hang_up", "type": "end_call"})
	path := "/api/v1/conversations/" + id + "/messages"
	e.stand.Queue(llmtest.Reply{Text: "Goodbye!", ToolCalls: []llm.ToolCall{{ID: "call_end1", Name: "hang_up", Arguments: "{}"}}})
	first := e.Do("POST", path, e.tok, cardMessage, "Idempotency-Key", "bye", "Accept", "text/event-stream")
	testkit.Expect(t, first, 200)
	if !strings.Contains(string(first.Body), "4111 1111 1111 1111") {
		t.Fatalf("the streamed ending turn: %s", first.Body)
	}
	if kept := keptBody(t, e, tokenID, "bye"); strings.Contains(kept, "4111") {
		t.Errorf("the streamed ending turn's key keeps %s", kept)
	}
	asked := len(e.stand.Requests())
	retry := e.Do("POST", path, e.tok, cardMessage, "Idempotency-Key", "bye", "Accept", "text/event-stream")
	testkit.Expect(t, retry, 409)
	if msg := retry.JSON()["message"].(string); !strings.Contains(msg, "carried out") || !strings.Contains(msg, "ended the conversation") {
		t.Errorf("the retry: %s", retry.Body)
	}
	if n := len(e.stand.Requests()) - asked; n != 0 {
		t.Errorf("the retry asked the model %d times", n)
	}
}

// A conversation's start keeps its answer under its Idempotency-Key as the end will keep
// the conversation (its variables and opening redacted), never raw: kept raw, it was
// replayed for a day after the end had redacted the conversation and its call. Its
// retry, before the end or after, is still that start's answer: no second conversation.
func TestConversationStartKeptRedacted(t *testing.T) {
	e, _, tokenID := echoConv(t)
	path, body, first := startCardGreeter(t, e, "s1")
	id := first.Data()["id"].(string)
	if !strings.Contains(string(first.Body), "4111 1111 1111 1111") {
		t.Fatalf("the start's answer holds no card: nothing to redact: %s", first.Body)
	}
	if kept := keptBody(t, e, tokenID, "s1"); strings.Contains(kept, "4111") || strings.Count(kept, "[card]") != 2 {
		t.Errorf("the start's key keeps %s", kept)
	}
	for _, when := range []string{"open", "ended"} {
		if when == "ended" {
			testkit.Expect(t, e.Do("POST", "/api/v1/conversations/"+id+"/end", e.tok, nil), 200)
		}
		retry := e.Do("POST", path, e.tok, body, "Idempotency-Key", "s1")
		testkit.Expect(t, retry, 201)
		if retry.Header.Get("Idempotent-Replayed") != "true" || retry.Data()["id"] != id || strings.Contains(string(retry.Body), "4111") {
			t.Errorf("the start's retry, conversation %s: %s %v", when, retry.Body, retry.Header)
		}
	}
}

// A start kept while redaction was off is brought under the setting its conversation's
// end redacts with: the workspace turns redaction on mid-conversation, the end redacts
// the conversation and its call, and the start's kept answer with them, so its retry
// after the end replays the start redacted (the same conversation, never a second).
// Before, it was replayed raw until it expired, a day after the start. Both engines.
func TestConversationStartKeptRedactedAtTheEnd(t *testing.T) {
	e := newConvEnv(t, nil)
	e.stand.Respond(func(r llmtest.Request) llmtest.Reply { return llmtest.Text("You said: " + r.LastUserText()) })
	tokenID := tokenIDOf(t, e.tok)
	path, body, first := startCardGreeter(t, e, "s2")
	id := first.Data()["id"].(string)
	if kept := keptBody(t, e, tokenID, "s2"); strings.Count(kept, "4111 1111 1111 1111") != 2 {
		t.Fatalf("with redaction off the start's key keeps %s: nothing for the end to redact", kept)
	}
	redactCards(t, e)
	end := e.Do("POST", "/api/v1/conversations/"+id+"/end", e.tok, nil)
	testkit.Expect(t, end, 200)
	if strings.Contains(string(end.Body), "4111") {
		t.Fatalf("the call the conversation became is not redacted: %s", end.Body)
	}
	if kept := keptBody(t, e, tokenID, "s2"); strings.Contains(kept, "4111") || strings.Count(kept, "[card]") != 2 {
		t.Errorf("after the end the start's key keeps %s", kept)
	}
	retry := e.Do("POST", path, e.tok, body, "Idempotency-Key", "s2")
	testkit.Expect(t, retry, 201)
	if retry.Header.Get("Idempotent-Replayed") != "true" || retry.Data()["id"] != id || strings.Contains(string(retry.Body), "4111") ||
		retry.Header.Get("ETag") == "" || retry.Header.Get("ETag") == first.Header.Get("ETag") {
		t.Errorf("the start's retry after the end: %s %v", retry.Body, retry.Header)
	}
}

// A start's kept answer that cannot be read (its seal broken) cannot be redacted at the
// end: the end still ends the conversation, and keeps only the start's claim, which a
// retry is told was carried out: no raw answer, no second conversation.
func TestConversationStartKeptUnreadableAtTheEnd(t *testing.T) {
	e, _, tokenID := echoConv(t)
	agent := e.createAgent(t, map[string]any{"name": "Greeter", "llm_config": e.llmConfig(nil)})
	path, body := "/api/v1/agents/"+agent+"/conversations", map[string]any{"version": "draft"}
	first := e.Do("POST", path, e.tok, body, "Idempotency-Key", "s3")
	testkit.Expect(t, first, 201)
	id := first.Data()["id"].(string)
	if err := e.Store.Update(context.Background(), func(tx service.Tx) error {
		r, err := tx.IdempotentResponse(tokenID, "s3")
		if err != nil || r == nil || r.StartedConversationID != id {
			return fmt.Errorf("the start's kept answer: %+v, %v", r, err)
		}
		r.Body = []byte("not a sealed body")
		return tx.PutIdempotentResponse(tokenID, "s3", r)
	}); err != nil {
		t.Fatal(err)
	}
	testkit.Expect(t, e.Do("POST", "/api/v1/conversations/"+id+"/end", e.tok, nil), 200)
	retry := e.Do("POST", path, e.tok, body, "Idempotency-Key", "s3")
	testkit.Expect(t, retry, 409)
	if msg, _ := retry.JSON()["message"].(string); !strings.Contains(msg, "carried out") {
		t.Errorf("the start's retry: %s", retry.Body)
	}
}

// redactCards turns on the workspace's redaction of card numbers.
func redactCards(t *testing.T, e *convEnv) {
	t.Helper()
	testkit.Expect(t, e.Do("PUT", "/api/v1/workspaces/"+e.Owner.WorkspaceID, e.tok,
		map[string]any{"privacy": map[string]any{"redaction": map[string]any{"detectors": []string{"card"}}}}), 200)
}

// startCardGreeter starts, under Idempotency-Key key, a conversation with a new agent
// whose welcome message says the card number given as a variable; it returns the start's
// path and body (for its retries) and its 201.
func startCardGreeter(t *testing.T, e *convEnv, key string) (string, map[string]any, *testkit.Response) {
	t.Helper()
	agent := e.createAgent(t, map[string]any{"name": "Greeter", "llm_config": e.llmConfig(nil),
		"prompt_config": map[string]any{"welcome_message": "Hello, is your card {{card}}?"}})
	path, body := "/api/v1/agents/"+agent+"/conversations", map[string]any{"version": "draft", "variables": map[string]any{"card": "4111 1111 1111 1111"}}
	first := e.Do("POST", path, e.tok, body, "Idempotency-Key", key)
	testkit.Expect(t, first, 201)
	return path, body, first
}
