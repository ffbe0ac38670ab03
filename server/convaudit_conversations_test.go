package server_test

import (
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/bolt"
	"github.com/voiceapi/voiceapi/cli"
	"github.com/voiceapi/voiceapi/internal/llmtest"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/llm"
)

// Conventions §21: "When first_speaker is ai, the agent's opening is already in messages
// (... a dynamic one written by the model from the prompt)"; "A provider failure is 502
// provider_error naming the provider and its status and message (no credential); a
// timeout ... is 504 provider_timeout. Neither is ever a 500." The start that asks the
// model for its opening is held to that as a message is, and a failed start stores no
// conversation.
func TestConvAuditDynamicOpeningThroughTheAPI(t *testing.T) {
	const key = "sk-live-opening-0123456789"
	var now atomic.Int64
	now.Store(time.Now().UnixNano())
	clock := func() time.Time { return time.Unix(0, now.Load()).UTC() }
	e := newConvEnvWith(t, func(o *bolt.Options) { o.Now = clock }, []llmtest.Option{llmtest.WithAPIKey(key)}, func(s *cli.LLMSettings) { s.Timeout = 2 * time.Second })
	agent := e.createAgent(t, map[string]any{"name": "Opener",
		"prompt_config": map[string]any{"prompt": "You answer for {{shop}}.", "first_speaker": "ai", "welcome_message_type": "dynamic"}})
	body := map[string]any{"version": "draft", "variables": map[string]any{"shop": "Acme"}}
	for _, c := range []struct {
		name   string
		reply  llmtest.Reply
		status int
		code   string
	}{
		{"401", llmtest.Fail(401, "Incorrect API key provided: "+key), 502, "provider_error"},
		{"500", llmtest.Fail(500, "The server had an error"), 502, "provider_error"},
		{"no answer", llmtest.Hang(), 504, "provider_timeout"},
	} {
		e.stand.Queue(c.reply)
		r := e.Do("POST", "/api/v1/agents/"+agent+"/conversations", e.tok, body)
		if r.Status != c.status || r.Code() != c.code || !strings.Contains(r.JSON()["message"].(string), "internal") || strings.Contains(string(r.Body), key) {
			t.Errorf("%s: %d %s; want %d %s naming the provider, no credential", c.name, r.Status, r.Body, c.status, c.code)
		}
	}
	e.stand.Queue(llmtest.Text("Hi, Acme here."))
	opened := e.start(t, agent, body, 201).Data()
	msgs := opened["messages"].([]any)
	if len(msgs) != 1 || msgs[0].(map[string]any)["content"] != "Hi, Acme here." || msgs[0].(map[string]any)["role"] != "agent" {
		t.Fatalf("the opening: %v", msgs)
	}
	if sys := e.stand.Requests()[len(e.stand.Requests())-1].System; !strings.Contains(sys, "You answer for Acme.") {
		t.Errorf("the opening was not written from the prompt with its variables: %q", sys)
	}
	// Only the started conversation exists: the idle sweep finds it alone.
	now.Add(int64(31 * time.Minute))
	if n, err := e.Svc.Conversations.ExpireIdle(t.Context(), 10); err != nil || n != 1 {
		t.Errorf("ExpireIdle after three failed starts and one conversation = %d, %v; want 1", n, err)
	}
	if strings.Contains(e.Logs.String(), key) {
		t.Error("the server's log holds the credential")
	}
}

// Conventions §21: "transfer_call ends with the chosen phone_directory entry recorded";
// "POST /api/v1/conversations/{id}/end → 200 with the call it becomes: ... the transcript
// (tool items included), ... and disconnection_reason (... transferred ...)". Through the
// API: the message that transfers ends the conversation, its call says transferred and
// carries the entry in metadata.transferred_to and the tool item in its transcript, and
// nothing more is taken.
func TestConvAuditTransferEndsWithTheEntryRecorded(t *testing.T) {
	e := newConvEnv(t, nil)
	e.stand.Respond(func(r llmtest.Request) llmtest.Reply {
		if len(r.ToolResults()) == 0 {
			return llmtest.Calls(llm.ToolCall{ID: "call_t1", Name: "handoff", Arguments: `{"destination":"Billing"}`})
		}
		return llmtest.Text("Transferring you now.")
	})
	agent := e.createAgent(t, map[string]any{"name": "Desk", "llm_config": e.llmConfig(map[string]any{"tools": []map[string]any{
		{"name": "handoff", "type": "transfer_call", "phone_directory": []map[string]any{
			{"name": "Sales", "phone_number": "+14155550100", "description": "Buying", "transfer_type": "cold"},
			{"name": "Billing", "phone_number": "+14155550101", "description": "Invoices", "transfer_type": "warm"}}}}})})
	id := e.start(t, agent, map[string]any{"version": "draft"}, 201).Data()["id"].(string)
	r := e.Do("POST", "/api/v1/conversations/"+id+"/messages", e.tok, map[string]any{"content": "My invoice is wrong."})
	if testkit.Expect(t, r, 200); r.Data()["status"] != "ended" {
		t.Fatalf("the transferring message: %s", r.Body)
	}
	conv := e.Do("GET", "/api/v1/conversations/"+id, e.tok, nil).Data()
	if conv["disconnection_reason"] != "transferred" || conv["call_id"] == nil {
		t.Fatalf("the conversation: reason %v call %v", conv["disconnection_reason"], conv["call_id"])
	}
	call := e.Do("GET", "/api/v1/calls/"+conv["call_id"].(string), e.tok, nil)
	testkit.Expect(t, call, 200)
	c := call.Data()
	want := map[string]any{"name": "Billing", "phone_number": "+14155550101", "transfer_type": "warm"}
	if got, _ := c["metadata"].(map[string]any)["transferred_to"].(map[string]any); c["status"] != "ended" ||
		c["disconnection_reason"] != "transferred" || c["direction"] != "web" || !reflect.DeepEqual(got, want) {
		t.Errorf("the call: status %v reason %v direction %v transferred_to %v, want %v", c["status"], c["disconnection_reason"], c["direction"], got, want)
	}
	var tools int
	for _, it := range c["transcript"].([]any) {
		if it.(map[string]any)["role"] == "tool" {
			tools++
		}
	}
	if tools != 1 {
		t.Errorf("the call's transcript holds %d tool items, want the transfer's: %v", tools, c["transcript"])
	}
	testkit.Expect(t, e.Do("POST", "/api/v1/conversations/"+id+"/messages", e.tok, map[string]any{"content": "Hello?"}), 409)
	if end := e.Do("POST", "/api/v1/conversations/"+id+"/end", e.tok, nil); end.Status != 200 || end.Data()["id"] != c["id"] {
		t.Errorf("ending the transferred conversation: %d %.200s, want its call", end.Status, end.Body)
	}
}
