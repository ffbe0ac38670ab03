package conversation

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/llm"
)

// scripted is a test double of llm.Client: it answers with its replies in order (text
// streamed word by word) and keeps every request.
type scripted struct {
	replies []*llm.Reply
	err     error
	reqs    []llm.Request
}

func (s *scripted) Provider() string { return "internal" }

func (s *scripted) Complete(_ context.Context, req llm.Request, onText func(string) error) (*llm.Reply, error) {
	s.reqs = append(s.reqs, req)
	if s.err != nil {
		return nil, s.err
	}
	if len(s.replies) == 0 {
		return &llm.Reply{Text: "(no more replies)", StopReason: "stop"}, nil
	}
	r := s.replies[0]
	s.replies = s.replies[1:]
	if onText != nil {
		for _, w := range strings.SplitAfter(r.Text, " ") {
			if w == "" {
				continue
			}
			if err := onText(w); err != nil {
				return nil, err
			}
		}
	}
	return r, nil
}

func text(s string) *llm.Reply {
	return &llm.Reply{Text: s, StopReason: "stop", Usage: llm.Usage{InputTokens: 10, OutputTokens: 2}, FirstToken: 5 * time.Millisecond, Total: 20 * time.Millisecond}
}

func calls(s string, tcs ...llm.ToolCall) *llm.Reply {
	r := text(s)
	r.ToolCalls, r.StopReason = tcs, "tool_calls"
	return r
}

func call(id, name, args string) llm.ToolCall {
	return llm.ToolCall{ID: id, Name: name, Arguments: args}
}

var clock = time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)

func engineWith(model llm.Client, tools ...*data.Tool) *Engine {
	cfg := data.DefaultAgentConfig()
	cfg.PromptConfig.Prompt = "You are the agent of {{shop}}."
	cfg.LLMConfig.Tools = tools
	return &Engine{Config: cfg, Model: model, Facts: CallFacts{CallID: "conv_1"}, Now: func() time.Time { return clock }}
}

func reply(t *testing.T, e *Engine, st State, msg string) *Outcome {
	t.Helper()
	out, err := e.Reply(context.Background(), st, msg, data.ConversationObserver{})
	if err != nil {
		t.Fatalf("Reply: %v", err)
	}
	return out
}

func roles(items []data.ConversationItem) string {
	var r []string
	for _, it := range items {
		r = append(r, it.Role)
	}
	return strings.Join(r, ",")
}

func TestOpenStaticWelcome(t *testing.T) {
	m := &scripted{}
	e := engineWith(m)
	e.Config.PromptConfig.WelcomeMessage = "Welcome to {{shop}}!"
	var streamed string
	out, err := e.Open(context.Background(), State{Variables: map[string]any{"shop": "Acme"}}, data.ConversationObserver{Text: func(d string) error { streamed += d; return nil }})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Items) != 1 || out.Items[0].Role != "agent" || out.Items[0].Content != "Welcome to Acme!" {
		t.Fatalf("opening = %+v, want the static message verbatim, substituted", out.Items)
	}
	if len(m.reqs) != 0 {
		t.Errorf("a static welcome asked the model %d times", len(m.reqs))
	}
	if streamed != "Welcome to Acme!" {
		t.Errorf("streamed %q", streamed)
	}
}

func TestOpenDynamicWelcome(t *testing.T) {
	m := &scripted{replies: []*llm.Reply{text("Hi, Acme here, how can I help?")}}
	e := engineWith(m, &data.Tool{Name: "bye", Type: data.ToolEndCall})
	e.Config.PromptConfig.WelcomeMessageType = "dynamic"
	out, err := e.Open(context.Background(), State{Variables: map[string]any{"shop": "Acme"}}, data.ConversationObserver{})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Items) != 1 || out.Items[0].Content != "Hi, Acme here, how can I help?" || out.Items[0].Usage == nil {
		t.Fatalf("opening = %+v", out.Items)
	}
	req := m.reqs[0]
	if !strings.HasPrefix(req.System, "You are the agent of Acme.") || !strings.Contains(req.System, dynamicOpening) {
		t.Errorf("system prompt = %q", req.System)
	}
	if len(req.Messages) != 0 || len(req.Tools) != 0 {
		t.Errorf("the opening request carries %d messages and %d tools, want none", len(req.Messages), len(req.Tools))
	}
	if out.Usage.InputTokens != 10 {
		t.Errorf("usage = %+v", out.Usage)
	}
}

func TestOpenUserFirst(t *testing.T) {
	e := engineWith(&scripted{})
	e.Config.PromptConfig.FirstSpeaker = "user"
	out, err := e.Open(context.Background(), State{}, data.ConversationObserver{})
	if err != nil || len(out.Items) != 0 {
		t.Fatalf("opening with the user first = %+v, %v; want nothing", out, err)
	}
}

func TestReplyPlainAndStreaming(t *testing.T) {
	m := &scripted{replies: []*llm.Reply{text("We open at nine.")}}
	e := engineWith(m)
	var deltas []string
	var items []string
	out, err := e.Reply(context.Background(), State{Variables: map[string]any{"shop": "Acme"}}, "When do you open?", data.ConversationObserver{
		Text: func(d string) error { deltas = append(deltas, d); return nil },
		Item: func(it *data.ConversationItem) error { items = append(items, it.Role+":"+it.Content); return nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	if roles(out.Items) != "user,agent" || out.End != "" {
		t.Fatalf("items %s, end %q", roles(out.Items), out.End)
	}
	if !reflect.DeepEqual(deltas, []string{"We ", "open ", "at ", "nine."}) {
		t.Errorf("deltas = %q", deltas)
	}
	if !reflect.DeepEqual(items, []string{"user:When do you open?", "agent:We open at nine."}) {
		t.Errorf("observed items = %q", items)
	}
	a := out.Items[1]
	if a.LatencyMS == nil || a.LatencyMS.FirstToken != 5 || a.LatencyMS.Total != 20 || a.Usage == nil || a.Usage.OutputTokens != 2 {
		t.Errorf("agent item latency %+v usage %+v", a.LatencyMS, a.Usage)
	}
	if a.Knowledge != nil {
		t.Errorf("knowledge without a retriever = %v, want null", a.Knowledge)
	}
	req := m.reqs[0]
	if req.System != "You are the agent of Acme." || len(req.Messages) != 1 || req.Messages[0].Role != llm.RoleUser {
		t.Errorf("request = %+v", req)
	}
	if req.Temperature == nil || *req.Temperature != data.DefaultTemperature {
		t.Errorf("temperature = %v", req.Temperature)
	}
}

func TestReplyProviderErrorStoresNothing(t *testing.T) {
	perr := &llm.Error{Provider: "groq", Status: 429, Message: "rate limited"}
	e := engineWith(&scripted{err: perr})
	out, err := e.Reply(context.Background(), State{}, "hi", data.ConversationObserver{})
	if !errors.Is(err, perr) || out != nil {
		t.Fatalf("Reply = %v, %v; want the provider's error", out, err)
	}
	if data.ErrorCode(err) != data.EPROVIDER {
		t.Errorf("code = %s", data.ErrorCode(err))
	}
}

type fixedRetriever struct {
	queries []string
	chunks  []data.KnowledgeRef
}

func (r *fixedRetriever) Retrieve(_ context.Context, q string) ([]data.KnowledgeRef, error) {
	r.queries = append(r.queries, q)
	return r.chunks, nil
}

func TestReplyRetrieval(t *testing.T) {
	m := &scripted{replies: []*llm.Reply{calls("", call("c1", "note", `{"plan":"pro"}`)), text("The pro plan costs 20 euros.")}}
	e := engineWith(m, &data.Tool{Name: "note", Type: data.ToolExtractDynamicVariable, Variables: []data.ToolVariable{{Type: "string", Name: "plan", Description: "plan"}}})
	r := &fixedRetriever{chunks: []data.KnowledgeRef{{KnowledgeBaseID: "kb_1", SourceID: "src_1", Text: "Pro costs 20 euros a month.", Score: 0.8}}}
	e.Retriever = r
	out := reply(t, e, State{Variables: map[string]any{"shop": "Acme"}}, "How much is pro?")
	if !reflect.DeepEqual(r.queries, []string{"How much is pro?"}) {
		t.Errorf("retrieval queries = %q", r.queries)
	}
	for i, req := range m.reqs {
		if !strings.Contains(req.System, "[1] Pro costs 20 euros a month.") {
			t.Errorf("model call %d's system prompt lacks the chunk: %q", i, req.System)
		}
	}
	if got := out.Items[1].Knowledge; len(got) != 1 || got[0].SourceID != "src_1" {
		t.Errorf("first agent item's knowledge = %+v", got)
	}
	if last := out.Items[len(out.Items)-1]; last.Knowledge != nil {
		t.Errorf("a later agent item repeats the knowledge: %+v", last.Knowledge)
	}
}

func TestReplyRetrievalFoundNothing(t *testing.T) {
	e := engineWith(&scripted{replies: []*llm.Reply{text("I do not know.")}})
	e.Retriever = &fixedRetriever{}
	out := reply(t, e, State{}, "?")
	if k := out.Items[1].Knowledge; k == nil || len(k) != 0 {
		t.Errorf("knowledge when retrieval found nothing = %#v, want []", k)
	}
}

func TestEndCallEndsAfterTheAgentsMessage(t *testing.T) {
	m := &scripted{replies: []*llm.Reply{calls("Goodbye!", call("c1", "hang_up", `{}`))}}
	e := engineWith(m, &data.Tool{Name: "hang_up", Type: data.ToolEndCall})
	out := reply(t, e, State{}, "bye")
	if out.End != data.EndAgentEnded || roles(out.Items) != "user,agent,tool" || len(m.reqs) != 1 {
		t.Fatalf("end %q, items %s, model calls %d", out.End, roles(out.Items), len(m.reqs))
	}
	if out.Items[1].Content != "Goodbye!" {
		t.Errorf("the agent's last message = %q", out.Items[1].Content)
	}
	tc := out.Items[2].ToolCall
	if tc.Name != "hang_up" || tc.ID != "c1" || tc.Error || !reflect.DeepEqual(tc.Result, map[string]any{"ended": true}) {
		t.Errorf("tool call = %+v", tc)
	}
}

func TestTransferCallRecordsItsTarget(t *testing.T) {
	tool := &data.Tool{Name: "transfer", Type: data.ToolTransferCall, PhoneDirectory: []data.PhoneDirectoryEntry{
		{Name: "Sales", PhoneNumber: "+15550100", Description: "buying", TransferType: "cold"},
		{Name: "Billing", PhoneNumber: "+15550101", Description: "invoices", TransferType: "warm"},
	}}
	m := &scripted{replies: []*llm.Reply{calls("Putting you through.", call("c1", "transfer", `{"destination":"Billing"}`))}}
	out := reply(t, engineWith(m, tool), State{}, "my invoice is wrong")
	if out.End != data.EndTransferred || out.Transfer == nil || out.Transfer.PhoneNumber != "+15550101" {
		t.Fatalf("end %q transfer %+v", out.End, out.Transfer)
	}
	want := map[string]any{"transferred_to": map[string]any{"name": "Billing", "phone_number": "+15550101", "transfer_type": "warm"}}
	if got := out.Items[2].ToolCall.Result; !reflect.DeepEqual(got, want) {
		t.Errorf("result = %v", got)
	}
	// The schema offers the directory's names as an enum; a name outside it goes back.
	m = &scripted{replies: []*llm.Reply{calls("", call("c1", "transfer", `{"destination":"Support"}`)), text("Whom should I transfer you to?")}}
	out = reply(t, engineWith(m, tool), State{}, "transfer me")
	if out.End != "" || !out.Items[2].ToolCall.Error || len(m.reqs) != 2 {
		t.Errorf("an unknown destination: end %q, tool %+v, model calls %d", out.End, out.Items[2].ToolCall, len(m.reqs))
	}
}

func TestPressIVRAndSendSMSAreRecorded(t *testing.T) {
	ivr := &data.Tool{Name: "press", Type: data.ToolPressIVR}
	static := &data.Tool{Name: "sms_static", Type: data.ToolSendSMS, ContentType: "static", Content: "Your booking is confirmed."}
	prompted := &data.Tool{Name: "sms_prompt", Type: data.ToolSendSMS, ContentType: "prompt", Content: "Summarize the booking."}
	m := &scripted{replies: []*llm.Reply{
		calls("", call("c1", "press", `{"digits":"1#"}`), call("c2", "sms_static", `{}`), call("c3", "sms_prompt", `{"message":"Booked for 9am."}`)),
		text("Done."),
	}}
	out := reply(t, engineWith(m, ivr, static, prompted), State{}, "book it")
	if roles(out.Items) != "user,agent,tool,tool,tool,agent" || out.End != "" {
		t.Fatalf("items %s end %q", roles(out.Items), out.End)
	}
	for i, want := range []map[string]any{
		{"recorded": true, "digits": "1#", "note": "a text conversation presses no keys"},
		{"recorded": true, "message": "Your booking is confirmed.", "note": "a text conversation sends no message"},
		{"recorded": true, "message": "Booked for 9am.", "note": "a text conversation sends no message"},
	} {
		if got := out.Items[2+i].ToolCall.Result; !reflect.DeepEqual(got, want) {
			t.Errorf("tool %d result = %v, want %v", i, got, want)
		}
	}
	// The second model call sees the assistant's tool calls and each result.
	msgs := m.reqs[1].Messages
	if len(msgs) != 5 || len(msgs[1].ToolCalls) != 3 || msgs[2].Role != llm.RoleTool || msgs[2].ToolCallID != "c1" || msgs[4].ToolName != "sms_prompt" {
		t.Errorf("second request's messages = %+v", msgs)
	}
	m = &scripted{replies: []*llm.Reply{calls("", call("c1", "press", `{"digits":"12ab"}`)), text("ok")}}
	out = reply(t, engineWith(m, ivr), State{}, "press")
	if !out.Items[2].ToolCall.Error {
		t.Errorf("keys outside 0-9*# were accepted: %+v", out.Items[2].ToolCall)
	}
}

func TestExtractDynamicVariableSetsCheckedVariables(t *testing.T) {
	tool := &data.Tool{Name: "extract", Type: data.ToolExtractDynamicVariable, Variables: []data.ToolVariable{
		{Type: "string", Name: "customer", Description: "name"},
		{Type: "number", Name: "guests", Description: "how many"},
		{Type: "boolean", Name: "vip", Description: "vip?"},
		{Type: "enum", Name: "plan", Description: "plan", Choices: []string{"basic", "pro"}},
	}}
	m := &scripted{replies: []*llm.Reply{
		calls("", call("c1", "extract", `{"customer":"Ada","guests":4,"vip":true,"plan":"pro"}`)),
		calls("", call("c2", "extract", `{"plan":"gold"}`)),
		calls("", call("c3", "extract", `{"guests":"four"}`)),
		text("Noted, Ada."),
	}}
	e := engineWith(m, tool)
	e.Config.PromptConfig.Prompt = "Customer: {{customer}}."
	out := reply(t, e, State{Variables: map[string]any{"customer": "unknown"}}, "I'm Ada, 4 of us, pro plan, vip")
	want := map[string]any{"customer": "Ada", "guests": json.Number("4"), "vip": true, "plan": "pro"}
	if !reflect.DeepEqual(out.Variables, want) {
		t.Errorf("variables set = %v, want %v", out.Variables, want)
	}
	if tc := out.Items[4].ToolCall; !tc.Error || !strings.Contains(tc.Result.(map[string]any)["error"].(string), "/plan") {
		t.Errorf("an enum value outside the choices: %+v", tc)
	}
	if tc := out.Items[6].ToolCall; !tc.Error || !strings.Contains(tc.Result.(map[string]any)["error"].(string), "/guests") {
		t.Errorf("a string for a number: %+v", tc)
	}
	if m.reqs[0].System != "Customer: unknown." || m.reqs[1].System != "Customer: Ada." {
		t.Errorf("the extracted variable is not used from the next call on: %q then %q", m.reqs[0].System, m.reqs[1].System)
	}
	schema := m.reqs[0].Tools[0].Parameters["properties"].(map[string]any)
	if !reflect.DeepEqual(schema["plan"], map[string]any{"type": "string", "enum": []any{"basic", "pro"}, "description": "plan"}) ||
		schema["guests"].(map[string]any)["type"] != "number" || schema["vip"].(map[string]any)["type"] != "boolean" {
		t.Errorf("extract schema = %v", schema)
	}
}

func TestUnknownToolAndBadArgumentsGoBackToTheModel(t *testing.T) {
	m := &scripted{replies: []*llm.Reply{
		calls("", call("c1", "launch_rocket", `{}`)),
		calls("", call("c2", "bye", `{not json`)),
		calls("", call("c3", "bye", `{"extra":1}`)),
		calls("", call("c4", "bye", `[1]`)),
		text("Sorry, how can I help?"),
	}}
	out := reply(t, engineWith(m, &data.Tool{Name: "bye", Type: data.ToolEndCall}), State{}, "hello")
	if out.End != "" || len(m.reqs) != 5 || out.Items[len(out.Items)-1].Content != "Sorry, how can I help?" {
		t.Fatalf("end %q, model calls %d, items %s", out.End, len(m.reqs), roles(out.Items))
	}
	for i, wantIn := range []string{`no tool named "launch_rocket"`, "not valid JSON", "additional properties", "must be a JSON object"} {
		tc := out.Items[2+2*i].ToolCall
		msg, _ := tc.Result.(map[string]any)["error"].(string)
		if !tc.Error || !strings.Contains(msg, wantIn) {
			t.Errorf("call %d: error %v %q, want it to mention %q", i, tc.Error, msg, wantIn)
		}
	}
	if got := out.Items[4].ToolCall.Arguments; got != `{not json` {
		t.Errorf("arguments that are not JSON are kept as text: %#v", got)
	}
	// The model reads each error as the tool's result, marked as an error.
	last := m.reqs[1].Messages[len(m.reqs[1].Messages)-1]
	if last.Role != llm.RoleTool || !last.ToolError || !strings.Contains(last.Content, "launch_rocket") {
		t.Errorf("the error as the model reads it: %+v", last)
	}
}

func TestTurnIsBounded(t *testing.T) {
	var replies []*llm.Reply
	for range MaxModelCallsPerTurn + 3 {
		replies = append(replies, calls("", call("c", "press", `{"digits":"1"}`)))
	}
	m := &scripted{replies: replies}
	out := reply(t, engineWith(m, &data.Tool{Name: "press", Type: data.ToolPressIVR}), State{}, "loop")
	if len(m.reqs) != MaxModelCallsPerTurn {
		t.Fatalf("model calls = %d, want the bound %d", len(m.reqs), MaxModelCallsPerTurn)
	}
	if got := m.reqs[MaxModelCallsPerTurn-1].ToolChoice.Mode; got != "none" {
		t.Errorf("the last call's tool choice = %q, want none", got)
	}
	if got := roles(out.Items); strings.Count(got, "tool") != MaxModelCallsPerTurn-1 || !strings.HasSuffix(got, "agent") {
		t.Errorf("items = %s: the last reply's tool calls must not run", got)
	}
}

func TestMessagesRebuildsHistory(t *testing.T) {
	items := []data.ConversationItem{
		{Role: "agent", Content: "Hello"},
		{Role: "user", Content: "Hi"},
		{Role: "agent", Content: ""},
		{Role: "tool", ToolCall: &data.ToolCallItem{ID: "a", Name: "x", Arguments: map[string]any{"k": "v"}, Result: map[string]any{"ok": true}}},
		{Role: "agent", Content: "Let me check."},
		{Role: "tool", ToolCall: &data.ToolCallItem{ID: "b", Name: "y", Arguments: "{bad", Result: map[string]any{"error": "e"}, Error: true}},
		{Role: "tool", ToolCall: &data.ToolCallItem{ID: "c", Name: "z", Arguments: map[string]any{}, Result: map[string]any{}}},
		{Role: "agent", Content: "Done"},
	}
	got := Messages(items)
	want := []llm.Message{
		{Role: llm.RoleAssistant, Content: "Hello"},
		{Role: llm.RoleUser, Content: "Hi"},
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "a", Name: "x", Arguments: `{"k":"v"}`}}},
		{Role: llm.RoleTool, Content: `{"ok":true}`, ToolCallID: "a", ToolName: "x"},
		{Role: llm.RoleAssistant, Content: "Let me check.", ToolCalls: []llm.ToolCall{{ID: "b", Name: "y", Arguments: "{bad"}, {ID: "c", Name: "z", Arguments: "{}"}}},
		{Role: llm.RoleTool, Content: `{"error":"e"}`, ToolCallID: "b", ToolName: "y", ToolError: true},
		{Role: llm.RoleTool, Content: `{}`, ToolCallID: "c", ToolName: "z"},
		{Role: llm.RoleAssistant, Content: "Done"},
	}
	if !reflect.DeepEqual(got, want) {
		gj, _ := json.MarshalIndent(got, "", " ")
		t.Errorf("Messages =\n%s", gj)
	}
}

func TestToolSchemas(t *testing.T) {
	params := `{"type":"object","properties":{"order_id":{"type":"string"}},"required":["order_id"]}`
	cases := []struct {
		tool *data.Tool
		want string
	}{
		{&data.Tool{Name: "e", Type: data.ToolEndCall}, `{"additionalProperties":false,"properties":{},"type":"object"}`},
		{&data.Tool{Name: "t", Type: data.ToolTransferCall, PhoneDirectory: []data.PhoneDirectoryEntry{{Name: "A"}, {Name: "B"}}},
			`{"additionalProperties":false,"properties":{"destination":{"description":"The name of the destination to transfer to.","enum":["A","B"],"type":"string"}},"required":["destination"],"type":"object"}`},
		{&data.Tool{Name: "p", Type: data.ToolPressIVR},
			`{"additionalProperties":false,"properties":{"digits":{"description":"The keys to press: digits, * and #.","pattern":"^[0-9*#]{1,20}$","type":"string"}},"required":["digits"],"type":"object"}`},
		{&data.Tool{Name: "s", Type: data.ToolSendSMS, ContentType: "static", Content: "x"}, `{"additionalProperties":false,"properties":{},"type":"object"}`},
		{&data.Tool{Name: "s", Type: data.ToolSendSMS, ContentType: "prompt", Content: "x"},
			`{"additionalProperties":false,"properties":{"message":{"description":"The text message to send.","minLength":1,"type":"string"}},"required":["message"],"type":"object"}`},
		{&data.Tool{Name: "x", Type: data.ToolExtractDynamicVariable, Variables: []data.ToolVariable{{Type: "enum", Name: "plan", Description: "d", Choices: []string{"a"}}}},
			`{"additionalProperties":false,"properties":{"plan":{"description":"d","enum":["a"],"type":"string"}},"type":"object"}`},
		{&data.Tool{Name: "f", Type: data.ToolCustomFunction, CustomFunctionParameters: &params}, params},
		{&data.Tool{Name: "f", Type: data.ToolCustomFunction, CustomFunctionParameters: str(`{"properties":{}}`)}, `{"properties":{},"type":"object"}`},
		{&data.Tool{Name: "f", Type: data.ToolCustomFunction}, `{"additionalProperties":false,"properties":{},"type":"object"}`},
		{&data.Tool{Name: "f", Type: data.ToolCustomFunction, CustomFunctionParameters: str(`not json`)}, `{"additionalProperties":false,"properties":{},"type":"object"}`},
	}
	for _, c := range cases {
		b, _ := json.Marshal(ToolSchema(c.tool))
		var got, want any
		json.Unmarshal(b, &got)
		json.Unmarshal([]byte(c.want), &want)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s schema = %s, want %s", c.tool.Type, b, c.want)
		}
	}
	cfg := data.DefaultAgentConfig()
	cfg.LLMConfig.Tools = []*data.Tool{nil, {Name: "t", Type: data.ToolTransferCall, Description: str("Hand over."),
		PhoneDirectory: []data.PhoneDirectoryEntry{{Name: "A", Description: "team a"}}}, {Name: "e", Type: data.ToolEndCall}}
	tools := Tools(&cfg)
	if len(tools) != 2 || tools[0].Description != "Hand over. Destinations:\n- A: team a" || tools[1].Description != defaultDescriptions[data.ToolEndCall] {
		t.Errorf("Tools = %+v", tools)
	}
}

func TestCheckArgumentsFollowsNoReference(t *testing.T) {
	schema := map[string]any{"$ref": "file:///etc/passwd"}
	if _, err := CheckArguments(schema, `{}`); err == nil || !strings.Contains(err.Error(), "cannot be used") {
		t.Errorf("a schema referring to a file: %v", err)
	}
}
