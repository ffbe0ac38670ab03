package server_test

import (
	"encoding/json"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/bolt"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/llmtest"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/llm"
)

// shopAgent is an agent with a knowledge base about prices, an extract tool and an
// end_call tool, whose prompt and welcome use {{shop}}.
func shopAgent(t *testing.T, e *convEnv) string {
	t.Helper()
	kb := e.Do("POST", "/api/v1/knowledge-bases", e.tok, map[string]any{"name": "Prices",
		"texts": []map[string]string{{"title": "Plans", "content": "The pro plan costs 20 euros a month. The basic plan is free."}}})
	testkit.Expect(t, kb, 201)
	return e.createAgent(t, map[string]any{
		"name": "Shop",
		"llm_config": e.llmConfig(map[string]any{"knowledge_base_ids": []string{kb.Data()["id"].(string)}, "tools": []map[string]any{
			{"name": "note_plan", "type": "extract_dynamic_variable", "variables": []map[string]any{
				{"type": "enum", "name": "plan", "description": "The plan asked about", "choices": []string{"basic", "pro"}}}},
			{"name": "hang_up", "type": "end_call"},
		}}),
		"prompt_config": map[string]any{"prompt": "You answer for {{shop}}.", "welcome_message": "Hi, {{shop}} here!"},
	})
}

// shopModel notes the plan, then answers from the knowledge in its prompt; "bye" ends.
func shopModel(r llmtest.Request) llmtest.Reply {
	switch u := r.LastUserText(); {
	case strings.Contains(u, "bye"):
		return llmtest.Reply{Text: "Goodbye!", ToolCalls: []llm.ToolCall{{ID: "call_end1", Name: "hang_up", Arguments: "{}"}}}
	case strings.Contains(u, "pro") && len(r.ToolResults()) == 0:
		return llmtest.Calls(llm.ToolCall{ID: "call_x1", Name: "note_plan", Arguments: `{"plan":"pro"}`})
	case strings.Contains(r.System, "20 euros"):
		return llmtest.Text("The pro plan costs 20 euros a month.")
	}
	return llmtest.Text("How can I help?")
}

func TestConversationWholeFlow(t *testing.T) {
	e := newConvEnv(t, nil)
	e.stand.Respond(shopModel)
	agent := shopAgent(t, e)

	id := startShopConversation(t, e, agent)
	checkStreamedShopTurn(t, e, id)
	checkStoredShopTurn(t, e, id)
	callID := endShopConversation(t, e, id, agent)
	checkEndedCallEverywhere(t, e, callID)
	// An ended conversation takes no message.
	testkit.Expect(t, e.Do("POST", "/api/v1/conversations/"+id+"/messages", e.tok, map[string]any{"content": "hello?"}), 409)
}

// startShopConversation starts a conversation with the draft of agent for the shop Acme,
// checks it opens with the static welcome substituted, and returns its id.
func startShopConversation(t *testing.T, e *convEnv, agent string) string {
	t.Helper()
	r := e.start(t, agent, map[string]any{"version": "draft", "variables": map[string]any{"shop": "Acme"}}, 201)
	conv := r.Data()
	id := conv["id"].(string)
	if !strings.HasPrefix(id, "conv_") || conv["status"] != "active" || conv["agent_version"] != nil || conv["agent_id"] != agent {
		t.Fatalf("conversation = %s", r.Body)
	}
	msgs := conv["messages"].([]any)
	if len(msgs) != 1 || msgs[0].(map[string]any)["content"] != "Hi, Acme here!" || msgs[0].(map[string]any)["role"] != "agent" {
		t.Fatalf("opening = %v, want the static welcome substituted", msgs)
	}
	if r.Header.Get("ETag") == "" {
		t.Error("no ETag on the conversation")
	}
	return id
}

// checkStreamedShopTurn sends a streamed turn and checks its frames: a tool call, a
// retrieved chunk, the reply token by token.
func checkStreamedShopTurn(t *testing.T, e *convEnv, id string) {
	t.Helper()
	resp, frames, raw := stream(t, e.URL, "/api/v1/conversations/"+id+"/messages", e.tok, map[string]any{"content": "How much is the pro plan?"})
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("stream status %d %s: %s", resp.StatusCode, resp.Header.Get("Content-Type"), raw)
	}
	var kinds []string
	var deltas string
	for _, f := range frames {
		kinds = append(kinds, f.Event)
		if f.Event == "delta" {
			deltas += f.Data["text"].(string)
		}
	}
	if got := strings.Join(kinds, ","); got != "item,item,item,delta,delta,delta,delta,delta,delta,delta,delta,item,done" {
		t.Errorf("frames = %s\n%s", got, raw)
	}
	if deltas != "The pro plan costs 20 euros a month." {
		t.Errorf("streamed text = %q", deltas)
	}
	done := frames[len(frames)-1].Data["data"].(map[string]any)
	items := done["items"].([]any)
	if len(items) != 4 || done["status"] != "active" {
		t.Fatalf("turn = %v", done)
	}
	first := items[1].(map[string]any)
	knowledge, _ := first["knowledge"].([]any)
	if len(knowledge) == 0 || !strings.Contains(knowledge[0].(map[string]any)["text"].(string), "20 euros") {
		t.Errorf("the first agent item's knowledge = %v", first["knowledge"])
	}
	tool := items[2].(map[string]any)["tool_call"].(map[string]any)
	if tool["name"] != "note_plan" || tool["result"].(map[string]any)["set"].(map[string]any)["plan"] != "pro" {
		t.Errorf("tool item = %v", tool)
	}
	if lat, _ := items[3].(map[string]any)["latency_ms"].(map[string]any); lat == nil {
		t.Errorf("the reply has no latency: %v", items[3])
	}
}

// checkStoredShopTurn checks the stored conversation holds the turn and keeps the
// extracted variable.
func checkStoredShopTurn(t *testing.T, e *convEnv, id string) {
	t.Helper()
	got := e.Do("GET", "/api/v1/conversations/"+id, e.tok, nil)
	testkit.Expect(t, got, 200)
	if n := len(got.Data()["messages"].([]any)); n != 5 {
		t.Errorf("stored messages = %d, want 5", n)
	}
	if v := got.Data()["variables"].(map[string]any); v["plan"] != "pro" || v["shop"] != "Acme" {
		t.Errorf("variables = %v", v)
	}
	if u := got.Data()["usage"].(map[string]any); u["input_tokens"].(float64) <= 0 || u["output_tokens"].(float64) <= 0 {
		t.Errorf("usage = %v", u)
	}
}

// endShopConversation ends the conversation, twice, checks the web call it becomes, and
// returns that call's id.
func endShopConversation(t *testing.T, e *convEnv, id, agent string) string {
	t.Helper()
	end := e.Do("POST", "/api/v1/conversations/"+id+"/end", e.tok, nil)
	testkit.Expect(t, end, 200)
	call := end.Data()
	callID := call["id"].(string)
	if call["direction"] != "web" || call["status"] != "ended" || call["disconnection_reason"] != "user_ended" || call["agent_id"] != agent {
		t.Fatalf("call = %s", end.Body)
	}
	if v := call["variables"].(map[string]any); v["plan"] != "pro" {
		t.Errorf("call variables = %v", v)
	}
	transcript, _ := json.Marshal(call["transcript"])
	for _, want := range []string{`"role":"tool"`, `note_plan({\"plan\":\"pro\"})`, "Hi, Acme here!", "20 euros"} {
		if !strings.Contains(string(transcript), want) {
			t.Errorf("transcript lacks %s: %s", want, transcript)
		}
	}
	if call["metadata"].(map[string]any)["conversation_id"] != id {
		t.Errorf("metadata = %v", call["metadata"])
	}
	again := e.Do("POST", "/api/v1/conversations/"+id+"/end", e.tok, nil)
	if testkit.Expect(t, again, 200); again.Data()["id"] != callID {
		t.Errorf("ending twice gave another call: %s", again.Body)
	}
	return callID
}

// checkEndedCallEverywhere checks the ended conversation's call is in history, search,
// export, analytics and the audit log.
func checkEndedCallEverywhere(t *testing.T, e *convEnv, callID string) {
	t.Helper()
	if l := e.Do("GET", "/api/v1/calls?direction=web", e.tok, nil).List(); len(l) != 1 || l[0].(map[string]any)["id"] != callID {
		t.Errorf("calls = %v", l)
	}
	if l := e.Do("GET", "/api/v1/calls?q="+url.QueryEscape("euros"), e.tok, nil).List(); len(l) != 1 {
		t.Errorf("search for a word of the reply found %d calls", len(l))
	}
	if x := e.Do("GET", "/api/v1/calls/export?format=ndjson", e.tok, nil); !strings.Contains(string(x.Body), callID) {
		t.Errorf("export lacks the call: %d %.200s", x.Status, x.Body)
	}
	if a := e.Do("GET", "/api/v1/analytics/calls", e.tok, nil).Data(); a["disconnection_reasons"].(map[string]any)["user_ended"] != float64(1) {
		t.Errorf("analytics = %v", a)
	}
	ev := e.Do("GET", "/api/v1/audit-log?type=call.ended", e.tok, nil)
	if l := ev.List(); len(l) != 1 {
		t.Errorf("call.ended events = %d: %s", len(l), ev.Body)
	}
}

func TestConversationEndCallEndsItAndTheCallSaysWhy(t *testing.T) {
	e := newConvEnv(t, nil)
	e.stand.Respond(shopModel)
	agent := shopAgent(t, e)
	id := e.start(t, agent, map[string]any{"version": "draft", "variables": map[string]any{"shop": "Acme"}}, 201).Data()["id"].(string)
	r := e.Do("POST", "/api/v1/conversations/"+id+"/messages", e.tok, map[string]any{"content": "ok bye"})
	testkit.Expect(t, r, 200)
	turn := r.Data()
	if turn["status"] != "ended" || turn["disconnection_reason"] != "agent_ended" || turn["call_id"] == nil {
		t.Fatalf("turn = %s", r.Body)
	}
	call := e.Do("GET", "/api/v1/calls/"+turn["call_id"].(string), e.tok, nil)
	testkit.Expect(t, call, 200)
	if call.Data()["disconnection_reason"] != "agent_ended" {
		t.Errorf("call = %s", call.Body)
	}
}

func TestConversationStartRules(t *testing.T) {
	e := newConvEnv(t, nil)
	e.stand.Respond(shopModel)
	agent := shopAgent(t, e)
	// live on an agent never published: 409 not_published, the code /calls/start gives.
	if r := e.start(t, agent, map[string]any{"variables": map[string]any{"shop": "A"}}, 409); !strings.Contains(r.JSON()["message"].(string), "published") || r.JSON()["code"] != data.ENOTPUBLISHED {
		t.Errorf("409 code and message: %s", r.Body)
	}
	// A version the agent does not have is a fault of the body's version (conventions §2).
	testkit.ExpectFields(t, e.start(t, agent, map[string]any{"version": 1, "variables": map[string]any{"shop": "A"}}, 422), "version")
	// A variable the configuration uses and nobody gives: 422 missing_variables.
	r := e.start(t, agent, map[string]any{"version": "draft"}, 422)
	if r.Code() != "missing_variables" || r.FieldErrors()["variables.shop"] == nil {
		t.Errorf("missing variables: %s", r.Body)
	}
	r = e.start(t, agent, map[string]any{"version": "next", "variables": map[string]any{"shop": []int{1}, "1bad": "x"}}, 422)
	testkit.ExpectFields(t, r, "version", "variables.shop", "variables.1bad")
	testkit.Expect(t, e.Do("POST", "/api/v1/agents/agt_01JD6ZZZZZZZZZZZZZZZZZZZZZ/conversations", e.tok, map[string]any{}), 404)
	// Published: live runs the published version.
	testkit.Expect(t, e.Do("POST", "/api/v1/agents/"+agent+"/publish", e.tok, nil), 204)
	live := e.start(t, agent, map[string]any{"variables": map[string]any{"shop": "A"}}, 201).Data()
	if live["agent_version"] != float64(1) {
		t.Errorf("live conversation's version = %v", live["agent_version"])
	}
	e.start(t, agent, map[string]any{"version": 1, "variables": map[string]any{"shop": "A"}}, 201)
	if n := len(e.stand.Requests()); n != 0 {
		t.Errorf("a static welcome asked the model %d times", n)
	}
}

func TestConversationAccess(t *testing.T) {
	e := newConvEnv(t, nil)
	e.stand.Respond(shopModel)
	agent := shopAgent(t, e)
	other := e.createAgent(t, map[string]any{"name": "Other"})
	testkit.Expect(t, e.Do("POST", "/api/v1/agents/"+agent+"/publish", e.tok, nil), 204)
	ws := e.Owner.WorkspaceID
	member := e.Member("member@example.com", ws, data.RoleMember, nil, nil)
	limited := e.Member("limited@example.com", ws, data.RoleDeveloper, nil, []string{other})
	noAgents := e.Member("noagents@example.com", ws, data.RoleDeveloper, []string{data.ModuleCallHistory}, nil)
	vars := map[string]any{"shop": "A"}
	// A member talks to the live version, not to the draft.
	r := e.Do("POST", "/api/v1/agents/"+agent+"/conversations", member.Token, map[string]any{"variables": vars})
	testkit.Expect(t, r, 201)
	liveID := r.Data()["id"].(string)
	testkit.Expect(t, e.Do("POST", "/api/v1/agents/"+agent+"/conversations", member.Token, map[string]any{"version": "draft", "variables": vars}), 403)
	// agent_ids: another agent is not found, and so are its conversations.
	testkit.Expect(t, e.Do("POST", "/api/v1/agents/"+agent+"/conversations", limited.Token, map[string]any{"variables": vars}), 404)
	testkit.Expect(t, e.Do("GET", "/api/v1/conversations/"+liveID, limited.Token, nil), 404)
	testkit.Expect(t, e.Do("POST", "/api/v1/conversations/"+liveID+"/messages", limited.Token, map[string]any{"content": "hi"}), 404)
	testkit.Expect(t, e.Do("POST", "/api/v1/conversations/"+liveID+"/end", limited.Token, nil), 404)
	// Without the agents module: 403.
	testkit.Expect(t, e.Do("POST", "/api/v1/agents/"+agent+"/conversations", noAgents.Token, map[string]any{"variables": vars}), 403)
	// Another's draft conversation: a member neither talks to it nor ends it (ending makes
	// its call), and it stays active for whoever may.
	draftID := e.start(t, agent, map[string]any{"version": "draft", "variables": vars}, 201).Data()["id"].(string)
	testkit.Expect(t, e.Do("POST", "/api/v1/conversations/"+draftID+"/messages", member.Token, map[string]any{"content": "hi"}), 403)
	testkit.Expect(t, e.Do("POST", "/api/v1/conversations/"+draftID+"/end", member.Token, nil), 403)
	if got := e.Do("GET", "/api/v1/conversations/"+draftID, e.tok, nil).Data()["status"]; got != "active" {
		t.Errorf("a refused end left the draft conversation %v", got)
	}
	testkit.Expect(t, e.Do("POST", "/api/v1/conversations/"+draftID+"/end", e.tok, nil), 200)
	// Another workspace: 404.
	stranger := e.NewUser("stranger@example.com", false)
	testkit.Expect(t, e.Do("GET", "/api/v1/conversations/"+liveID, stranger.Token, nil), 404)
	// Key scopes: conversations:write, not calls:runtime nor agents:write alone.
	for scopes, want := range map[string]int{"conversations:write": 201, "calls:runtime": 403, "agents:write": 403} {
		k := e.Do("POST", "/api/v1/api-keys", e.tok, map[string]any{"name": scopes, "scopes": []string{scopes}})
		testkit.Expect(t, k, 201)
		r := e.Do("POST", "/api/v1/agents/"+agent+"/conversations", k.JSON()["token"].(string), map[string]any{"variables": vars})
		if r.Status != want {
			t.Errorf("key with %s: %d, want %d: %s", scopes, r.Status, want, r.Body)
		}
	}
	// A draft needs agents:write as well as conversations:write.
	k := e.Do("POST", "/api/v1/api-keys", e.tok, map[string]any{"name": "c", "scopes": []string{"conversations:write"}})
	testkit.Expect(t, e.Do("POST", "/api/v1/agents/"+agent+"/conversations", k.JSON()["token"].(string), map[string]any{"version": "draft", "variables": vars}), 403)
	k = e.Do("POST", "/api/v1/api-keys", e.tok, map[string]any{"name": "cw", "scopes": []string{"conversations:write", "agents:write"}})
	testkit.Expect(t, e.Do("POST", "/api/v1/agents/"+agent+"/conversations", k.JSON()["token"].(string), map[string]any{"version": "draft", "variables": vars}), 201)
}

func TestConversationMessageBounds(t *testing.T) {
	e := newConvEnv(t, nil)
	e.stand.Respond(shopModel)
	agent := shopAgent(t, e)
	id := e.start(t, agent, map[string]any{"version": "draft", "variables": map[string]any{"shop": "A"}}, 201).Data()["id"].(string)
	path := "/api/v1/conversations/" + id + "/messages"
	for name, c := range map[string]struct {
		body   any
		status int
		field  string
	}{
		"100 KB":      {map[string]any{"content": strings.Repeat("a", 100_000)}, 422, "content"},
		"just past":   {map[string]any{"content": strings.Repeat("é", 10_001)}, 422, "content"},
		"blank":       {map[string]any{"content": "  "}, 422, "content"},
		"absent":      {map[string]any{}, 422, "content"},
		"unknown":     {map[string]any{"content": "hi", "role": "agent"}, 422, "role"},
		"not JSON":    {"{", 400, ""},
		"at the edge": {map[string]any{"content": strings.Repeat("é", 10_000)}, 200, ""},
		// No text of a request may hold U+0000, on either engine (a model's reply that
		// holds one is stored as U+FFFD on PostgreSQL: postgres.jsonbSafe).
		"a NUL": {map[string]any{"content": "a\x00b"}, 422, "content"},
	} {
		r := e.Do("POST", path, e.tok, c.body)
		if r.Status != c.status {
			t.Errorf("%s: %d, want %d: %.200s", name, r.Status, c.status, r.Body)
			continue
		}
		if c.field != "" {
			testkit.ExpectFields(t, r, c.field)
		}
	}
	if n := len(e.Do("GET", "/api/v1/conversations/"+id, e.tok, nil).Data()["messages"].([]any)); n != 3 {
		t.Errorf("stored messages = %d: refused messages must store nothing (want the opening and one turn)", n)
	}
	testkit.Expect(t, e.Do("POST", "/api/v1/conversations/"+id+"/end", e.tok, nil), 200)
}

func TestConversationTwoMessagesAtOnceDoNotInterleave(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	free := sync.OnceFunc(func() { close(release) })
	defer free() // a failure must not leave the first answer waiting
	var calls atomic.Int32
	e := newConvEnv(t, nil)
	e.stand.Respond(func(llmtest.Request) llmtest.Reply {
		if calls.Add(1) == 1 { // the first answer waits; any other goes through at once
			close(entered)
			<-release
		}
		return llmtest.Text("Done.")
	})
	agent := e.createAgent(t, map[string]any{"name": "A"})
	id := e.start(t, agent, map[string]any{"version": "draft"}, 201).Data()["id"].(string)
	path := "/api/v1/conversations/" + id + "/messages"
	first := make(chan *testkit.Response)
	go func() { first <- testkit.Request(t, e.URL, "POST", path, e.tok, map[string]any{"content": "one"}) }()
	<-entered
	second := e.Do("POST", path, e.tok, map[string]any{"content": "two"})
	testkit.Expect(t, second, 409)
	testkit.Expect(t, e.Do("POST", "/api/v1/conversations/"+id+"/end", e.tok, nil), 409)
	free()
	testkit.Expect(t, <-first, 200)
	testkit.Expect(t, e.Do("POST", path, e.tok, map[string]any{"content": "three"}), 200)
	var contents []string
	for _, it := range e.Do("GET", "/api/v1/conversations/"+id, e.tok, nil).Data()["messages"].([]any) {
		contents = append(contents, it.(map[string]any)["content"].(string))
	}
	if got := strings.Join(contents, "|"); got != data.DefaultWelcomeMessage+"|one|Done.|three|Done." {
		t.Errorf("messages = %s", got)
	}
}

func TestConversationMaxTurns(t *testing.T) {
	e := newConvEnv(t, nil)
	e.stand.Respond(func(llmtest.Request) llmtest.Reply { return llmtest.Text("ok") })
	agent := e.createAgent(t, map[string]any{"name": "A"})
	id := e.start(t, agent, map[string]any{"version": "draft"}, 201).Data()["id"].(string)
	path := "/api/v1/conversations/" + id + "/messages"
	for i := 1; i <= data.ConversationMaxAgentTurns; i++ {
		r := e.Do("POST", path, e.tok, map[string]any{"content": "again"})
		testkit.Expect(t, r, 200)
		if status := r.Data()["status"]; (status == "ended") != (i == data.ConversationMaxAgentTurns) {
			t.Fatalf("turn %d: status %v", i, status)
		}
	}
	testkit.Expect(t, e.Do("POST", path, e.tok, map[string]any{"content": "again"}), 409)
	c := e.Do("GET", "/api/v1/conversations/"+id, e.tok, nil).Data()
	if c["disconnection_reason"] != "max_turns" {
		t.Errorf("reason = %v", c["disconnection_reason"])
	}
	call := e.Do("GET", "/api/v1/calls/"+c["call_id"].(string), e.tok, nil)
	if testkit.Expect(t, call, 200); call.Data()["disconnection_reason"] != "max_turns" {
		t.Errorf("call = %.300s", call.Body)
	}
}

func TestConversationIdleExpiry(t *testing.T) {
	var mu sync.Mutex
	now := time.Now().UTC()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	e := newConvEnv(t, func(o *bolt.Options) { o.Now = clock })
	e.stand.Respond(func(llmtest.Request) llmtest.Reply { return llmtest.Text("ok") })
	agent := e.createAgent(t, map[string]any{"name": "A"})
	a := e.start(t, agent, map[string]any{"version": "draft"}, 201).Data()["id"].(string)
	b := e.start(t, agent, map[string]any{"version": "draft"}, 201).Data()["id"].(string)
	c := e.start(t, agent, map[string]any{"version": "draft"}, 201).Data()["id"].(string)
	advance(29 * time.Minute)
	testkit.Expect(t, e.Do("POST", "/api/v1/conversations/"+c+"/messages", e.tok, map[string]any{"content": "still here"}), 200)
	advance(2 * time.Minute)
	// A message to an idle conversation ends it (expired) and is refused.
	r := e.Do("POST", "/api/v1/conversations/"+a+"/messages", e.tok, map[string]any{"content": "hello?"})
	testkit.Expect(t, r, 409)
	if !strings.Contains(r.JSON()["message"].(string), "expired") {
		t.Errorf("409 message: %s", r.Body)
	}
	// The sweep ends the others that are idle: b, not c (written to 2 minutes ago).
	n, err := e.Svc.Conversations.ExpireIdle(t.Context(), 10)
	if err != nil || n != 1 {
		t.Fatalf("ExpireIdle = %d, %v; want 1", n, err)
	}
	for id, want := range map[string]string{a: "expired", b: "expired", c: ""} {
		got := e.Do("GET", "/api/v1/conversations/"+id, e.tok, nil).Data()
		reason, _ := got["disconnection_reason"].(string)
		if reason != want {
			t.Errorf("%s: reason %q, want %q", id, reason, want)
		}
		if want != "" {
			call := e.Do("GET", "/api/v1/calls/"+got["call_id"].(string), e.tok, nil)
			testkit.Expect(t, call, 200)
		}
	}
}
