package server_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/cli"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/llmtest"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/llm"
	"github.com/voiceapi/voiceapi/service"
)

// Every provider fault of issue 25 is a 502 provider_error or a 504 provider_timeout
// naming the provider, never a 500, with no credential in the answer or the logs; the
// failed message stores nothing.
func TestConversationProviderFaults(t *testing.T) {
	const key = "sk-live-abcdefghijklmnop"
	e := newConvEnvWith(t, nil, []llmtest.Option{llmtest.WithAPIKey(key)}, func(s *cli.LLMSettings) { s.Timeout = 2 * time.Second }) // long enough for a loaded machine; only "no answer" waits it out
	agent := e.createAgent(t, map[string]any{"name": "A"})
	id := e.start(t, agent, map[string]any{"version": "draft"}, 201).Data()["id"].(string)
	path := "/api/v1/conversations/" + id + "/messages"
	cases := []struct {
		name   string
		reply  llmtest.Reply
		status int
		code   string
	}{
		{"401", llmtest.Fail(401, "Incorrect API key provided: "+key), 502, "provider_error"},
		{"429", llmtest.Fail(429, "Rate limit reached for requests"), 502, "provider_error"},
		{"500", llmtest.Fail(500, "The server had an error"), 502, "provider_error"},
		{"malformed JSON", llmtest.Malformed(), 502, "provider_error"},
		{"cut mid-body", llmtest.Cut(llmtest.Text("one two three four five six")), 502, "provider_error"},
		{"no answer", llmtest.Hang(), 504, "provider_timeout"},
	}
	for _, c := range cases {
		for _, streamed := range []bool{false, true} {
			if streamed && c.reply.Cut {
				continue // a stream cut after its first words: below
			}
			e.stand.Queue(c.reply)
			var status int
			var body string
			if streamed {
				resp, frames, raw := stream(t, e.URL, path, e.tok, map[string]any{"content": "hi"})
				status, body = resp.StatusCode, string(raw)
				if len(frames) != 0 {
					t.Errorf("%s (streamed): frames %v, want a plain error", c.name, frames)
				}
			} else {
				r := e.Do("POST", path, e.tok, map[string]any{"content": "hi"})
				status, body = r.Status, string(r.Body)
			}
			if status != c.status || !strings.Contains(body, `"code":"`+c.code+`"`) || !strings.Contains(body, "internal") {
				t.Errorf("%s (streamed %v): %d %s; want %d %s naming the provider", c.name, streamed, status, body, c.status, c.code)
			}
			if strings.Contains(body, key) {
				t.Errorf("%s: the answer holds the credential: %s", c.name, body)
			}
		}
	}
	// A stream cut after the reply began: the status is sent, the error is the last frame.
	e.stand.Queue(llmtest.Cut(llmtest.Text("one two three four five six seven eight")))
	resp, frames, raw := stream(t, e.URL, path, e.tok, map[string]any{"content": "hi"})
	last := frames[len(frames)-1]
	if resp.StatusCode != 200 || frames[1].Event != "delta" || last.Event != "error" || last.Data["code"] != "provider_error" ||
		!strings.Contains(last.Data["message"].(string), "internal") {
		t.Errorf("a stream cut mid-reply: %d %s", resp.StatusCode, raw)
	}
	if strings.Contains(e.Logs.String(), key) {
		t.Error("the server's log holds the credential")
	}
	if n := len(e.Do("GET", "/api/v1/conversations/"+id, e.tok, nil).Data()["messages"].([]any)); n != 1 {
		t.Errorf("messages = %d: failed turns must store nothing", n)
	}
	// And the conversation goes on.
	e.stand.Queue(llmtest.Text("Hello."))
	testkit.Expect(t, e.Do("POST", path, e.tok, map[string]any{"content": "hi"}), 200)
}

// A custom_function's URL goes through the SSRF guard: an address on this machine is
// refused (the model reads why and the conversation goes on) until the operator allows
// its prefix.
func TestConversationCustomFunctionThroughTheGuard(t *testing.T) {
	var calls int
	fn := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		body, _ := io.ReadAll(r.Body)
		io.WriteString(w, `{"status":"shipped","echo":`+string(body)+`}`)
	}))
	defer fn.Close()
	respond := func(r llmtest.Request) llmtest.Reply {
		if res := r.ToolResults(); len(res) > 0 {
			return llmtest.Text("Result: " + res[0].Content)
		}
		return llmtest.Calls(llm.ToolCall{ID: "call_f1", Name: "lookup", Arguments: `{"order_id":"A-1"}`})
	}
	tool := map[string]any{"name": "lookup", "type": "custom_function", "http_method": "POST", "api_endpoint": fn.URL + "/orders",
		"custom_function_parameters": `{"type":"object","properties":{"order_id":{"type":"string"}},"required":["order_id"]}`}
	for _, allowed := range []bool{false, true} {
		e := newConvEnv(t, nil, func(s *cli.LLMSettings) {
			if allowed {
				s.AllowURLPrefixes = append(s.AllowURLPrefixes, fn.URL+"/orders")
			}
		})
		e.stand.Respond(respond)
		agent := e.createAgent(t, map[string]any{"name": "F", "llm_config": e.llmConfig(map[string]any{"tools": []any{tool}})})
		id := e.start(t, agent, map[string]any{"version": "draft"}, 201).Data()["id"].(string)
		r := e.Do("POST", "/api/v1/conversations/"+id+"/messages", e.tok, map[string]any{"content": "where is A-1?"})
		testkit.Expect(t, r, 200)
		items := r.Data()["items"].([]any)
		tc := items[2].(map[string]any)["tool_call"].(map[string]any)
		last := items[len(items)-1].(map[string]any)["content"].(string)
		if allowed {
			res := tc["result"].(map[string]any)
			if tc["error"] != false || res["status"] != float64(200) || !strings.Contains(res["body"].(string), `"order_id":"A-1"`) {
				t.Errorf("allowed: tool call = %v", tc)
			}
			if !strings.Contains(last, "shipped") {
				t.Errorf("allowed: the model did not read the answer: %q", last)
			}
			continue
		}
		msg, _ := tc["result"].(map[string]any)["error"].(string)
		if tc["error"] != true || !strings.Contains(msg, "not allowed") {
			t.Errorf("refused: tool call = %v", tc)
		}
		if !strings.Contains(last, "not allowed") {
			t.Errorf("refused: the model did not read why: %q", last)
		}
	}
	if calls != 1 {
		t.Errorf("the function was called %d times, want once (when allowed)", calls)
	}
}

// A tool call for an unknown tool, or with arguments that fail its schema, goes back to
// the model as an error, and the conversation goes on.
func TestConversationBadToolCallsGoBackToTheModel(t *testing.T) {
	e := newConvEnv(t, nil)
	e.stand.Queue(
		llmtest.Calls(llm.ToolCall{ID: "call_1", Name: "launch_rocket", Arguments: `{}`}),
		llmtest.Calls(llm.ToolCall{ID: "call_2", Name: "note", Arguments: `{"plan":"gold"}`}),
		llmtest.Text("Sorry, which plan?"),
	)
	agent := e.createAgent(t, map[string]any{"name": "T", "llm_config": e.llmConfig(map[string]any{"tools": []any{
		map[string]any{"name": "note", "type": "extract_dynamic_variable", "variables": []any{
			map[string]any{"type": "enum", "name": "plan", "description": "plan", "choices": []string{"basic", "pro"}}}}}})})
	id := e.start(t, agent, map[string]any{"version": "draft"}, 201).Data()["id"].(string)
	r := e.Do("POST", "/api/v1/conversations/"+id+"/messages", e.tok, map[string]any{"content": "gold please"})
	testkit.Expect(t, r, 200)
	items := r.Data()["items"].([]any)
	if len(items) != 6 || r.Data()["status"] != "active" || items[5].(map[string]any)["content"] != "Sorry, which plan?" {
		t.Fatalf("turn = %s", r.Body)
	}
	for i, want := range map[int]string{2: "no tool named", 4: "/plan"} {
		tc := items[i].(map[string]any)["tool_call"].(map[string]any)
		if msg, _ := tc["result"].(map[string]any)["error"].(string); tc["error"] != true || !strings.Contains(msg, want) {
			t.Errorf("item %d: %v, want an error mentioning %q", i, tc, want)
		}
	}
	// The model was told: the last request carries the error as the tool's result.
	reqs := e.stand.Requests()
	res := reqs[len(reqs)-1].ToolResults()
	if len(res) != 1 || !strings.Contains(res[0].Content, "/plan") {
		t.Errorf("the model's tool results = %+v", res)
	}
	if v := e.Do("GET", "/api/v1/conversations/"+id, e.tok, nil).Data()["variables"].(map[string]any); len(v) != 0 {
		t.Errorf("a refused extraction set variables: %v", v)
	}
}

// A public provider reached through --llm-base-url (a gateway, here Groq's stand-in on
// loopback, allowed by its prefix): the agent's key goes with each request, and the
// conversation works as with any provider.
func TestConversationThroughLLMBaseURL(t *testing.T) {
	for _, provider := range []string{data.LLMGroq, data.LLMMistral, data.LLMAzure, data.LLMBedrockClaude} {
		t.Run(provider, func(t *testing.T) {
			stand := llmtest.New(t, provider)
			stand.Respond(func(r llmtest.Request) llmtest.Reply { return llmtest.Text("Hi from " + r.Provider) })
			ls := cli.LLMSettings{BaseURLs: stand.Options().BaseURLs, AllowURLPrefixes: []string{stand.URL + "/"}}
			s := testkit.NewServerWith(t, nil, func(svc *service.Services) { svc.Conversations.Configure(cli.ConversationOptions(ls)) })
			cfg, _ := structToMap(stand.LLMConfig())
			a := s.Do("POST", "/api/v1/agents", s.Owner.Token, map[string]any{"name": "P", "llm_config": cfg})
			testkit.Expect(t, a, 201)
			c := s.Do("POST", "/api/v1/agents/"+a.Data()["id"].(string)+"/conversations", s.Owner.Token, map[string]any{"version": "draft"})
			testkit.Expect(t, c, 201)
			_, frames, raw := stream(t, s.URL, "/api/v1/conversations/"+c.Data()["id"].(string)+"/messages", s.Owner.Token, map[string]any{"content": "hello"})
			if len(frames) == 0 || frames[len(frames)-1].Event != "done" || !strings.Contains(string(raw), "Hi from "+provider) {
				t.Errorf("%s: %s", provider, raw)
			}
			if n := len(stand.Requests()); n != 1 {
				t.Errorf("%s: the stand-in got %d requests", provider, n)
			}
		})
	}
}

// TestModelOnAnInternalAddressSaysTheFlag: a model server the SSRF guard refuses (a
// local Ollama without --allow-url-prefix, the first hour's usual mistake) answers a
// message 502 whose message names the flag that lets it through.
func TestModelOnAnInternalAddressSaysTheFlag(t *testing.T) {
	e := newConvEnv(t, nil, func(s *cli.LLMSettings) { s.AllowURLPrefixes = nil })
	agent := e.createAgent(t, map[string]any{"name": "Local"})
	id := e.start(t, agent, map[string]any{"version": "draft"}, 201).Data()["id"].(string)
	r := e.Do("POST", "/api/v1/conversations/"+id+"/messages", e.tok, map[string]any{"content": "hello"})
	testkit.Expect(t, r, http.StatusBadGateway)
	if msg := r.JSON()["message"].(string); !strings.Contains(msg, "internal address") || !strings.Contains(msg, "--allow-url-prefix") {
		t.Errorf("the refusal does not say how to allow the model server: %q", msg)
	}
	if n := len(e.stand.Requests()); n != 0 {
		t.Errorf("the guarded model server was reached %d times", n)
	}
}
