package llm_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/llmtest"
	"github.com/voiceapi/voiceapi/llm"
)

// recordingTransport answers every request with a fixed completion and keeps the request:
// it shows where a client would go without going there.
type recordingTransport struct{ got []*http.Request }

func (r *recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	r.got = append(r.got, req)
	body := `{"id":"x","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(strings.NewReader(body)), Request: req}, nil
}

// TestDefaultEndpoints: without an override, Groq and Mistral are reached at their public
// API roots, with the agent's key as a Bearer token.
func TestDefaultEndpoints(t *testing.T) {
	for provider, want := range map[string]string{
		data.LLMGroq:    "https://api.groq.com/openai/v1/chat/completions",
		data.LLMMistral: "https://api.mistral.ai/v1/chat/completions",
	} {
		rt := &recordingTransport{}
		c, err := llm.New(llm.Config{Provider: provider, Model: "m", APIKey: "k-123"}, llm.Options{HTTPClient: &http.Client{Transport: rt}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Complete(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}, nil); err != nil {
			t.Fatal(err)
		}
		if len(rt.got) != 1 || rt.got[0].URL.String() != want || rt.got[0].Header.Get("Authorization") != "Bearer k-123" {
			t.Errorf("%s: went to %v", provider, rt.got)
		}
	}
}

// TestEnvironmentIgnored: the OpenAI SDK's environment variables (OPENAI_BASE_URL,
// OPENAI_API_KEY) do not redirect or authenticate an agent's requests.
func TestEnvironmentIgnored(t *testing.T) {
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
	t.Setenv("OPENAI_API_KEY", "env-key-should-not-be-sent")
	s, c := standIn(t, data.LLMInternal)
	s.Queue(llmtest.Text("ok"))
	if _, err := c.Complete(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}, nil); err != nil {
		t.Fatal(err)
	}
	if h := s.Last().Header.Get("Authorization"); h != "" {
		t.Errorf("Authorization %q", h)
	}
}

// TestBaseURLOverride: --llm-base-url replaces a provider's root, internal's base_url and
// azure's endpoint included.
func TestBaseURLOverride(t *testing.T) {
	for _, p := range openAIProviders {
		s := llmtest.New(t, p)
		cfg := s.Config()
		// Where nothing listens: the override must replace them.
		if cfg.BaseURL != "" {
			cfg.BaseURL = "http://127.0.0.1:1/v1"
		}
		if cfg.Endpoint != "" {
			cfg.Endpoint = "http://127.0.0.1:1"
		}
		opts := s.Options()
		opts.BaseURLs = map[string]string{p: s.BaseURL() + "/"}
		c, err := llm.New(cfg, opts)
		if err != nil {
			t.Fatal(err)
		}
		s.Queue(llmtest.Text("ok"))
		if _, err := c.Complete(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}, nil); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
}

func TestConfigErrors(t *testing.T) {
	cases := []struct {
		name string
		cfg  llm.Config
		opts llm.Options
		says string
	}{
		{"unknown provider", llm.Config{Provider: "openai", Model: "gpt-4o"}, llm.Options{}, "unknown"},
		{"internal without base_url", llm.Config{Provider: data.LLMInternal, Model: "m"}, llm.Options{}, "base URL"},
		{"internal without model", llm.Config{Provider: data.LLMInternal, BaseURL: "http://h/v1"}, llm.Options{}, "llm_config.model"},
		{"base_url not http", llm.Config{Provider: data.LLMInternal, Model: "m", BaseURL: "ftp://h/v1"}, llm.Options{}, "not an http"},
		{"groq without model", llm.Config{Provider: data.LLMGroq}, llm.Options{}, "llm_config.model"},
		{"override not a URL", llm.Config{Provider: data.LLMGroq, Model: "m"}, llm.Options{BaseURLs: map[string]string{data.LLMGroq: "::"}}, "not an http"},
		{"azure without deployment", llm.Config{Provider: data.LLMAzure, Endpoint: "https://r.openai.azure.com", APIVersion: "2024-10-21"}, llm.Options{}, "llm_config.deployment"},
		{"azure without api_version", llm.Config{Provider: data.LLMAzure, Endpoint: "https://r.openai.azure.com", Deployment: "d"}, llm.Options{}, "llm_config.api_version"},
		{"azure without endpoint", llm.Config{Provider: data.LLMAzure, Deployment: "d", APIVersion: "v"}, llm.Options{}, "llm_config.endpoint"},
	}
	for _, tc := range cases {
		_, err := llm.New(tc.cfg, tc.opts)
		var e *llm.Error
		if !errors.As(err, &e) || e.Provider != tc.cfg.Provider || !strings.Contains(e.Message, tc.says) || data.ErrorCode(err) != data.EPROVIDER {
			t.Errorf("%s: %v, want an *llm.Error saying %q", tc.name, err, tc.says)
		}
	}
}

// TestUnknownRoleRefused: a message of no known role is refused before anything is sent.
func TestUnknownRoleRefused(t *testing.T) {
	s, c := standIn(t, data.LLMGroq)
	_, err := c.Complete(context.Background(), llm.Request{Messages: []llm.Message{{Role: "narrator", Content: "x"}}}, nil)
	var e *llm.Error
	if !errors.As(err, &e) || len(s.Requests()) != 0 {
		t.Errorf("err %v, %d requests", err, len(s.Requests()))
	}
}

func TestConfigOf(t *testing.T) {
	key := "azure-key"
	got := llm.ConfigOf(data.LLMConfig{Provider: data.LLMAzure, Deployment: "d", Endpoint: "https://e", APIVersion: "v", APIKey: &key})
	want := llm.Config{Provider: data.LLMAzure, Deployment: "d", Endpoint: "https://e", APIVersion: "v", APIKey: "azure-key"}
	if got != want {
		t.Errorf("%+v", got)
	}
	if c := llm.ConfigOf(data.LLMConfig{Provider: data.LLMInternal}); c.APIKey != "" {
		t.Errorf("%+v", c)
	}
}
