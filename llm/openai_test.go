package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/llmtest"
	"github.com/voiceapi/voiceapi/llm"
)

// openAIProviders are the providers that speak chat completions.
var openAIProviders = []string{data.LLMInternal, data.LLMGroq, data.LLMMistral, data.LLMAzure}

// standIn starts provider's stand-in and a client of it.
func standIn(t *testing.T, provider string, opts ...llmtest.Option) (*llmtest.Server, llm.Client) {
	t.Helper()
	s := llmtest.New(t, provider, opts...)
	c, err := llm.New(s.Config(), s.Options())
	if err != nil {
		t.Fatal(err)
	}
	return s, c
}

// eachProvider runs f once per provider of list, as a subtest.
func eachProvider(t *testing.T, list []string, f func(t *testing.T, provider string)) {
	for _, p := range list {
		t.Run(p, func(t *testing.T) {
			t.Parallel()
			f(t, p)
		})
	}
}

// collect is an onText that gathers the deltas.
func collect(deltas *[]string) func(string) error {
	return func(d string) error {
		*deltas = append(*deltas, d)
		return nil
	}
}

var bookTable = llm.Tool{
	Name:        "book_table",
	Description: "Book a table at the restaurant.",
	Parameters: map[string]any{
		"type": "object",
		"properties": map[string]any{
			"people": map[string]any{"type": "integer"},
			"time":   map[string]any{"type": "string"},
		},
		"required": []any{"people", "time"},
	},
}

var endCall = llm.Tool{Name: "end_call", Description: "End the call.", Parameters: map[string]any{"type": "object", "properties": map[string]any{}}}

func TestPlainReply(t *testing.T) {
	eachProvider(t, allProviders, func(t *testing.T, p string) {
		s, c := standIn(t, p)
		s.Queue(llmtest.Text("Hello! How can I help you today?"))
		temp := 0.3
		reply, err := c.Complete(context.Background(), llm.Request{
			System:      "You are the front desk of Chez Léa.",
			Messages:    []llm.Message{{Role: llm.RoleUser, Content: "Hi there"}},
			Temperature: &temp,
			MaxTokens:   200,
		}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if reply.Text != "Hello! How can I help you today?" || reply.StopReason != "stop" || len(reply.ToolCalls) != 0 {
			t.Errorf("reply %+v", reply)
		}
		if reply.Usage.InputTokens == 0 || reply.Usage.OutputTokens == 0 {
			t.Errorf("usage %+v, want both counted", reply.Usage)
		}
		if reply.Total <= 0 || reply.FirstToken != reply.Total {
			t.Errorf("latencies first %v total %v: unstreamed, the first token is the whole reply", reply.FirstToken, reply.Total)
		}
		req := s.Last()
		if req.Stream || req.System != "You are the front desk of Chez Léa." || len(req.Messages) != 1 ||
			req.Messages[0].Content != "Hi there" || req.Temperature == nil || *req.Temperature != 0.3 || req.MaxTokens != 200 {
			t.Errorf("the stand-in received %+v", req)
		}
		if c.Provider() != p {
			t.Errorf("Provider() = %q", c.Provider())
		}
	})
}

func TestStreamedReply(t *testing.T) {
	eachProvider(t, allProviders, func(t *testing.T, p string) {
		s, c := standIn(t, p)
		const text = "Sure, a table for two at seven is booked."
		s.Queue(llmtest.Text(text))
		var deltas []string
		reply, err := c.Complete(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "Book it"}}}, collect(&deltas))
		if err != nil {
			t.Fatal(err)
		}
		if len(deltas) < 2 || strings.Join(deltas, "") != text || reply.Text != text {
			t.Errorf("deltas %q, reply %q: want the text in pieces", deltas, reply.Text)
		}
		if reply.Usage.InputTokens == 0 || reply.Usage.OutputTokens == 0 {
			t.Errorf("usage %+v: each protocol reports a stream's usage in its own place", reply.Usage)
		}
		if reply.FirstToken <= 0 || reply.FirstToken > reply.Total {
			t.Errorf("latencies first %v total %v", reply.FirstToken, reply.Total)
		}
		if !s.Last().Stream {
			t.Error("the request did not ask for a stream")
		}
	})
}

// TestStreamUsageAsked: the providers that know stream_options are asked for usage;
// Mistral, which refuses the field, is not; nor is Azure before api-version 2024-09-01.
func TestStreamUsageAsked(t *testing.T) {
	cases := []struct {
		provider string
		opts     []llmtest.Option
		want     bool
	}{
		{data.LLMInternal, nil, true},
		{data.LLMGroq, nil, true},
		{data.LLMMistral, nil, false},
		{data.LLMAzure, nil, true},
		{data.LLMAzure, []llmtest.Option{llmtest.WithAPIVersion("2024-06-01")}, false},
	}
	for _, tc := range cases {
		s, c := standIn(t, tc.provider, tc.opts...)
		s.Queue(llmtest.Text("ok"))
		if _, err := c.Complete(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}, collect(new([]string))); err != nil {
			t.Fatalf("%s %s: %v", tc.provider, s.APIVersion, err)
		}
		if got := s.Last().StreamUsage; got != tc.want {
			t.Errorf("%s %s: stream_options.include_usage %v, want %v", tc.provider, s.APIVersion, got, tc.want)
		}
	}
}

func TestToolCall(t *testing.T) {
	for _, streamed := range []bool{false, true} {
		name := map[bool]string{false: "whole", true: "streamed"}[streamed]
		t.Run(name, func(t *testing.T) {
			eachProvider(t, allProviders, func(t *testing.T, p string) {
				s, c := standIn(t, p)
				s.Queue(llmtest.Reply{Text: "Let me book that.", ToolCalls: []llm.ToolCall{
					{Name: "book_table", Arguments: `{"people":2,"time":"19:00","note":"près de la fenêtre"}`},
					{Name: "end_call", Arguments: `{}`},
				}})
				var onText func(string) error
				var deltas []string
				if streamed {
					onText = collect(&deltas)
				}
				reply, err := c.Complete(context.Background(), llm.Request{
					Messages: []llm.Message{{Role: llm.RoleUser, Content: "Two people at seven, by the window"}},
					Tools:    []llm.Tool{bookTable, endCall},
				}, onText)
				if err != nil {
					t.Fatal(err)
				}
				if len(reply.ToolCalls) != 2 || reply.StopReason != "tool_calls" {
					t.Fatalf("reply %+v, want two tool calls", reply)
				}
				first, second := reply.ToolCalls[0], reply.ToolCalls[1]
				if first.ID == "" || second.ID == "" || first.ID == second.ID {
					t.Errorf("ids %q %q: each call needs its own", first.ID, second.ID)
				}
				if first.Name != "book_table" || !sameJSON(first.Arguments, `{"people":2,"time":"19:00","note":"près de la fenêtre"}`) ||
					second.Name != "end_call" || second.Arguments != "{}" {
					t.Errorf("calls %+v", reply.ToolCalls)
				}
				if reply.Text != "Let me book that." || (streamed && strings.Join(deltas, "") != reply.Text) {
					t.Errorf("text %q, deltas %q", reply.Text, deltas)
				}
				req := s.Last()
				if len(req.Tools) != 2 || req.Tools[0].Name != "book_table" || req.Tools[0].Description != bookTable.Description ||
					req.Tools[0].Parameters["required"] == nil || req.ToolChoice.Mode != "" {
					t.Errorf("tools sent %+v, choice %+v", req.Tools, req.ToolChoice)
				}
			})
		})
	}
}

func TestToolResultRoundTrip(t *testing.T) {
	eachProvider(t, allProviders, func(t *testing.T, p string) {
		s, c := standIn(t, p)
		s.Queue(llmtest.Calls(llm.ToolCall{Name: "book_table", Arguments: `{"people":2,"time":"19:00"}`}))
		ask := llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "A table for two at seven"}}, Tools: []llm.Tool{bookTable}}
		first, err := c.Complete(context.Background(), ask, nil)
		if err != nil {
			t.Fatal(err)
		}
		call := first.ToolCalls[0]
		s.Respond(func(r llmtest.Request) llmtest.Reply {
			res := r.ToolResults()
			if len(res) != 1 || res[0].Content != `{"confirmation":"B-42"}` {
				return llmtest.Fail(http.StatusBadRequest, "no tool result")
			}
			return llmtest.Text("Booked, your confirmation is B-42.")
		})
		ask.Messages = append(ask.Messages,
			llm.Message{Role: llm.RoleAssistant, ToolCalls: first.ToolCalls},
			llm.Message{Role: llm.RoleTool, ToolCallID: call.ID, ToolName: call.Name, Content: `{"confirmation":"B-42"}`})
		var deltas []string
		second, err := c.Complete(context.Background(), ask, collect(&deltas))
		if err != nil {
			t.Fatal(err)
		}
		if second.Text != "Booked, your confirmation is B-42." {
			t.Errorf("reply %q", second.Text)
		}
		got := s.Last().Messages
		if len(got) != 3 || got[1].ToolCalls[0].ID != got[2].ToolCallID || !sameJSON(got[1].ToolCalls[0].Arguments, call.Arguments) {
			t.Errorf("messages sent %+v", got)
		}
	})
}

// sameJSON reports whether two JSON texts hold the same value: Bedrock carries a call's
// input as a JSON document, not as the text the model wrote.
func sameJSON(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// TestMistralForeignCallIDs: a conversation whose tool calls another provider made (ids
// like call_...) reaches Mistral with ids of its form, each call still matched to its
// result; the stand-in refuses any other id as Mistral does.
func TestMistralForeignCallIDs(t *testing.T) {
	s, c := standIn(t, data.LLMMistral)
	s.Queue(llmtest.Text("Done."))
	_, err := c.Complete(context.Background(), llm.Request{
		Messages: []llm.Message{
			{Role: llm.RoleUser, Content: "Book two tables"},
			{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{
				{ID: "call_9oOUGn7XVM1S9AdJeglwUv1Z", Name: "book_table", Arguments: `{"people":2,"time":"19:00"}`},
				{ID: "call_Kq2", Name: "book_table", Arguments: `{"people":4,"time":"20:00"}`},
			}},
			{Role: llm.RoleTool, ToolCallID: "call_9oOUGn7XVM1S9AdJeglwUv1Z", Content: "booked"},
			{Role: llm.RoleTool, ToolCallID: "call_Kq2", Content: "booked"},
		},
		Tools: []llm.Tool{bookTable},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	m := s.Last().Messages
	a, b := m[1].ToolCalls[0].ID, m[1].ToolCalls[1].ID
	if a == b || m[2].ToolCallID != a || m[3].ToolCallID != b {
		t.Errorf("ids sent: calls %q %q, results %q %q", a, b, m[2].ToolCallID, m[3].ToolCallID)
	}
}

func TestToolChoice(t *testing.T) {
	cases := []struct {
		choice llm.ToolChoice
		want   llm.ToolChoice
		// wire is tool_choice as the body carries it, per provider when it differs.
		wire, mistralWire string
	}{
		{llm.ToolChoice{Mode: "auto"}, llm.ToolChoice{Mode: "auto"}, `"auto"`, `"auto"`},
		{llm.ToolChoice{Mode: "none"}, llm.ToolChoice{Mode: "none"}, `"none"`, `"none"`},
		{llm.ToolChoice{Mode: "required"}, llm.ToolChoice{Mode: "required"}, `"required"`, `"any"`},
		{llm.ToolChoice{Mode: "tool", Name: "end_call"}, llm.ToolChoice{Mode: "tool", Name: "end_call"},
			`{"function":{"name":"end_call"},"type":"function"}`, `{"function":{"name":"end_call"},"type":"function"}`},
	}
	eachProvider(t, openAIProviders, func(t *testing.T, p string) {
		s, c := standIn(t, p)
		for _, tc := range cases {
			s.Queue(llmtest.Calls(llm.ToolCall{Name: "end_call", Arguments: "{}"}))
			_, err := c.Complete(context.Background(), llm.Request{
				Messages:   []llm.Message{{Role: llm.RoleUser, Content: "bye"}},
				Tools:      []llm.Tool{bookTable, endCall},
				ToolChoice: tc.choice,
			}, nil)
			if err != nil {
				t.Fatalf("%+v: %v", tc.choice, err)
			}
			req := s.Last()
			var body struct {
				ToolChoice json.RawMessage `json:"tool_choice"`
			}
			json.Unmarshal(req.Body, &body)
			want := tc.wire
			if p == data.LLMMistral {
				want = tc.mistralWire
			}
			if req.ToolChoice != tc.want || string(body.ToolChoice) != want {
				t.Errorf("%+v: sent %s (read as %+v), want %s", tc.choice, body.ToolChoice, req.ToolChoice, want)
			}
		}
	})
}

// TestNoToolChoiceWithoutTools: a tool choice with no tools is left out; the providers
// refuse tool_choice alone.
func TestNoToolChoiceWithoutTools(t *testing.T) {
	s, c := standIn(t, data.LLMGroq)
	s.Queue(llmtest.Text("ok"))
	if _, err := c.Complete(context.Background(), llm.Request{
		Messages:   []llm.Message{{Role: llm.RoleUser, Content: "hi"}},
		ToolChoice: llm.ToolChoice{Mode: "required"},
	}, nil); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(s.Last().Body), "tool_choice") {
		t.Errorf("body %s", s.Last().Body)
	}
}

func TestOnTextErrorStopsTheStream(t *testing.T) {
	eachProvider(t, allProviders, func(t *testing.T, p string) {
		s, c := standIn(t, p)
		s.Queue(llmtest.Text("one two three four"))
		stop := errors.New("the caller hung up")
		n := 0
		_, err := c.Complete(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}, func(string) error {
			n++
			return stop
		})
		if err != stop || n != 1 {
			t.Errorf("err %v after %d deltas, want onText's own error after the first", err, n)
		}
	})
}

// TestInternalWithoutKey: internal's api_key is optional; without one no Authorization
// header goes out (the stand-in refuses one it was not given).
func TestInternalWithoutKey(t *testing.T) {
	s, c := standIn(t, data.LLMInternal)
	s.Queue(llmtest.Text("ok"))
	if _, err := c.Complete(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}, nil); err != nil {
		t.Fatal(err)
	}
	if h := s.Last().Header.Get("Authorization"); h != "" {
		t.Errorf("Authorization %q", h)
	}

	keyed, kc := standIn(t, data.LLMInternal, llmtest.WithAPIKey("vllm-secret-token"))
	keyed.Queue(llmtest.Text("ok"))
	if _, err := kc.Complete(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}, nil); err != nil {
		t.Fatal(err)
	}
	if h := keyed.Last().Header.Get("Authorization"); h != "Bearer vllm-secret-token" {
		t.Errorf("Authorization %q", h)
	}
}

// TestStreamsBackToBack: a provider that answers at once (a stand-in, a gateway on the
// same host) streams hundreds of replies in a row on one client without one cut. The AWS
// SDK closes the request body as soon as the answer starts, which made net/http close
// the connection under Bedrock's stream now and then, until the adapter gave the
// transport a body of its own.
func TestStreamsBackToBack(t *testing.T) {
	eachProvider(t, allProviders, func(t *testing.T, p string) {
		s, c := standIn(t, p)
		s.Respond(func(llmtest.Request) llmtest.Reply {
			return llmtest.Reply{Text: "You're booked for two at seven. Goodbye!", ToolCalls: []llm.ToolCall{{Name: "end_call", Arguments: "{}"}}}
		})
		n := 50
		if p == data.LLMBedrockClaude {
			n = 300 // the cut came about once in a hundred completions
		}
		for i := range n {
			if _, err := c.Complete(context.Background(), llm.Request{Messages: hi, Tools: []llm.Tool{endCall}}, collect(new([]string))); err != nil {
				t.Fatalf("completion %d: %v", i, err)
			}
		}
	})
}
