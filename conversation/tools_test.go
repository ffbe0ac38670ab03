package conversation

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/llm"
)

func intp(n int) *int { return &n }

func functionTool(method, endpoint string) *data.Tool {
	return &data.Tool{
		Name: "lookup", Type: data.ToolCustomFunction, HTTPMethod: method, APIEndpoint: endpoint,
		CustomFunctionHeaders:    []string{"Authorization: Bearer {{token}}", "X-Shop:acme"},
		CustomFunctionQuery:      []string{"region={{region}}"},
		CustomFunctionParameters: str(`{"type":"object","properties":{"order_id":{"type":"string"},"count":{"type":"integer"}},"required":["order_id"]}`),
		CustomFunctionVariables:  []string{"order_status", "eta_days", "ignored_object"},
	}
}

func TestCustomFunctionPOST(t *testing.T) {
	var got struct {
		method, path, auth, shop, ctype, region string
		body                                    map[string]any
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.method, got.path, got.auth, got.shop, got.ctype = r.Method, r.URL.Path, r.Header.Get("Authorization"), r.Header.Get("X-Shop"), r.Header.Get("Content-Type")
		got.region = r.URL.Query().Get("region")
		json.NewDecoder(r.Body).Decode(&got.body)
		io.WriteString(w, `{"order_status":"shipped","eta_days":2,"ignored_object":{"a":1},"other":"x"}`)
	}))
	defer srv.Close()
	m := &scripted{replies: []*llm.Reply{calls("", call("c1", "lookup", `{"order_id":"A-1","count":2}`)), text("It shipped.")}}
	e := engineWith(m, functionTool("POST", srv.URL+"/{{tenant}}/orders"))
	e.Functions = srv.Client()
	out := reply(t, e, State{Variables: map[string]any{"token": "s3cret", "region": "eu", "tenant": "acme"}}, "where is A-1?")
	if got.method != "POST" || got.path != "/acme/orders" || got.auth != "Bearer s3cret" || got.shop != "acme" || got.ctype != "application/json" || got.region != "eu" {
		t.Errorf("request = %+v", got)
	}
	if !reflect.DeepEqual(got.body, map[string]any{"order_id": "A-1", "count": float64(2)}) {
		t.Errorf("body = %v", got.body)
	}
	tc := out.Items[2].ToolCall
	res := tc.Result.(map[string]any)
	if tc.Error || res["status"] != 200 || !strings.Contains(res["body"].(string), `"shipped"`) || res["truncated"] != false {
		t.Errorf("result = %+v", tc)
	}
	if want := map[string]any{"order_status": "shipped", "eta_days": json.Number("2")}; !reflect.DeepEqual(out.Variables, want) {
		t.Errorf("variables set from the answer = %v, want %v", out.Variables, want)
	}
	if strings.Contains(out.Items[2].Content, "s3cret") {
		t.Errorf("the tool item shows a header's secret: %q", out.Items[2].Content)
	}
}

func TestCustomFunctionGETTruncatesAndReportsStatus(t *testing.T) {
	var query string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		query = r.URL.RawQuery
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, strings.Repeat("x", MaxFunctionAnswer+100))
	}))
	defer srv.Close()
	m := &scripted{replies: []*llm.Reply{calls("", call("c1", "lookup", `{"order_id":"A 1"}`)), text("Not found.")}}
	e := engineWith(m, functionTool("GET", srv.URL+"/orders"))
	e.Functions = srv.Client()
	out := reply(t, e, State{Variables: map[string]any{"token": "t", "region": "eu"}}, "?")
	if query != "order_id=A+1&region=eu" {
		t.Errorf("query = %q: a GET's arguments go in the query", query)
	}
	res := out.Items[2].ToolCall.Result.(map[string]any)
	if res["status"] != 404 || len(res["body"].(string)) != MaxFunctionAnswer || res["truncated"] != true {
		t.Errorf("result status %v, body %d bytes, truncated %v", res["status"], len(res["body"].(string)), res["truncated"])
	}
	if len(out.Variables) != 0 {
		t.Errorf("a failed answer set variables: %v", out.Variables)
	}
	// The model reads the first 16 KiB (JSON-escaped in the tool message).
	if msg := m.reqs[1].Messages[2]; !strings.Contains(msg.Content, `"status":404`) {
		t.Errorf("the model's tool message = %.80q", msg.Content)
	}
}

func TestCustomFunctionTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	tool := functionTool("POST", srv.URL)
	tool.Timeout = intp(50) // milliseconds
	m := &scripted{replies: []*llm.Reply{calls("", call("c1", "lookup", `{"order_id":"A"}`)), text("The system is slow.")}}
	e := engineWith(m, tool)
	e.Functions = srv.Client()
	out := reply(t, e, State{Variables: map[string]any{"token": "t", "region": "eu"}}, "?")
	tc := out.Items[2].ToolCall
	if !tc.Error || !strings.Contains(tc.Result.(map[string]any)["error"].(string), "did not answer within 50ms") {
		t.Errorf("result = %+v", tc)
	}
	if out.Items[3].Content != "The system is slow." {
		t.Errorf("the conversation did not go on: %s", roles(out.Items))
	}
}

// A custom function's timeout past MaxFunctionTimeout is cut to it: one step of an
// answer must end within the conversation's lease span. The edge holds as set.
func TestCustomFunctionTimeoutCapped(t *testing.T) {
	for _, tc := range []struct {
		timeoutMS int
		want      time.Duration
	}{
		{int(MaxFunctionTimeout / time.Millisecond), MaxFunctionTimeout},
		{int(MaxFunctionTimeout/time.Millisecond) + 1, MaxFunctionTimeout},
		{int(10 * time.Minute / time.Millisecond), MaxFunctionTimeout},
		{1500, 1500 * time.Millisecond},
	} {
		left := functionTimeLeft(t, intp(tc.timeoutMS))
		if left > tc.want || left < tc.want-5*time.Second {
			t.Errorf("timeout %d ms: the call had %s left, want about %s", tc.timeoutMS, left, tc.want)
		}
	}
}

// doFunc is a custom function's caller in the process.
type doFunc func(*http.Request) (*http.Response, error)

func (f doFunc) Do(r *http.Request) (*http.Response, error) { return f(r) }

func TestCustomFunctionRefusedAndBadConfiguration(t *testing.T) {
	m := &scripted{replies: []*llm.Reply{calls("", call("c1", "lookup", `{"order_id":"A"}`)), text("ok")}}
	out := reply(t, engineWith(m, functionTool("POST", "https://api.example.com")), State{Variables: map[string]any{"token": "t", "region": "eu"}}, "?")
	if tc := out.Items[2].ToolCall; !tc.Error {
		t.Errorf("with no caller: %+v", tc)
	}
	tool := functionTool("POST", "https://api.example.com")
	tool.CustomFunctionHeaders = []string{"no colon"}
	m = &scripted{replies: []*llm.Reply{calls("", call("c1", "lookup", `{"order_id":"A"}`)), text("ok")}}
	e := engineWith(m, tool)
	e.Functions = http.DefaultClient
	out = reply(t, e, State{Variables: map[string]any{"region": "eu"}}, "?")
	if msg := out.Items[2].ToolCall.Result.(map[string]any)["error"].(string); !strings.Contains(msg, "custom_function_headers item 0") {
		t.Errorf("a malformed header item: %q", msg)
	}
	m = &scripted{replies: []*llm.Reply{calls("", call("c1", "lookup", `{"count":1}`)), text("ok")}}
	e = engineWith(m, functionTool("POST", "https://api.example.com"))
	e.Functions = http.DefaultClient
	out = reply(t, e, State{}, "?")
	if msg := out.Items[2].ToolCall.Result.(map[string]any)["error"].(string); !strings.Contains(msg, "order_id") {
		t.Errorf("arguments lacking a required parameter: %q", msg)
	}
}

// Renew runs before each step after the first model call: each tool call and each model
// call after a tool round (here two tools, then the last model call: three), and never
// for a reply of text alone; its error ends the reply before the step.
func TestReplyRenewsBeforeEachStep(t *testing.T) {
	var steps []string
	tool := functionTool("POST", "https://api.example.com")
	m := &scripted{replies: []*llm.Reply{calls("", call("c1", "lookup", `{"order_id":"A"}`), call("c2", "lookup", `{"order_id":"B"}`)), text("Both shipped.")}}
	e := engineWith(m, tool)
	e.Functions = doFunc(func(r *http.Request) (*http.Response, error) {
		steps = append(steps, "function")
		return &http.Response{StatusCode: 204, Body: http.NoBody, Request: r}, nil
	})
	e.Renew = func(context.Context) error { steps = append(steps, "renew"); return nil }
	reply(t, e, State{Variables: map[string]any{"token": "t", "region": "eu"}}, "?")
	if got := strings.Join(steps, ","); got != "renew,function,renew,function,renew" {
		t.Errorf("steps = %s, want a renewal before each function and the last model call", got)
	}
	steps = nil
	reply(t, engineWith(&scripted{replies: []*llm.Reply{text("Hi.")}}), State{}, "?")
	if len(steps) != 0 {
		t.Errorf("a text reply renewed: %v", steps)
	}
	lost := errors.New("lease lost")
	m = &scripted{replies: []*llm.Reply{calls("", call("c1", "lookup", `{"order_id":"A"}`)), text("never")}}
	e = engineWith(m, tool)
	e.Functions = doFunc(func(r *http.Request) (*http.Response, error) {
		t.Error("a function ran after a failed renewal")
		return nil, lost
	})
	e.Renew = func(context.Context) error { return lost }
	if _, err := e.Reply(context.Background(), State{Variables: map[string]any{"token": "t", "region": "eu"}}, "?", data.ConversationObserver{}); !errors.Is(err, lost) {
		t.Errorf("Reply after a failed renewal = %v, want its error", err)
	}
}

// functionTimeLeft is the time a custom function with the given timeout had left when
// its request was made, within one answer.
func functionTimeLeft(t *testing.T, timeout *int) time.Duration {
	t.Helper()
	var left time.Duration
	tool := functionTool("POST", "https://api.example.com")
	tool.Timeout = timeout
	m := &scripted{replies: []*llm.Reply{calls("", call("c1", "lookup", `{"order_id":"A"}`)), text("ok")}}
	e := engineWith(m, tool)
	e.Functions = doFunc(func(r *http.Request) (*http.Response, error) {
		deadline, _ := r.Context().Deadline()
		left = time.Until(deadline)
		return &http.Response{StatusCode: 204, Body: http.NoBody, Request: r}, nil
	})
	reply(t, e, State{Variables: map[string]any{"token": "t", "region": "eu"}}, "?")
	return left
}

// TestToolCallItemKeepsNumbersAsWritten: a tool call's item records the arguments with
// each number as the model wrote it (json.Number), which a test's tool_called criterion
// compares exactly; text that is no JSON stays as the tool read it.
func TestToolCallItemKeepsNumbersAsWritten(t *testing.T) {
	cases := []struct {
		text    string
		decoded any
		want    any
	}{
		{`{"n":12345678901234567891,"f":1.50}`, map[string]any{"n": 1.2345678901234567e19, "f": 1.5},
			map[string]any{"n": json.Number("12345678901234567891"), "f": json.Number("1.50")}},
		{`{"a":[1e2,{"b":-0}]}`, nil, map[string]any{"a": []any{json.Number("1e2"), map[string]any{"b": json.Number("-0")}}}},
		{"", map[string]any{}, map[string]any{}},
		{`{"n":1} }`, `{"n":1} }`, `{"n":1} }`},
		{`not json`, "not json", "not json"},
	}
	for _, c := range cases {
		item := toolResult{args: c.decoded}.item(llm.ToolCall{ID: "c1", Name: "book", Arguments: c.text})
		if !reflect.DeepEqual(item.Arguments, c.want) {
			t.Errorf("arguments %q recorded as %#v, want %#v", c.text, item.Arguments, c.want)
		}
	}
}
