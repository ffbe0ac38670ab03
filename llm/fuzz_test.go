package llm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/llmtest"
	"github.com/voiceapi/voiceapi/llm"
)

// cannedTransport answers every request with the same status, media type and body.
type cannedTransport struct {
	status      int
	contentType string
	body        []byte
}

func (c cannedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: c.status, Header: http.Header{"Content-Type": {c.contentType}},
		Body: io.NopCloser(bytes.NewReader(c.body)), Request: req}, nil
}

// FuzzAnswers: whatever bytes a provider answers, as a whole JSON answer, a stream of
// server-sent events or Bedrock's event stream, with any status, an adapter returns a
// reply or an *llm.Error: never a panic, never another error.
func FuzzAnswers(f *testing.F) {
	f.Add(uint8(0), []byte(`{"id":"x","choices":[{"index":0,"message":{"role":"assistant","content":"hi","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":1,"completion_tokens":1}}`))
	f.Add(uint8(1), []byte("data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c\",\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"a\"}}]}}]}\n\ndata: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"x_groq\":{\"usage\":{\"prompt_tokens\":3}}}\n\ndata: [DONE]\n\n"))
	f.Add(uint8(2), []byte(`{"output":{"message":{"role":"assistant","content":[{"text":"hi"},{"toolUse":{"toolUseId":"t","name":"f","input":{"a":1}}}]}},"stopReason":"tool_use","usage":{"inputTokens":1,"outputTokens":2}}`))
	f.Add(uint8(3), bedrockEvents(f, []string{"messageStart", `{"role":"assistant"}`},
		[]string{"contentBlockStart", `{"contentBlockIndex":0,"start":{"toolUse":{"toolUseId":"t","name":"f"}}}`},
		[]string{"contentBlockDelta", `{"contentBlockIndex":0,"delta":{"toolUse":{"input":"{\"a\":1}"}}}`},
		[]string{"messageStop", `{"stopReason":"tool_use"}`}, []string{"metadata", `{"usage":{"inputTokens":1,"outputTokens":1}}`}))
	f.Add(uint8(4), []byte(`{"error":{"message":"sk-secret-key-000000 is wrong"}}`))
	f.Fuzz(func(t *testing.T, kind uint8, body []byte) {
		statuses := []int{200, 200, 200, 200, 401, 429, 500, 502}
		answer := cannedTransport{status: statuses[int(kind>>2)%len(statuses)], body: body}
		provider, stream := data.LLMGroq, kind&1 == 1
		answer.contentType = map[bool]string{false: "application/json", true: "text/event-stream"}[stream]
		if kind&2 == 2 {
			provider = data.LLMBedrockClaude
			if stream {
				answer.contentType = "application/vnd.amazon.eventstream"
			}
		}
		cfg := llm.Config{Provider: provider, Model: "m", Region: "us-east-1", APIKey: "sk-secret-key-000000"}
		if provider == data.LLMBedrockClaude {
			cfg.APIKey = llmtest.DefaultAccessKey + ":sk-secret-key-000000"
		}
		c, err := llm.New(cfg, llm.Options{HTTPClient: &http.Client{Transport: answer}})
		if err != nil {
			t.Fatal(err)
		}
		var onText func(string) error
		if stream {
			onText = func(string) error { return nil }
		}
		reply, err := c.Complete(context.Background(), llm.Request{Messages: hi, Tools: []llm.Tool{endCall}}, onText)
		var e *llm.Error
		switch {
		case err == nil && reply == nil:
			t.Fatal("no reply and no error")
		case err != nil && !errors.As(err, &e):
			t.Fatalf("%T %v, want *llm.Error", err, err)
		case err != nil && bytes.Contains([]byte(err.Error()), []byte("sk-secret-key-000000")):
			t.Fatalf("the key in %q", err)
		}
		if err == nil && answer.status != 200 {
			t.Fatalf("status %d gave a reply", answer.status)
		}
		for _, call := range replyCalls(reply) {
			if call.ID == "" {
				t.Fatalf("a call without an id: %+v", call)
			}
		}
	})
}

func replyCalls(r *llm.Reply) []llm.ToolCall {
	if r == nil {
		return nil
	}
	return r.ToolCalls
}

// bedrockEvents encodes events (type, JSON payload) in the event stream framing.
func bedrockEvents(f *testing.F, events ...[]string) []byte {
	var buf bytes.Buffer
	enc := eventstream.NewEncoder()
	for _, e := range events {
		if !json.Valid([]byte(e[1])) {
			f.Fatalf("seed payload %s", e[1])
		}
		msg := eventstream.Message{Payload: []byte(e[1])}
		msg.Headers.Set(":event-type", eventstream.StringValue(e[0]))
		msg.Headers.Set(":content-type", eventstream.StringValue("application/json"))
		msg.Headers.Set(":message-type", eventstream.StringValue("event"))
		if err := enc.Encode(&buf, msg); err != nil {
			f.Fatal(err)
		}
	}
	return buf.Bytes()
}
