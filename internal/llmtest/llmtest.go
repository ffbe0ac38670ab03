// Package llmtest stands in for the language model providers in tests: a local HTTP
// server per provider protocol that checks every request exactly as the provider documents
// it and answers in the provider's own shapes, so no test reaches a network and a test
// that passes here speaks the real protocol.
//
// One stand-in speaks one provider's protocol:
//
//	internal        OpenAI-compatible chat completions (Ollama, vLLM, LM Studio) under /v1
//	groq            Groq's OpenAI-compatible API under /openai/v1
//	mistral         Mistral's chat completions under /v1 (its own tool_choice, id rules,
//	                error bodies, and no field it does not know)
//	azure           Azure OpenAI: /openai/deployments/{deployment}/chat/completions,
//	                api-version and the api-key header
//	bedrock_claude  Bedrock Converse and ConverseStream, every request's SigV4 signature
//	                verified by re-signing it with the AWS SDK's signer
//
// A request that deviates from the protocol (a wrong path, a missing api-version, a field
// the provider refuses, a tool result naming no call, a bad signature form) fails the test
// through t.Errorf and is answered as the provider answers it (400, 404, 422). A wrong key
// is not a deviation but a scenario: it is answered 401 (403 for Bedrock) in the
// provider's shape, as tests of failures want.
//
// The answers are scripted. Queue replies and each request takes the next one: Text,
// JSON (a structured output's JSON text, for a request whose response_format asks for a
// strict json_schema; Request.ResponseSchema holds it), Calls (tool calls; an empty ID
// gets one in the provider's form), Fail (a status and message in the provider's error
// shape), FailMidStream (an error event or exception halfway through a stream), Raw
// (exact bytes), Hang (no answer: the client's timeout ends it), Cut (the connection
// closed halfway), Malformed (bytes not of the protocol), or a Reply built by hand
// (usage, stop reason, delays between chunks). Or install a responder, which sees each
// request already parsed (system prompt, messages, tools, tool choice, response schema)
// in the llm package's own types, the same whatever the protocol, and decides. A
// responder is how a deterministic fixture model plays an agent, a simulated caller or a
// judge:
//
//	s := llmtest.New(t, data.LLMGroq)
//	s.Respond(func(r llmtest.Request) llmtest.Reply {
//		if len(r.ToolResults()) > 0 {
//			return llmtest.Text("Booked!")
//		}
//		if strings.Contains(r.LastUserText(), "table") {
//			return llmtest.Calls(llm.ToolCall{Name: "book", Arguments: `{"people":2}`})
//		}
//		return llmtest.Text("How can I help?")
//	})
//	client, err := llm.New(s.Config(), s.Options())
//
// Requests() and Last() give every request received, parsed, for assertions. A request
// with nothing scripted for it fails the test and is answered 500.
//
// Tests through the API or the command line point an agent at a stand-in with
// LLMConfig() (an llm_config that passes the agent rules) and start the server so that it
// reaches the stand-in: private URLs allowed (--allow-private-urls, or --allow-url-prefix
// with the stand-in's URL), since it listens on loopback; and for groq, mistral and
// bedrock_claude, whose addresses are not in the agent's configuration,
// --llm-base-url PROVIDER=BaseURL().
package llmtest

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/llm"
)

// Default credentials and names of the stand-ins; an Option changes them.
const (
	DefaultAPIKey     = "test-key-0123456789abcdef"
	DefaultDeployment = "gpt-4o-prod"
	DefaultAPIVersion = "2024-10-21"
	DefaultRegion     = "us-east-1"
	DefaultAccessKey  = "AKIAIOSFODNN7EXAMPLE"
	DefaultSecretKey  = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
)

// defaultModels are models each provider serves.
var defaultModels = map[string]string{
	data.LLMInternal:      "llama3.2",
	data.LLMGroq:          "llama-3.3-70b-versatile",
	data.LLMMistral:       "mistral-small-latest",
	data.LLMAzure:         "gpt-4o",
	data.LLMBedrockClaude: "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
}

// Server is one provider's stand-in. Its exported fields say what it expects; set them
// through Options, before the first request.
type Server struct {
	// URL is the stand-in's root, http://127.0.0.1:PORT.
	URL      string
	Provider string
	Model    string
	// APIKey is the key it accepts: a Bearer token, Azure's api-key, or for Bedrock
	// AccessKeyID:SecretAccessKey. Empty for internal means it expects no Authorization.
	APIKey     string
	Deployment string
	APIVersion string
	Region     string
	// SessionToken, when set, is the AWS session token a Bedrock request must carry.
	SessionToken string

	t     testing.TB
	srv   *httptest.Server
	proto protocol
	// closing ends replies that hang, so Close never waits on them.
	closing chan struct{}

	mu        sync.Mutex
	queue     []Reply
	responder func(Request) Reply
	requests  []Request
	seq       int
}

// Option adjusts a stand-in before it starts.
type Option func(*Server)

// WithAPIKey sets the key the stand-in accepts ("" for internal: none).
func WithAPIKey(key string) Option { return func(s *Server) { s.APIKey = key } }

// WithModel sets the model the stand-in serves.
func WithModel(model string) Option { return func(s *Server) { s.Model = model } }

// WithAPIVersion sets the api-version the Azure stand-in expects.
func WithAPIVersion(v string) Option { return func(s *Server) { s.APIVersion = v } }

// WithRegion sets the AWS region the Bedrock stand-in expects requests signed for.
func WithRegion(region string) Option { return func(s *Server) { s.Region = region } }

// WithSessionToken makes the Bedrock stand-in expect temporary credentials' token.
func WithSessionToken(token string) Option { return func(s *Server) { s.SessionToken = token } }

// New starts the stand-in of provider (an llm_config.provider value), closed when the test
// ends. internal expects no key unless WithAPIKey gives one; the others expect
// DefaultAPIKey (Bedrock: DefaultAccessKey:DefaultSecretKey).
func New(t testing.TB, provider string, opts ...Option) *Server {
	t.Helper()
	s := &Server{
		Provider: provider, Model: defaultModels[provider], APIKey: DefaultAPIKey,
		t: t, closing: make(chan struct{}),
	}
	switch provider {
	case data.LLMInternal:
		s.APIKey = ""
		s.proto = &openAIProtocol{dialect: provider}
	case data.LLMGroq, data.LLMMistral:
		s.proto = &openAIProtocol{dialect: provider}
	case data.LLMAzure:
		s.Deployment, s.APIVersion = DefaultDeployment, DefaultAPIVersion
		s.proto = &openAIProtocol{dialect: provider}
	case data.LLMBedrockClaude:
		s.APIKey, s.Region = DefaultAccessKey+":"+DefaultSecretKey, DefaultRegion
		s.proto = &bedrockProtocol{}
	default:
		t.Fatalf("llmtest: no stand-in for provider %q", provider)
	}
	for _, o := range opts {
		o(s)
	}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
	t.Cleanup(s.Close)
	return s
}

// Close stops the stand-in; replies still hanging end.
func (s *Server) Close() {
	s.mu.Lock()
	select {
	case <-s.closing:
	default:
		close(s.closing)
	}
	s.mu.Unlock()
	s.srv.Close()
}

// BaseURL is what the operator's --llm-base-url PROVIDER=URL names to reach the stand-in
// in place of the provider: for internal the agent's base_url, for azure its endpoint.
func (s *Server) BaseURL() string {
	switch s.Provider {
	case data.LLMInternal, data.LLMMistral:
		return s.URL + "/v1"
	case data.LLMGroq:
		return s.URL + "/openai/v1"
	}
	return s.URL
}

// Config is the llm.Config of an agent pointed at the stand-in.
func (s *Server) Config() llm.Config {
	c := llm.Config{Provider: s.Provider, Model: s.Model, APIKey: s.APIKey}
	switch s.Provider {
	case data.LLMInternal:
		c.BaseURL = s.BaseURL()
	case data.LLMAzure:
		c.Endpoint, c.Deployment, c.APIVersion = s.URL, s.Deployment, s.APIVersion
	case data.LLMBedrockClaude:
		c.Region = s.Region
	}
	return c
}

// Options are the llm.Options that reach the stand-in: its client, and the base URL
// override of the providers whose address is not in the agent's configuration.
func (s *Server) Options() llm.Options {
	o := llm.Options{HTTPClient: s.srv.Client()}
	if s.Provider != data.LLMInternal && s.Provider != data.LLMAzure {
		o.BaseURLs = map[string]string{s.Provider: s.BaseURL()}
	}
	return o
}

// LLMConfig is an agent's llm_config pointed at the stand-in, with the fields validation
// requires of the provider (temperature 0.2; max_tokens 512 for Bedrock), for tests that
// create agents through the API. Groq, Mistral and Bedrock are reached only with
// --llm-base-url PROVIDER=BaseURL(); internal's base_url and azure's endpoint are on
// loopback, which the server refuses without --allow-private-urls.
func (s *Server) LLMConfig() data.LLMConfig {
	c := s.Config()
	temp, maxTokens := 0.2, 512
	out := data.LLMConfig{
		Provider: c.Provider, Model: c.Model, Temperature: &temp, BaseURL: c.BaseURL,
		Endpoint: c.Endpoint, Deployment: c.Deployment, APIVersion: c.APIVersion, Region: c.Region,
		KnowledgeBaseIDs: []string{}, Tools: []*data.Tool{},
	}
	if s.Provider == data.LLMAzure {
		out.Model = ""
	}
	if s.Provider == data.LLMBedrockClaude {
		out.MaxTokens = &maxTokens
	}
	if c.APIKey != "" {
		out.APIKey = &c.APIKey
	}
	return out
}

// Queue appends replies: each request takes the first one left.
func (s *Server) Queue(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, replies...)
}

// Respond installs the function that answers requests when the queue is empty. It runs on
// the server's goroutines, one request at a time.
func (s *Server) Respond(f func(Request) Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.responder = f
}

// Requests returns every request received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Last returns the last request received; the test fails when there was none.
func (s *Server) Last() Request {
	s.t.Helper()
	rs := s.Requests()
	if len(rs) == 0 {
		s.t.Fatalf("llmtest: %s stand-in received no request", s.Provider)
	}
	return rs[len(rs)-1]
}

// protocol is one provider protocol's checks and answers.
type protocol interface {
	// check verifies a request and parses it; a non-nil answer refuses it.
	check(s *Server, r *http.Request, body []byte) (Request, *refusal)
	// refuse writes a refusal or a scripted failure in the provider's error shape.
	refuse(w http.ResponseWriter, f refusal)
	// answer writes a reply: whole, streamed, cut or malformed.
	answer(s *Server, w http.ResponseWriter, req Request, reply Reply)
}

// refusal is an error answer: a deviation (which also fails the test) or a scenario.
type refusal struct {
	status int
	// kind is the provider's error type or code, when the protocol has one.
	kind    string
	message string
	// detail replaces message by a validation detail, for Mistral's 422.
	detail string
}

// maxRequestBody bounds what a stand-in reads of a request.
const maxRequestBody = 32 << 20

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxRequestBody))
	if err != nil {
		s.t.Errorf("llmtest: %s: reading the request body: %v", s.Provider, err)
		return
	}
	req, ref := s.proto.check(s, r, body)
	req.Provider, req.Method, req.Path, req.Query, req.Header, req.Body = s.Provider, r.Method, r.URL.Path, r.URL.Query(), r.Header.Clone(), body
	s.mu.Lock()
	s.requests = append(s.requests, req)
	s.mu.Unlock()
	if ref != nil {
		s.proto.refuse(w, *ref)
		return
	}
	reply, ok := s.next(req)
	if !ok {
		s.t.Errorf("llmtest: %s stand-in received a request with no reply queued and no responder: %s %s", s.Provider, r.Method, r.URL)
		s.proto.refuse(w, refusal{status: http.StatusInternalServerError, message: "llmtest: no reply scripted"})
		return
	}
	if !s.wait(r.Context(), reply) {
		return
	}
	switch {
	case reply.Raw:
		if reply.ContentType != "" {
			w.Header().Set("Content-Type", reply.ContentType)
		}
		w.WriteHeader(reply.Status)
		io.WriteString(w, reply.Body)
	case reply.Status != 0 && !(reply.MidStream && req.Stream):
		s.proto.refuse(w, refusal{status: reply.Status, kind: reply.ErrorType, message: reply.Message})
	default:
		s.proto.answer(s, w, req, reply)
	}
}

// next takes the reply for req: the queue's first, else the responder's.
func (s *Server) next(req Request) (Reply, bool) {
	s.mu.Lock()
	if len(s.queue) > 0 {
		r := s.queue[0]
		s.queue = s.queue[1:]
		s.mu.Unlock()
		return r, true
	}
	f := s.responder
	s.mu.Unlock()
	if f == nil {
		return Reply{}, false
	}
	return f(req), true
}

// wait holds the answer for reply.Delay, or until the client gives up when it hangs;
// false means no answer is to be written.
func (s *Server) wait(ctx context.Context, reply Reply) bool {
	if reply.Hang {
		select {
		case <-ctx.Done():
		case <-s.closing:
		}
		return false
	}
	if reply.Delay <= 0 {
		return true
	}
	t := time.NewTimer(reply.Delay)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
	case <-s.closing:
	}
	return false
}

// deviation fails the test with a request's fault and returns the provider's refusal.
func (s *Server) deviation(status int, kind, format string, args ...any) *refusal {
	msg := fmt.Sprintf(format, args...)
	s.t.Errorf("llmtest: %s: the request deviates from the protocol: %s", s.Provider, msg)
	return &refusal{status: status, kind: kind, message: msg}
}

// nextID returns the stand-in's next sequence number, for ids of replies and calls.
func (s *Server) nextID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	return s.seq
}

// flushed writes p and flushes it to the client at once.
func flushed(w http.ResponseWriter, p []byte) {
	w.Write(p)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// cut ends the answer here: the connection closes under the client mid-body.
func cut() { panic(http.ErrAbortHandler) }

// pathUnescape is url.PathUnescape, keeping the escaped form when it is not one.
func pathUnescape(p string) string {
	if u, err := url.PathUnescape(p); err == nil {
		return u
	}
	return p
}

// countTokens is the stand-ins' stand-in for a tokenizer: one token a word, at least one.
func countTokens(texts ...string) int {
	n := 0
	for _, t := range texts {
		n += len(strings.Fields(t))
	}
	return max(n, 1)
}
