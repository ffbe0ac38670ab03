package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/llmtest"
	"github.com/voiceapi/voiceapi/llm"
)

var hi = []llm.Message{{Role: llm.RoleUser, Content: "hi"}}

// TestBedrockSignature: every request is SigV4-signed for bedrock in the agent's region
// with its access key; the stand-in signs each received request again with the SDK's
// signer and compares. A secret, key or region the stand-in does not hold is refused as
// AWS refuses it.
func TestBedrockSignature(t *testing.T) {
	s, c := standIn(t, data.LLMBedrockClaude, llmtest.WithRegion("eu-central-1"))
	s.Queue(llmtest.Text("ok"), llmtest.Text("ok streamed"))
	if _, err := c.Complete(context.Background(), llm.Request{Messages: hi}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Complete(context.Background(), llm.Request{Messages: hi}, collect(new([]string))); err != nil {
		t.Fatal(err)
	}
	for _, r := range s.Requests() {
		auth := r.Header.Get("Authorization")
		if !strings.HasPrefix(auth, "AWS4-HMAC-SHA256 Credential="+llmtest.DefaultAccessKey+"/") || !strings.Contains(auth, "/eu-central-1/bedrock/aws4_request") {
			t.Errorf("%s: Authorization %q", r.Path, auth)
		}
	}

	cases := []struct {
		name, key string
		kind      string
	}{
		{"another secret", llmtest.DefaultAccessKey + ":wJalrXUtnFEMI/K7MDENG/bPxRfiCYOTHERKEY", "InvalidSignatureException"},
		{"another key", "AKIAOTHERKEY00000000:" + llmtest.DefaultSecretKey, "UnrecognizedClientException"},
	}
	for _, tc := range cases {
		cfg := s.Config()
		cfg.APIKey = tc.key
		bad, err := llm.New(cfg, s.Options())
		if err != nil {
			t.Fatal(err)
		}
		_, err = bad.Complete(context.Background(), llm.Request{Messages: hi}, nil)
		var e *llm.Error
		if !errors.As(err, &e) || e.Status != 403 || e.Retryable || !strings.Contains(e.Message, tc.kind) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}

}

// TestBedrockSessionToken: temporary credentials (ACCESS_KEY_ID:SECRET:SESSION_TOKEN)
// carry their session token, signed.
func TestBedrockSessionToken(t *testing.T) {
	const token = "FwoGZXIvYXdzEXAMPLETOKEN"
	s := llmtest.New(t, data.LLMBedrockClaude, llmtest.WithSessionToken(token))
	cfg := s.Config()
	cfg.APIKey += ":" + token
	c, err := llm.New(cfg, s.Options())
	if err != nil {
		t.Fatal(err)
	}
	s.Queue(llmtest.Text("ok"))
	if _, err := c.Complete(context.Background(), llm.Request{Messages: hi}, nil); err != nil {
		t.Fatal(err)
	}
	r := s.Last()
	if r.Header.Get("X-Amz-Security-Token") != token || !strings.Contains(r.Header.Get("Authorization"), "x-amz-security-token") {
		t.Errorf("headers %v", r.Header)
	}
}

// TestBedrockOperatorCredentials: an agent without an api_key is signed with the
// operator's credentials (Options.AWSCredentials, else the standard chain).
func TestBedrockOperatorCredentials(t *testing.T) {
	s := llmtest.New(t, data.LLMBedrockClaude)
	cfg := s.Config()
	cfg.APIKey = ""
	opts := s.Options()
	opts.AWSCredentials = credentials.NewStaticCredentialsProvider(llmtest.DefaultAccessKey, llmtest.DefaultSecretKey, "")
	c, err := llm.New(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	s.Queue(llmtest.Text("ok"))
	if _, err := c.Complete(context.Background(), llm.Request{Messages: hi}, nil); err != nil {
		t.Fatal(err)
	}
}

// TestBedrockCredentialChain: without an api_key or an operator's provider, the standard
// chain is used; here its environment variables (no file, no instance metadata).
func TestBedrockCredentialChain(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", llmtest.DefaultAccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", llmtest.DefaultSecretKey)
	t.Setenv("AWS_SESSION_TOKEN", "")
	t.Setenv("AWS_CONFIG_FILE", t.TempDir()+"/none")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", t.TempDir()+"/none")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	t.Setenv("AWS_PROFILE", "")
	s := llmtest.New(t, data.LLMBedrockClaude)
	cfg := s.Config()
	cfg.APIKey = ""
	c, err := llm.New(cfg, s.Options())
	if err != nil {
		t.Fatal(err)
	}
	s.Queue(llmtest.Fail(403, "User: arn:aws:iam::123456789012:user/voice is not authorized, key "+llmtest.DefaultSecretKey))
	_, err = c.Complete(context.Background(), llm.Request{Messages: hi}, nil)
	var e *llm.Error
	if !errors.As(err, &e) || e.Status != 403 || strings.Contains(err.Error(), llmtest.DefaultSecretKey) {
		t.Errorf("err %v: want the chain's signed request refused, its secret scrubbed", err)
	}
	if !strings.Contains(s.Last().Header.Get("Authorization"), llmtest.DefaultAccessKey) {
		t.Errorf("Authorization %q", s.Last().Header.Get("Authorization"))
	}
}

// TestBedrockBearerTokenEnvironmentIgnored: AWS_BEARER_TOKEN_BEDROCK in the server's
// environment does not replace the agent's signature.
func TestBedrockBearerTokenEnvironmentIgnored(t *testing.T) {
	t.Setenv("AWS_BEARER_TOKEN_BEDROCK", "ABSKbearer-token-of-the-host")
	s, c := standIn(t, data.LLMBedrockClaude)
	s.Queue(llmtest.Text("ok"))
	if _, err := c.Complete(context.Background(), llm.Request{Messages: hi}, nil); err != nil {
		t.Fatal(err)
	}
}

// TestBedrockTurns: Converse's turns: the agent's opening gets a user turn before it,
// consecutive tool results and the user's next words are one user turn, a tool's failure
// is a result of status error, an empty result is not blank text.
func TestBedrockTurns(t *testing.T) {
	s, c := standIn(t, data.LLMBedrockClaude)
	s.Queue(llmtest.Text("ok"))
	_, err := c.Complete(context.Background(), llm.Request{
		System: "You are Léa's front desk.",
		Messages: []llm.Message{
			{Role: llm.RoleAssistant, Content: "Welcome to Chez Léa, how can I help?"},
			{Role: llm.RoleUser, Content: "Two tables please"},
			{Role: llm.RoleAssistant, Content: "Booking both.", ToolCalls: []llm.ToolCall{
				{ID: "tooluse_a", Name: "book_table", Arguments: `{"people":2,"time":"19:00"}`},
				{ID: "tooluse_b", Name: "book_table", Arguments: `{"people":4`}, // broken by the model
			}},
			{Role: llm.RoleTool, ToolCallID: "tooluse_a", Content: ""},
			{Role: llm.RoleTool, ToolCallID: "tooluse_b", Content: "arguments are not valid JSON", ToolError: true},
			{Role: llm.RoleUser, Content: "Thanks"},
		},
		Tools: []llm.Tool{bookTable},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var body struct {
		Messages []struct {
			Role    string           `json:"role"`
			Content []map[string]any `json:"content"`
		} `json:"messages"`
	}
	r := s.Last()
	json.Unmarshal(r.Body, &body)
	roles := ""
	for _, m := range body.Messages {
		roles += m.Role[:1]
	}
	if roles != "uauau" || len(body.Messages[4].Content) != 3 {
		t.Fatalf("turns %s: %s", roles, r.Body)
	}
	if first := body.Messages[0].Content[0]["text"]; first == "" {
		t.Errorf("opening %v", first)
	}
	res := r.ToolResults()
	if len(r.Messages) < 2 || r.Messages[len(r.Messages)-1].Content != "Thanks" {
		t.Errorf("messages %+v", r.Messages)
	}
	tools := []llm.Message{}
	for _, m := range r.Messages {
		if m.Role == llm.RoleTool {
			tools = append(tools, m)
		}
	}
	if len(tools) != 2 || tools[0].Content == "" || tools[0].ToolError || !tools[1].ToolError || res != nil {
		t.Errorf("tool results %+v", tools)
	}
	if r.System != "You are Léa's front desk." {
		t.Errorf("system %q", r.System)
	}
}

// TestBedrockOnlySystem: a request with no messages (the agent opening a conversation)
// still sends Converse a user turn first.
func TestBedrockOnlySystem(t *testing.T) {
	s, c := standIn(t, data.LLMBedrockClaude)
	s.Queue(llmtest.Text("Welcome!"))
	reply, err := c.Complete(context.Background(), llm.Request{System: "Greet the caller."}, nil)
	if err != nil || reply.Text != "Welcome!" {
		t.Fatalf("%v %+v", err, reply)
	}
	if m := s.Last().Messages; len(m) != 1 || m[0].Role != llm.RoleUser {
		t.Errorf("messages %+v", m)
	}
}

func TestBedrockToolChoice(t *testing.T) {
	s, c := standIn(t, data.LLMBedrockClaude)
	withCall := []llm.Message{
		{Role: llm.RoleUser, Content: "bye"},
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "tooluse_x", Name: "end_call", Arguments: "{}"}}},
		{Role: llm.RoleTool, ToolCallID: "tooluse_x", Content: "ended"},
	}
	cases := []struct {
		choice   llm.ToolChoice
		messages []llm.Message
		want     string // toolChoice as the body carries it; "" for no toolConfig
	}{
		{llm.ToolChoice{}, hi, ""}, // toolConfig without toolChoice: Converse's default, auto
		{llm.ToolChoice{Mode: "auto"}, hi, `{"auto":{}}`},
		{llm.ToolChoice{Mode: "required"}, hi, `{"any":{}}`},
		{llm.ToolChoice{Mode: "tool", Name: "end_call"}, hi, `{"tool":{"name":"end_call"}}`},
		{llm.ToolChoice{Mode: "none"}, hi, ""},
		{llm.ToolChoice{Mode: "none"}, withCall, `{"auto":{}}`},
	}
	for _, tc := range cases {
		s.Queue(llmtest.Text("ok"))
		if _, err := c.Complete(context.Background(), llm.Request{Messages: tc.messages, Tools: []llm.Tool{bookTable, endCall}, ToolChoice: tc.choice}, nil); err != nil {
			t.Fatalf("%+v: %v", tc.choice, err)
		}
		var body struct {
			ToolConfig *struct {
				ToolChoice json.RawMessage `json:"toolChoice"`
			} `json:"toolConfig"`
		}
		json.Unmarshal(s.Last().Body, &body)
		got := ""
		if body.ToolConfig != nil {
			got = string(body.ToolConfig.ToolChoice)
		}
		if got != tc.want {
			t.Errorf("%+v with %d messages: toolChoice %s, want %s", tc.choice, len(tc.messages), got, tc.want)
		}
	}
}

// TestBedrockDefaultEndpoint: without an override, Bedrock is reached at its regional
// runtime endpoint, the model id escaped in the path.
func TestBedrockDefaultEndpoint(t *testing.T) {
	rt := &bedrockRecorder{}
	c, err := llm.New(llm.Config{Provider: data.LLMBedrockClaude, Model: "us.anthropic.claude-sonnet-4-5-20250929-v1:0", Region: "eu-west-3",
		APIKey: llmtest.DefaultAccessKey + ":" + llmtest.DefaultSecretKey}, llm.Options{HTTPClient: &http.Client{Transport: rt}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Complete(context.Background(), llm.Request{Messages: hi}, nil); err != nil {
		t.Fatal(err)
	}
	want := "https://bedrock-runtime.eu-west-3.amazonaws.com/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse"
	if len(rt.got) != 1 || rt.got[0] != want {
		t.Errorf("went to %v, want %s", rt.got, want)
	}
}

type bedrockRecorder struct{ got []string }

func (r *bedrockRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	r.got = append(r.got, req.URL.String())
	body := `{"output":{"message":{"role":"assistant","content":[{"text":"ok"}]}},"stopReason":"end_turn","usage":{"inputTokens":1,"outputTokens":1,"totalTokens":2},"metrics":{"latencyMs":1}}`
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(strings.NewReader(body)), Request: req}, nil
}

func TestBedrockConfigErrors(t *testing.T) {
	for _, cfg := range []llm.Config{
		{Provider: data.LLMBedrockClaude, Model: "m"},
		{Provider: data.LLMBedrockClaude, Region: "us-east-1"},
		{Provider: data.LLMBedrockClaude, Model: "m", Region: "us-east-1", APIKey: "no-colon"},
		{Provider: data.LLMBedrockClaude, Model: "m", Region: "us-east-1", APIKey: ":secret"},
	} {
		_, err := llm.New(cfg, llm.Options{AWSCredentials: aws.AnonymousCredentials{}})
		var e *llm.Error
		if !errors.As(err, &e) || strings.Contains(e.Message, "secret") {
			t.Errorf("%+v: %v", cfg, err)
		}
	}
}
