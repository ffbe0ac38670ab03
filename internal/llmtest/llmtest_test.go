package llmtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/llm"
	"github.com/voiceapi/voiceapi/validate"
)

// recorder is a testing.TB that records the failures a stand-in reports instead of
// failing the test, to test that it reports them.
type recorder struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func (r *recorder) failures() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.errs
	r.errs = nil
	return out
}

// post sends a chat completion request by hand: path, headers and body as given.
func post(t *testing.T, s *Server, method, path string, header map[string]string, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, s.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := s.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// goodBody is a conforming chat completion body for model, with a tool call and its result.
func goodBody(model string, mutate func(map[string]any)) string {
	b := map[string]any{
		"model": model,
		"messages": []any{
			map[string]any{"role": "system", "content": "Be brief."},
			map[string]any{"role": "user", "content": "Book for two"},
			map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{
				"id": "abcDEF123", "type": "function", "function": map[string]any{"name": "book", "arguments": `{"people":2}`}}}},
			map[string]any{"role": "tool", "tool_call_id": "abcDEF123", "content": "booked"},
		},
		"tools": []any{map[string]any{"type": "function", "function": map[string]any{
			"name": "book", "description": "Book a table", "parameters": map[string]any{"type": "object", "properties": map[string]any{}}}}},
		"tool_choice": "auto",
	}
	if mutate != nil {
		mutate(b)
	}
	out, _ := json.Marshal(b)
	return string(out)
}

// headersFor are the conforming headers of s's protocol.
func headersFor(s *Server) map[string]string {
	h := map[string]string{"Content-Type": "application/json"}
	switch {
	case s.Provider == data.LLMAzure:
		h["api-key"] = s.APIKey
	case s.APIKey != "":
		h["Authorization"] = "Bearer " + s.APIKey
	}
	return h
}

// pathFor is the conforming path (and query) of s's protocol.
func pathFor(s *Server) string {
	switch s.Provider {
	case data.LLMGroq:
		return "/openai/v1/chat/completions"
	case data.LLMAzure:
		return "/openai/deployments/" + s.Deployment + "/chat/completions?api-version=" + s.APIVersion
	}
	return "/v1/chat/completions"
}

func TestConformingRequestPasses(t *testing.T) {
	for _, p := range []string{data.LLMInternal, data.LLMGroq, data.LLMMistral, data.LLMAzure} {
		rec := &recorder{TB: t}
		s := New(rec, p)
		s.Queue(Text("ok"))
		status, body := post(t, s, http.MethodPost, pathFor(s), headersFor(s), goodBody(s.Model, nil))
		if status != http.StatusOK || len(rec.failures()) != 0 {
			t.Errorf("%s: %d %s", p, status, body)
		}
		req := s.Last()
		if req.System != "Be brief." || len(req.Messages) != 3 || req.Messages[2].ToolCallID != "abcDEF123" ||
			len(req.Tools) != 1 || req.ToolChoice.Mode != "auto" {
			t.Errorf("%s: parsed %+v", p, req)
		}
	}
}

// TestDeviationsFailTheTest: each way a request can leave its protocol fails the test and
// is answered as the provider answers it.
func TestDeviationsFailTheTest(t *testing.T) {
	type deviation struct {
		name     string
		provider string
		method   string
		path     string // "" is the right one
		header   func(h map[string]string)
		body     func(b map[string]any)
		rawBody  string
		status   int
	}
	set := func(k string, v any) func(map[string]any) { return func(b map[string]any) { b[k] = v } }
	messages := func(ms ...any) func(map[string]any) { return set("messages", ms) }
	user := map[string]any{"role": "user", "content": "hi"}
	cases := []deviation{
		{name: "GET", provider: data.LLMGroq, method: http.MethodGet, status: 405},
		{name: "wrong path", provider: data.LLMGroq, path: "/v1/chat/completions", status: 404},
		{name: "azure without api-version", provider: data.LLMAzure, path: "/openai/deployments/gpt-4o-prod/chat/completions", status: 404},
		{name: "azure with another api-version", provider: data.LLMAzure, path: "/openai/deployments/gpt-4o-prod/chat/completions?api-version=2023-05-15", status: 404},
		{name: "azure another deployment", provider: data.LLMAzure, path: "/openai/deployments/other/chat/completions?api-version=2024-10-21", status: 404},
		{name: "azure with a bearer", provider: data.LLMAzure, header: func(h map[string]string) { h["Authorization"] = "Bearer x" }, status: 400},
		{name: "internal with a key it has not", provider: data.LLMInternal, header: func(h map[string]string) { h["Authorization"] = "Bearer " }, status: 400},
		{name: "form body", provider: data.LLMGroq, header: func(h map[string]string) { h["Content-Type"] = "text/plain" }, status: 400},
		{name: "not JSON", provider: data.LLMGroq, rawBody: "{model", status: 400},
		{name: "unknown field", provider: data.LLMGroq, body: set("temprature", 0.2), status: 400},
		{name: "mistral stream_options", provider: data.LLMMistral, body: func(b map[string]any) {
			b["stream"] = true
			b["stream_options"] = map[string]any{"include_usage": true}
		}, status: 422},
		{name: "mistral max_completion_tokens", provider: data.LLMMistral, body: set("max_completion_tokens", 10), status: 422},
		{name: "another model", provider: data.LLMGroq, body: set("model", "gpt-4o"), status: 404},
		{name: "stream_options without stream", provider: data.LLMGroq, body: set("stream_options", map[string]any{"include_usage": true}), status: 400},
		{name: "tool_choice without tools", provider: data.LLMInternal, body: func(b map[string]any) { delete(b, "tools") }, status: 400},
		{name: "tool_choice any outside mistral", provider: data.LLMGroq, body: set("tool_choice", "any"), status: 400},
		{name: "tool_choice naming no tool", provider: data.LLMAzure, body: set("tool_choice", map[string]any{"type": "function", "function": map[string]any{"name": "nope"}}), status: 400},
		{name: "tool not a function", provider: data.LLMGroq, body: set("tools", []any{map[string]any{"type": "code", "function": map[string]any{"name": "x"}}}), status: 400},
		{name: "tool schema not an object", provider: data.LLMGroq, body: set("tools", []any{map[string]any{"type": "function", "function": map[string]any{"name": "x", "parameters": map[string]any{"type": "string"}}}}), status: 400},
		{name: "tool name with a space", provider: data.LLMMistral, body: set("tools", []any{map[string]any{"type": "function", "function": map[string]any{"name": "book table"}}}), status: 400},
		{name: "no messages", provider: data.LLMGroq, body: messages(), status: 400},
		{name: "unknown role", provider: data.LLMGroq, body: messages(map[string]any{"role": "developer2", "content": "x"}), status: 400},
		{name: "user without content", provider: data.LLMGroq, body: messages(map[string]any{"role": "user"}), status: 400},
		{name: "member no message has", provider: data.LLMGroq, body: messages(map[string]any{"role": "user", "content": "x", "tool_call_id": "a", "extra": 1}), status: 400},
		{name: "result of no call", provider: data.LLMGroq, body: messages(user, map[string]any{"role": "tool", "tool_call_id": "call_x", "content": "r"}), status: 400},
		{name: "mistral call id", provider: data.LLMMistral, body: messages(user,
			map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{"id": "call_0fypS1hVX", "function": map[string]any{"name": "book", "arguments": "{}"}}}},
			map[string]any{"role": "tool", "tool_call_id": "call_0fypS1hVX", "content": "r"}), status: 400},
		{name: "call arguments not JSON", provider: data.LLMGroq, body: messages(user,
			map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{"id": "c1", "type": "function", "function": map[string]any{"name": "book", "arguments": "{people"}}}}), status: 400},
		{name: "n of 2", provider: data.LLMGroq, body: set("n", 2), status: 400},
	}
	for _, tc := range cases {
		rec := &recorder{TB: t}
		s := New(rec, tc.provider)
		s.Queue(Text("never sent"))
		method, path, header := http.MethodPost, pathFor(s), headersFor(s)
		if tc.method != "" {
			method = tc.method
		}
		if tc.path != "" {
			path = tc.path
		}
		if tc.header != nil {
			tc.header(header)
		}
		body := tc.rawBody
		if body == "" {
			body = goodBody(s.Model, tc.body)
		}
		status, answer := post(t, s, method, path, header, body)
		if status != tc.status || len(rec.failures()) != 1 {
			t.Errorf("%s: %d %s, want %d and the test failed once", tc.name, status, answer, tc.status)
		}
	}
}

// TestWrongKeyIsAScenario: a wrong key is answered the provider's 401 in its shape, and
// does not fail the test: failure tests script it.
func TestWrongKeyIsAScenario(t *testing.T) {
	shapes := map[string]string{
		data.LLMGroq:    `{"error":{"code":"invalid_api_key","message":"Invalid API Key","param":null,"type":"invalid_request_error"}}`,
		data.LLMMistral: `{"message":"Unauthorized","request_id":"0123456789abcdef0123456789abcdef"}`,
		data.LLMAzure:   `{"error":{"code":"401","message":"Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource."}}`,
	}
	for p, want := range shapes {
		rec := &recorder{TB: t}
		s := New(rec, p)
		h := headersFor(s)
		delete(h, "Authorization")
		delete(h, "api-key")
		status, body := post(t, s, http.MethodPost, pathFor(s), h, goodBody(s.Model, nil))
		if status != 401 || strings.TrimSpace(body) != want || len(rec.failures()) != 0 {
			t.Errorf("%s: %d %s", p, status, body)
		}
	}
}

func TestUnscriptedRequestFailsTheTest(t *testing.T) {
	rec := &recorder{TB: t}
	s := New(rec, data.LLMGroq)
	status, _ := post(t, s, http.MethodPost, pathFor(s), headersFor(s), goodBody(s.Model, nil))
	if status != 500 || len(rec.failures()) != 1 {
		t.Errorf("status %d", status)
	}
}

// TestStreamShapes: a streamed reply is chat.completion.chunk events ending in [DONE],
// tool call deltas split over chunks (OpenAI, Azure) or whole (Groq, Mistral), usage
// where each provider puts it.
func TestStreamShapes(t *testing.T) {
	for _, p := range []string{data.LLMInternal, data.LLMGroq, data.LLMMistral, data.LLMAzure} {
		s := New(t, p)
		s.Queue(Reply{Text: "Hi there", ToolCalls: []llm.ToolCall{{Name: "book", Arguments: `{"people":2}`}}})
		streamBody := goodBody(s.Model, func(b map[string]any) {
			b["stream"] = true
			if p != data.LLMMistral {
				b["stream_options"] = map[string]any{"include_usage": true}
			}
		})
		status, body := post(t, s, http.MethodPost, pathFor(s), headersFor(s), streamBody)
		events := strings.Split(strings.TrimSpace(body), "\n\n")
		if status != 200 || events[len(events)-1] != "data: [DONE]" {
			t.Fatalf("%s: %d %s", p, status, body)
		}
		var args strings.Builder
		callChunks, usage := 0, false
		for _, e := range events[:len(events)-1] {
			var c struct {
				Choices []struct {
					Delta struct {
						ToolCalls []struct {
							Function struct{ Arguments string }
						} `json:"tool_calls"`
					}
				}
				Usage *struct{ PromptTokens int } `json:"usage"`
				XGroq *struct {
					Usage *struct{ PromptTokens int }
				} `json:"x_groq"`
			}
			if err := json.Unmarshal([]byte(strings.TrimPrefix(e, "data: ")), &c); err != nil {
				t.Fatalf("%s: event %q: %v", p, e, err)
			}
			for _, ch := range c.Choices {
				for _, tc := range ch.Delta.ToolCalls {
					callChunks++
					args.WriteString(tc.Function.Arguments)
				}
			}
			usage = usage || c.Usage != nil || (c.XGroq != nil && c.XGroq.Usage != nil)
		}
		split := p == data.LLMInternal || p == data.LLMAzure
		if args.String() != `{"people":2}` || (split && callChunks < 3) || (!split && callChunks != 1) || !usage {
			t.Errorf("%s: arguments %q in %d chunks, usage %v", p, args.String(), callChunks, usage)
		}
	}
}

func TestWords(t *testing.T) {
	for _, text := range []string{"", "one", "one two", "  lead and trail  ", "a  b"} {
		w := words(text)
		if strings.Join(w, "") != text {
			t.Errorf("%q split into %q", text, w)
		}
	}
	if w := words("one two three"); len(w) != 3 {
		t.Errorf("%q", w)
	}
}

func TestToolResults(t *testing.T) {
	r := Request{Messages: []llm.Message{
		{Role: llm.RoleUser, Content: "a"},
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "1"}, {ID: "2"}}},
		{Role: llm.RoleTool, ToolCallID: "1"},
		{Role: llm.RoleTool, ToolCallID: "2"},
	}}
	res := r.ToolResults()
	if len(res) != 2 || res[0].ToolCallID != "1" || r.LastUserText() != "a" {
		t.Errorf("%+v", res)
	}
	if got := (Request{}).LastUserText(); got != "" {
		t.Errorf("%q", got)
	}
}

// TestLLMConfigIsValid: each stand-in's LLMConfig passes the agent rules, so tests through
// the API can use it as it is; its model is one the catalog lists.
func TestLLMConfigIsValid(t *testing.T) {
	cat, err := data.LoadCatalog("")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range data.LLMProviders {
		s := New(t, p)
		a := data.DefaultAgent()
		a.Name = "Front desk"
		a.LLMConfig = s.LLMConfig()
		errs := &validate.Errors{}
		validate.ValidateAgent(a, cat, errs)
		if err := errs.Err(); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
}
