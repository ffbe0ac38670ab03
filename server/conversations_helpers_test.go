package server_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/bolt"
	"github.com/voiceapi/voiceapi/cli"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/llmtest"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/service"
)

// convEnv is a server whose conversations reach a language model stand-in (the
// internal, OpenAI-compatible protocol) through the SSRF guard, with the stand-in's
// prefix allowed as an operator would allow Ollama's; tok is the owner's token.
type convEnv struct {
	*testkit.Server
	tok   string
	stand *llmtest.Server
}

// newConvEnv starts a stand-in and a server; tune adjusts the database options (a clock),
// settings the language model settings (the stand-in's are added).
func newConvEnv(t *testing.T, tune func(*bolt.Options), settings ...func(*cli.LLMSettings)) *convEnv {
	t.Helper()
	return newConvEnvWith(t, tune, nil, settings...)
}

// newConvEnvWith is newConvEnv with the stand-in's options (the key it expects).
func newConvEnvWith(t *testing.T, tune func(*bolt.Options), standOpts []llmtest.Option, settings ...func(*cli.LLMSettings)) *convEnv {
	t.Helper()
	stand := llmtest.New(t, data.LLMInternal, standOpts...)
	ls := cli.LLMSettings{BaseURLs: stand.Options().BaseURLs, AllowURLPrefixes: []string{stand.URL + "/"}}
	for _, f := range settings {
		f(&ls)
	}
	s := testkit.NewServerWith(t, tune, func(svc *service.Services) { svc.Conversations.Configure(cli.ConversationOptions(ls)) })
	return &convEnv{Server: s, tok: s.Owner.Token, stand: stand}
}

// llmConfig is an llm_config pointed at the stand-in, with extra members.
func (e *convEnv) llmConfig(extra map[string]any) map[string]any {
	raw, _ := json.Marshal(e.stand.LLMConfig())
	var m map[string]any
	json.Unmarshal(raw, &m)
	for k, v := range extra {
		m[k] = v
	}
	return m
}

// createAgent creates an agent from body and returns its id.
func (e *convEnv) createAgent(t *testing.T, body map[string]any) string {
	t.Helper()
	if _, ok := body["llm_config"]; !ok {
		body["llm_config"] = e.llmConfig(nil)
	}
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
	resp := postStream(t, baseURL, path, token, body)
	defer resp.Body.Close()
	var frames []sseFrame
	raw := readFrames(t, resp.Body, func(f sseFrame) { frames = append(frames, f) })
	return resp, frames, raw
}

// postStream posts a message with Accept: text/event-stream and headers (name, value
// pairs); the caller reads and closes the body.
func postStream(t *testing.T, baseURL, path, token string, body any, headers ...string) *http.Response {
	t.Helper()
	raw, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", baseURL+path, bytes.NewReader(raw))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// readFrames reads Server-Sent Events from r to its end, handing each frame to each as
// it arrives, and returns the lines read.
func readFrames(t *testing.T, r io.Reader, each func(sseFrame)) []byte {
	t.Helper()
	var all bytes.Buffer
	sc := bufio.NewScanner(r)
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
				t.Errorf("frame data is not JSON: %q", line)
				return all.Bytes()
			}
		case line == "" && cur.Event != "":
			each(cur)
			cur = sseFrame{}
		}
	}
	return all.Bytes()
}

// structToMap encodes v and decodes it as a JSON object.
func structToMap(v any) (map[string]any, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	return m, json.Unmarshal(raw, &m)
}
