package llm_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/llmtest"
	"github.com/voiceapi/voiceapi/llm"
)

// allProviders are the providers every adapter test runs against.
var allProviders = append(openAIProviders[:len(openAIProviders):len(openAIProviders)], data.LLMBedrockClaude)

// failureCase is one way a provider fails and the *llm.Error it must become.
type failureCase struct {
	name      string
	reply     llmtest.Reply
	stream    bool
	status    int
	retryable bool
	timeout   bool
	// says is a piece of the message the error must carry.
	says string
}

var failureCases = []failureCase{
	{name: "401", reply: llmtest.Fail(401, "Invalid authentication credentials"), status: 401, says: "Invalid authentication"},
	{name: "401 streamed", reply: llmtest.Fail(401, "Invalid authentication credentials"), stream: true, status: 401, says: "Invalid authentication"},
	{name: "403", reply: llmtest.Fail(403, "Project does not have access to model"), status: 403, says: "does not have access"},
	{name: "404", reply: llmtest.Fail(404, "The model does not exist"), status: 404, says: "does not exist"},
	{name: "408", reply: llmtest.Fail(408, "Request timed out"), status: 408, retryable: true, says: "timed out"},
	{name: "429", reply: llmtest.Fail(429, "Rate limit reached for requests"), status: 429, retryable: true, says: "Rate limit"},
	{name: "500", reply: llmtest.Fail(500, "The server had an error"), status: 500, retryable: true, says: "server had an error"},
	{name: "503", reply: llmtest.Fail(503, "The engine is currently overloaded"), status: 503, retryable: true, says: "overloaded"},
	{name: "503 streamed", reply: llmtest.Fail(503, "The engine is currently overloaded"), stream: true, status: 503, retryable: true, says: "overloaded"},
	{name: "html 502", reply: llmtest.Raw(502, "text/html", "<html><body>Bad Gateway</body></html>"), status: 502, retryable: true, says: "Bad Gateway"},
	{name: "malformed", reply: llmtest.Malformed(), says: "could not be read"},
	{name: "malformed streamed", reply: llmtest.Malformed(), stream: true, says: "could not be read"},
	{name: "cut", reply: llmtest.Cut(llmtest.Text("a reply that will not arrive whole")), retryable: true, says: "cut"},
	{name: "cut streamed", reply: llmtest.Cut(llmtest.Text("a reply that will not arrive whole")), stream: true, retryable: true, says: "cut"},
	{name: "error mid-stream", reply: llmtest.FailMidStream(503, "The model is overloaded"), stream: true, retryable: true, says: "overloaded"},
	{name: "no answer", reply: llmtest.Hang(), timeout: true, retryable: true, says: "in time"},
	{name: "no answer streamed", reply: llmtest.Hang(), stream: true, timeout: true, retryable: true, says: "in time"},
}

func TestFailures(t *testing.T) {
	eachProvider(t, allProviders, func(t *testing.T, p string) {
		s := llmtest.New(t, p)
		opts := s.Options()
		opts.Timeout = 200 * time.Millisecond // the hanging cases' bound; the others answer at once
		c, err := llm.New(s.Config(), opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range failureCases {
			s.Queue(tc.reply)
			var onText func(string) error
			if tc.stream {
				onText = collect(new([]string))
			}
			_, err := c.Complete(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}, onText)
			checkFailure(t, tc, p, err)
		}
	})
}

// checkFailure checks err is the *llm.Error tc describes, and reaches a client as 502
// provider_error or 504 provider_timeout.
func checkFailure(t *testing.T, tc failureCase, provider string, err error) {
	t.Helper()
	var e *llm.Error
	if !errors.As(err, &e) {
		t.Errorf("%s: %T %v, want *llm.Error", tc.name, err, err)
		return
	}
	if e.Provider != provider || e.Status != tc.status || e.Retryable != tc.retryable || e.Timeout != tc.timeout {
		t.Errorf("%s: %+v, want status %d retryable %v timeout %v", tc.name, e, tc.status, tc.retryable, tc.timeout)
	}
	if !strings.Contains(err.Error(), tc.says) || !strings.Contains(err.Error(), provider) {
		t.Errorf("%s: %q should name %s and say %q", tc.name, err, provider, tc.says)
	}
	wantCode := data.EPROVIDER
	if tc.timeout {
		wantCode = data.EPROVIDERTIMEOUT
	}
	if code := data.ErrorCode(err); code != wantCode {
		t.Errorf("%s: code %q, want %q", tc.name, code, wantCode)
	}
	if msg := data.ErrorMessage(err); !strings.Contains(msg, provider) {
		t.Errorf("%s: client message %q does not name %s", tc.name, msg, provider)
	}
}

// TestWrongKey: a key the provider does not accept is its 401, in each provider's error
// shape, read into a message that names the failure.
func TestWrongKey(t *testing.T) {
	eachProvider(t, []string{data.LLMGroq, data.LLMMistral, data.LLMAzure, data.LLMBedrockClaude}, func(t *testing.T, p string) {
		s := llmtest.New(t, p)
		cfg := s.Config()
		cfg.APIKey = "not-the-key-0000000000"
		status := 401
		if p == data.LLMBedrockClaude {
			cfg.APIKey = llmtest.DefaultAccessKey + ":not-the-secret-000000000"
			status = 403
		}
		c, err := llm.New(cfg, s.Options())
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Complete(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}, nil)
		says := map[string]string{data.LLMGroq: "Invalid API Key", data.LLMMistral: "Unauthorized", data.LLMAzure: "Access denied",
			data.LLMBedrockClaude: "InvalidSignatureException: The request signature we calculated does not match"}[p]
		checkFailure(t, failureCase{name: "wrong key", status: status, says: says}, p, err)
	})
}

// TestNoCredentialInErrors: providers echo keys in error bodies, whole or masked in the
// middle; neither reaches the error, its client message, or its log line.
func TestNoCredentialInErrors(t *testing.T) {
	eachProvider(t, allProviders, func(t *testing.T, p string) {
		const key = "sk-proj-Zq8RmT4vXw2Ny7Lp0Kd3"
		apiKey := key
		if p == data.LLMBedrockClaude { // the secret access key is what must not show
			apiKey = "AKIAEXAMPLE0000:" + key
		}
		s := llmtest.New(t, p, llmtest.WithAPIKey(apiKey))
		c, err := llm.New(s.Config(), s.Options())
		if err != nil {
			t.Fatal(err)
		}
		for _, echo := range []string{
			"Incorrect API key provided: " + key + ". You can find your API key in your account.",
			"Incorrect API key provided: sk-proj-****************Kd3. Check it.",
			"Incorrect API key provided: sk-p************Kd3.",
			`{"key":"` + key[8:20] + `"} rejected`,
		} {
			s.Queue(llmtest.Fail(401, echo))
			_, err := c.Complete(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}, nil)
			if err == nil {
				t.Fatal("no error")
			}
			for _, shown := range []string{err.Error(), data.ErrorMessage(err)} {
				if leaks(shown, key) {
					t.Errorf("%q shows the key", shown)
				}
				if !strings.Contains(shown, "[redacted]") {
					t.Errorf("%q: want the key's place marked", shown)
				}
			}
		}
	})
}

// leaks reports whether s shows six characters of key in a row, or its masked ends.
func leaks(s, key string) bool {
	for i := 0; i+6 <= len(key); i++ {
		if strings.Contains(s, key[i:i+6]) {
			return true
		}
	}
	return strings.Contains(s, "Kd3")
}

// TestCallerCancels: a caller that gives up gets its context's error, not a provider
// failure.
func TestCallerCancels(t *testing.T) {
	s, c := standIn(t, data.LLMGroq)
	ctx, cancel := context.WithCancel(context.Background())
	s.Respond(func(llmtest.Request) llmtest.Reply {
		cancel() // the caller gives up while the provider thinks
		return llmtest.Hang()
	})
	_, err := c.Complete(ctx, llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}, nil)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err %v, want context.Canceled", err)
	}
	var e *llm.Error
	if errors.As(err, &e) {
		t.Errorf("a cancellation reported as the provider's failure: %v", e)
	}
}

// TestCallerDeadline: the caller's own deadline passing is a provider timeout too: the
// provider did not answer in the time there was.
func TestCallerDeadline(t *testing.T) {
	s, c := standIn(t, data.LLMMistral)
	s.Queue(llmtest.Hang())
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := c.Complete(ctx, llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}, nil)
	checkFailure(t, failureCase{name: "deadline", timeout: true, retryable: true, says: "in time"}, data.LLMMistral, err)
}

// TestUnreachable: a provider nobody answers for is a failed request, not worth an
// immediate retry, and not a 500.
func TestUnreachable(t *testing.T) {
	s := llmtest.New(t, data.LLMInternal)
	cfg, opts := s.Config(), s.Options()
	s.Close()
	c, err := llm.New(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Complete(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}, nil)
	var e *llm.Error
	if !errors.As(err, &e) || e.Status != 0 || e.Retryable || !strings.Contains(e.Message, "request failed") {
		t.Errorf("err %#v", err)
	}
	if data.ErrorCode(err) != data.EPROVIDER {
		t.Errorf("code %q", data.ErrorCode(err))
	}
}

// TestClientTimeoutIgnored: the operator's HTTP client may carry a short timeout of its
// own (the webhook client's 10 s); a completion is bounded by Options.Timeout alone.
func TestClientTimeoutIgnored(t *testing.T) {
	s := llmtest.New(t, data.LLMGroq)
	opts := s.Options()
	short := *opts.HTTPClient
	short.Timeout = time.Nanosecond
	opts.HTTPClient = &short
	c, err := llm.New(s.Config(), opts)
	if err != nil {
		t.Fatal(err)
	}
	s.Queue(llmtest.Reply{Text: "slow but fine", Delay: 20 * time.Millisecond})
	if _, err := c.Complete(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}, nil); err != nil {
		t.Fatal(err)
	}
	if short.Timeout != time.Nanosecond {
		t.Error("the operator's client was changed")
	}
}

func TestProviderMessages(t *testing.T) {
	cases := []struct {
		name, body, want string
	}{
		{"openai", `{"error":{"message":"Rate limit reached","type":"requests","param":null,"code":"rate_limit_exceeded"}}`, "Rate limit reached"},
		{"ollama", `{"error":"model \"llama9\" not found, try pulling it first"}`, `model "llama9" not found, try pulling it first`},
		{"mistral 422", `{"object":"error","message":{"detail":[{"type":"extra_forbidden","loc":["body","stream_options"],"msg":"Extra inputs are not permitted"}]},"type":"invalid_request_error","param":null,"code":null}`, "stream_options: Extra inputs are not permitted"},
		{"mistral gateway", `{"message":"Unauthorized","request_id":"abc"}`, "Unauthorized"},
		{"fastapi", `{"detail":"Not Found"}`, "Not Found"},
		{"aws", `{"Message":"User is not authorized"}`, "User is not authorized"},
		{"text", "upstream connect error\nor disconnect", "upstream connect error or disconnect"},
		{"empty", "", "Bad Gateway"},
	}
	for _, tc := range cases {
		s, c := standIn(t, data.LLMInternal)
		s.Queue(llmtest.Raw(502, "application/json", tc.body))
		_, err := c.Complete(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}, nil)
		var e *llm.Error
		if !errors.As(err, &e) || e.Message != tc.want {
			t.Errorf("%s: %v, want message %q", tc.name, err, tc.want)
		}
	}
}

func TestLongMessageClipped(t *testing.T) {
	s, c := standIn(t, data.LLMGroq)
	s.Queue(llmtest.Fail(400, strings.Repeat("very long explanation ", 200)))
	_, err := c.Complete(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}, nil)
	var e *llm.Error
	if !errors.As(err, &e) || len([]rune(e.Message)) > 501 {
		t.Errorf("message of %d characters", len(e.Message))
	}
}
