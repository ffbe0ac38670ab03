package server_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/voiceapi/voiceapi/bolt"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/llm"
	"github.com/voiceapi/voiceapi/service"
)

// convEnv is a server whose conversations talk to model, and the owner's token.
type convEnv struct {
	*testkit.Server
	tok string
}

// newConvEnv starts a server whose conversations use models (how an agent's llm_config
// becomes a client) and functions (custom_function requests); tune adjusts the database
// options (a clock).
func newConvEnv(t *testing.T, tune func(*bolt.Options), opts service.ConversationOptions) *convEnv {
	t.Helper()
	s := testkit.NewServerWith(t, tune, func(svc *service.Services) { svc.Conversations.Configure(opts) })
	return &convEnv{Server: s, tok: s.Owner.Token}
}

// scriptModel is a test double of llm.Client whose answers a function decides; text is
// streamed word by word.
type scriptModel struct {
	mu      sync.Mutex
	reqs    []llm.Request
	respond func(req llm.Request) (*llm.Reply, error)
}

func (m *scriptModel) Provider() string { return data.LLMInternal }

func (m *scriptModel) Complete(ctx context.Context, req llm.Request, onText func(string) error) (*llm.Reply, error) {
	m.mu.Lock()
	m.reqs = append(m.reqs, req)
	respond := m.respond
	m.mu.Unlock()
	r, err := respond(req)
	if err != nil {
		return nil, err
	}
	if onText != nil {
		for _, w := range strings.SplitAfter(r.Text, " ") {
			if w != "" {
				if err := onText(w); err != nil {
					return nil, err
				}
			}
		}
	}
	return r, nil
}

func (m *scriptModel) requests() []llm.Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]llm.Request(nil), m.reqs...)
}

func (m *scriptModel) options() service.ConversationOptions {
	return service.ConversationOptions{Models: func(data.LLMConfig) (llm.Client, error) { return m, nil }}
}

func replyText(s string) *llm.Reply {
	return &llm.Reply{Text: s, StopReason: "stop", Usage: llm.Usage{InputTokens: 12, OutputTokens: 3}}
}

func replyCalls(calls ...llm.ToolCall) *llm.Reply {
	return &llm.Reply{ToolCalls: calls, StopReason: "tool_calls", Usage: llm.Usage{InputTokens: 12, OutputTokens: 3}}
}

func lastUser(req llm.Request) string {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == llm.RoleUser {
			return req.Messages[i].Content
		}
	}
	return ""
}

// lastIsTool reports whether the model is being given tool results.
func lastIsTool(req llm.Request) bool {
	return len(req.Messages) > 0 && req.Messages[len(req.Messages)-1].Role == llm.RoleTool
}

// createAgent creates an agent from body and returns its id.
func (e *convEnv) createAgent(t *testing.T, body map[string]any) string {
	t.Helper()
	r := e.Do("POST", "/api/v1/agents", e.tok, body)
	testkit.Expect(t, r, 201)
	return r.Data()["id"].(string)
}

func (e *convEnv) start(t *testing.T, agentID string, body any, status int) *testkit.Response {
	t.Helper()
	r := e.Do("POST", "/api/v1/agents/"+agentID+"/conversations", e.tok, body)
	testkit.Expect(t, r, status)
	return r
}

// sseFrame is one Server-Sent Event.
type sseFrame struct {
	Event string
	Data  map[string]any
}

// stream posts a message with Accept: text/event-stream and reads every frame.
func stream(t *testing.T, baseURL, path, token string, body any) (*http.Response, []sseFrame, []byte) {
	t.Helper()
	raw, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", baseURL+path, bytes.NewReader(raw))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var all bytes.Buffer
	var frames []sseFrame
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var cur sseFrame
	for sc.Scan() {
		line := sc.Text()
		all.WriteString(line + "\n")
		switch {
		case strings.HasPrefix(line, "event: "):
			cur.Event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &cur.Data); err != nil {
				t.Fatalf("frame data is not JSON: %q", line)
			}
		case line == "" && cur.Event != "":
			frames = append(frames, cur)
			cur = sseFrame{}
		}
	}
	return resp, frames, all.Bytes()
}
