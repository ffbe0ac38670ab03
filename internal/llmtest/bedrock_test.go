package llmtest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/voiceapi/voiceapi/data"
)

// signedRequest is a Converse request signed as the SDK signs one; before changes it
// before signing, after changes it after (a tampered request).
type signedRequest struct {
	path          string
	body          string
	region, akid  string
	secret        string
	when          time.Time
	before, after func(*http.Request)
}

func (sr signedRequest) send(t *testing.T, s *Server) (int, string, http.Header) {
	t.Helper()
	if sr.path == "" {
		sr.path = "/model/" + strings.ReplaceAll(s.Model, ":", "%3A") + "/converse"
	}
	region, akid, secret, when := s.Region, DefaultAccessKey, DefaultSecretKey, time.Now().UTC()
	if sr.region != "" {
		region = sr.region
	}
	if sr.akid != "" {
		akid = sr.akid
	}
	if sr.secret != "" {
		secret = sr.secret
	}
	if !sr.when.IsZero() {
		when = sr.when
	}
	req, err := http.NewRequest(http.MethodPost, s.URL+sr.path, strings.NewReader(sr.body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if sr.before != nil {
		sr.before(req)
	}
	sum := sha256.Sum256([]byte(sr.body))
	creds := aws.Credentials{AccessKeyID: akid, SecretAccessKey: secret}
	if err := v4.NewSigner().SignHTTP(context.Background(), creds, req, hex.EncodeToString(sum[:]), "bedrock", region, when); err != nil {
		t.Fatal(err)
	}
	if sr.after != nil {
		sr.after(req)
	}
	res, err := s.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b), res.Header
}

// converseBody is a conforming Converse body with a tool use and its result; mutate
// changes it.
func converseBody(mutate func(map[string]any)) string {
	b := map[string]any{
		"system": []any{map[string]any{"text": "Be brief."}},
		"messages": []any{
			map[string]any{"role": "user", "content": []any{map[string]any{"text": "Book for two"}}},
			map[string]any{"role": "assistant", "content": []any{map[string]any{"toolUse": map[string]any{"toolUseId": "tooluse_1", "name": "book", "input": map[string]any{"people": 2}}}}},
			map[string]any{"role": "user", "content": []any{map[string]any{"toolResult": map[string]any{"toolUseId": "tooluse_1", "content": []any{map[string]any{"text": "booked"}}, "status": "success"}}}},
		},
		"toolConfig": map[string]any{
			"tools":      []any{map[string]any{"toolSpec": map[string]any{"name": "book", "inputSchema": map[string]any{"json": map[string]any{"type": "object"}}}}},
			"toolChoice": map[string]any{"auto": map[string]any{}},
		},
		"inferenceConfig": map[string]any{"maxTokens": 100, "temperature": 0.2},
	}
	if mutate != nil {
		mutate(b)
	}
	out, _ := json.Marshal(b)
	return string(out)
}

func TestBedrockConformingRequestPasses(t *testing.T) {
	rec := &recorder{TB: t}
	s := New(rec, data.LLMBedrockClaude)
	s.Queue(Text("ok"))
	status, body, _ := signedRequest{body: converseBody(nil)}.send(t, s)
	if status != 200 || len(rec.failures()) != 0 {
		t.Fatalf("%d %s %v", status, body, rec.failures())
	}
	r := s.Last()
	if r.System != "Be brief." || len(r.Messages) != 3 || r.Messages[1].ToolCalls[0].Arguments != `{"people":2}` ||
		r.Messages[2].ToolCallID != "tooluse_1" || r.ToolChoice.Mode != "auto" || r.MaxTokens != 100 || r.Stream {
		t.Errorf("parsed %+v", r)
	}
}

// TestBedrockSignatureChecked: what SigV4 protects, the stand-in checks; bad credentials
// are AWS's 403s (scenarios), a signature of the wrong form or scope fails the test.
func TestBedrockSignatureChecked(t *testing.T) {
	cases := []struct {
		name      string
		req       signedRequest
		status    int
		kind      string
		deviation bool
	}{
		{"body changed after signing", signedRequest{after: func(r *http.Request) {
			b := converseBody(func(b map[string]any) { b["inferenceConfig"] = map[string]any{"maxTokens": 9999} })
			r.Body, r.ContentLength = io.NopCloser(strings.NewReader(b)), int64(len(b))
		}}, 403, "InvalidSignatureException", false},
		{"signed header changed", signedRequest{after: func(r *http.Request) { r.Header.Set("Content-Type", "application/json; charset=utf-8") }}, 403, "InvalidSignatureException", false},
		{"another secret", signedRequest{secret: "another-secret-key-000000000000000000000"}, 403, "InvalidSignatureException", false},
		{"unknown access key", signedRequest{akid: "AKIAUNKNOWN000000000"}, 403, "UnrecognizedClientException", false},
		{"expired", signedRequest{when: time.Now().Add(-20 * time.Minute)}, 403, "InvalidSignatureException", false},
		{"another region", signedRequest{region: "us-west-2"}, 403, "InvalidSignatureException", true},
		{"not signed", signedRequest{after: func(r *http.Request) { r.Header.Del("Authorization") }}, 403, "MissingAuthenticationTokenException", true},
		{"a bearer token", signedRequest{after: func(r *http.Request) { r.Header.Set("Authorization", "Bearer ABSK") }}, 403, "MissingAuthenticationTokenException", true},
	}
	for _, tc := range cases {
		rec := &recorder{TB: t}
		s := New(rec, data.LLMBedrockClaude)
		s.Queue(Text("never"))
		tc.req.body = converseBody(nil)
		status, _, h := tc.req.send(t, s)
		failed := len(rec.failures()) > 0
		if status != tc.status || !strings.HasPrefix(h.Get("X-Amzn-ErrorType"), tc.kind+":") || failed != tc.deviation {
			t.Errorf("%s: %d %s, test failed %v", tc.name, status, h.Get("X-Amzn-ErrorType"), failed)
		}
	}
}

// TestBedrockDeviationsFailTheTest: a Converse body Bedrock refuses fails the test and is
// answered ValidationException.
func TestBedrockDeviationsFailTheTest(t *testing.T) {
	text := func(s string) map[string]any { return map[string]any{"text": s} }
	turn := func(role string, blocks ...any) map[string]any {
		return map[string]any{"role": role, "content": blocks}
	}
	msgs := func(ms ...any) func(map[string]any) { return func(b map[string]any) { b["messages"] = ms } }
	cases := []struct {
		name   string
		path   string
		mutate func(map[string]any)
		status int
	}{
		{"unknown member", "", func(b map[string]any) { b["temperature"] = 0.2 }, 400},
		{"another model", "/model/anthropic.claude-v2/converse", nil, 400},
		{"unknown operation", "/model/" + strings.ReplaceAll(defaultModels[data.LLMBedrockClaude], ":", "%3A") + "/invoke", nil, 404},
		{"assistant first", "", msgs(turn("assistant", text("Hello"))), 400},
		{"no messages", "", msgs(), 400},
		{"two user turns", "", msgs(turn("user", text("a")), turn("user", text("b"))), 400},
		{"blank text", "", msgs(turn("user", text("  "))), 400},
		{"two members in a block", "", msgs(turn("user", map[string]any{"text": "a", "image": map[string]any{}})), 400},
		{"tool use unanswered", "", msgs(turn("user", text("a")),
			turn("assistant", map[string]any{"toolUse": map[string]any{"toolUseId": "t1", "name": "book", "input": map[string]any{}}}),
			turn("user", text("b"))), 400},
		{"result of no use", "", msgs(turn("user", text("a")), turn("assistant", text("b")),
			turn("user", map[string]any{"toolResult": map[string]any{"toolUseId": "t9", "content": []any{text("r")}}})), 400},
		{"tool use without toolConfig", "", func(b map[string]any) { delete(b, "toolConfig") }, 400},
		{"input not an object", "", msgs(turn("user", text("a")),
			turn("assistant", map[string]any{"toolUse": map[string]any{"toolUseId": "t1", "name": "book", "input": "{}"}}),
			turn("user", map[string]any{"toolResult": map[string]any{"toolUseId": "t1", "content": []any{text("r")}}})), 400},
		{"blank tool result", "", msgs(turn("user", text("a")),
			turn("assistant", map[string]any{"toolUse": map[string]any{"toolUseId": "t1", "name": "book", "input": map[string]any{}}}),
			turn("user", map[string]any{"toolResult": map[string]any{"toolUseId": "t1", "content": []any{text("")}}})), 400},
		{"two tool choices", "", func(b map[string]any) {
			b["toolConfig"].(map[string]any)["toolChoice"] = map[string]any{"auto": map[string]any{}, "any": map[string]any{}}
		}, 400},
		{"tool choice of no tool", "", func(b map[string]any) {
			b["toolConfig"].(map[string]any)["toolChoice"] = map[string]any{"tool": map[string]any{"name": "nope"}}
		}, 400},
		{"schema not an object", "", func(b map[string]any) {
			b["toolConfig"].(map[string]any)["tools"] = []any{map[string]any{"toolSpec": map[string]any{"name": "book", "inputSchema": map[string]any{"json": map[string]any{"type": "string"}}}}}
		}, 400},
		{"temperature above 1", "", func(b map[string]any) { b["inferenceConfig"] = map[string]any{"temperature": 1.5} }, 400},
	}
	for _, tc := range cases {
		rec := &recorder{TB: t}
		s := New(rec, data.LLMBedrockClaude)
		s.Queue(Text("never"))
		status, body, h := signedRequest{path: tc.path, body: converseBody(tc.mutate)}.send(t, s)
		if status != tc.status || len(rec.failures()) != 1 || h.Get("X-Amzn-ErrorType") == "" {
			t.Errorf("%s: %d %s %s, failures %d", tc.name, status, h.Get("X-Amzn-ErrorType"), body, len(rec.failures()))
		}
	}
}

// TestBedrockErrorShape: a scripted failure is answered as Bedrock answers: the exception
// in X-Amzn-ErrorType, {"message"} in the body.
func TestBedrockErrorShape(t *testing.T) {
	s := New(t, data.LLMBedrockClaude)
	s.Queue(Fail(429, "Too many requests, please wait before trying again."))
	status, body, h := signedRequest{body: converseBody(nil)}.send(t, s)
	if status != 429 || h.Get("X-Amzn-ErrorType") != "ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/" ||
		strings.TrimSpace(body) != `{"message":"Too many requests, please wait before trying again."}` {
		t.Errorf("%d %v %s", status, h, body)
	}
}

func TestBedrockModelPath(t *testing.T) {
	for path, want := range map[string][2]string{
		"/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse":                     {"us.anthropic.claude-sonnet-4-5-20250929-v1:0", "converse"},
		"/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A1%3Ainference-profile%2Fx/converse-stream": {"arn:aws:bedrock:us-east-1:1:inference-profile/x", "converse-stream"},
	} {
		m, op, ok := bedrockModelPath(path)
		if !ok || m != want[0] || op != want[1] {
			t.Errorf("%s: %q %q %v", path, m, op, ok)
		}
	}
	if _, _, ok := bedrockModelPath("/models/x/converse"); ok {
		t.Error("accepted /models/")
	}
}
