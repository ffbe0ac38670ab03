package llm

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"regexp"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/voiceapi/voiceapi/data"
)

// openAIClient speaks OpenAI's chat completions, as internal (Ollama, vLLM, LM Studio),
// groq, mistral and azure serve them, through the openai-go SDK. The SDK's own retries are
// off: Error.Retryable tells the caller, who knows whether a retry is worth a turn's delay.
type openAIClient struct {
	*base
	model string
	chat  openai.ChatCompletionService
	// usageOption asks for usage in a stream where the server knows stream_options.
	usageOption bool
	// structured is false where the server refuses response_format json_schema.
	structured bool
}

func (c *openAIClient) structuredOutput() bool { return c.structured }

// azureStreamOptionsVersion is the first Azure OpenAI api-version that accepts
// stream_options; older ones refuse the request, so their streams go without usage.
const azureStreamOptionsVersion = "2024-09-01"

// azureStructuredOutputsVersion is the first Azure OpenAI api-version with structured
// output (response_format json_schema, from 2024-08-01-preview); with an older one a
// caller forces a tool call instead, as on Bedrock. Versions are dates, so they compare
// as strings ("2024-08-01-preview" >= "2024-08-01" > "2024-07-01-preview").
const azureStructuredOutputsVersion = "2024-08-01"

func newOpenAI(b *base, cfg Config, opts Options) (Client, error) {
	c := &openAIClient{base: b, model: cfg.Model, usageOption: true, structured: true}
	ro := []option.RequestOption{
		option.WithHTTPClient(b.http),
		option.WithMaxRetries(0),
		option.WithMiddleware(failedAnswers),
	}
	var root string
	var err error
	switch cfg.Provider {
	case data.LLMInternal:
		if err = b.require([2]string{"model", cfg.Model}); err != nil {
			return nil, err
		}
		root, err = b.baseURL(opts, cfg.BaseURL)
	case data.LLMGroq, data.LLMMistral:
		if err = b.require([2]string{"model", cfg.Model}); err != nil {
			return nil, err
		}
		root, err = b.baseURL(opts, DefaultBaseURLs[cfg.Provider])
		// Mistral refuses any field it does not know (422 extra_forbidden), stream_options
		// among them; it sends usage in its last chunk unasked.
		c.usageOption = cfg.Provider != data.LLMMistral
	case data.LLMAzure:
		if err = b.require([2]string{"endpoint", cfg.Endpoint}, [2]string{"deployment", cfg.Deployment}, [2]string{"api_version", cfg.APIVersion}); err != nil {
			return nil, err
		}
		root, err = b.baseURL(opts, cfg.Endpoint)
		// The deployment in the path picks the model; model in the body is informative.
		root += "/openai/deployments/" + url.PathEscape(cfg.Deployment)
		ro = append(ro, option.WithQuery("api-version", cfg.APIVersion))
		if c.model == "" {
			c.model = cfg.Deployment
		}
		c.usageOption = cfg.APIVersion >= azureStreamOptionsVersion
		c.structured = cfg.APIVersion >= azureStructuredOutputsVersion
	}
	if err != nil {
		return nil, err
	}
	ro = append(ro, option.WithBaseURL(root+"/"))
	if cfg.APIKey != "" {
		if cfg.Provider == data.LLMAzure {
			ro = append(ro, option.WithHeader("api-key", cfg.APIKey))
		} else {
			ro = append(ro, option.WithAPIKey(cfg.APIKey))
		}
	}
	// NewChatCompletionService rather than NewClient: the client would also read
	// OPENAI_BASE_URL, OPENAI_API_KEY and the like from the server's environment.
	c.chat = openai.NewChatCompletionService(ro...)
	return c, nil
}

// failedAnswers hands a failed answer to fail as a *statusError with its body, whatever
// the body's shape: the SDK reads only OpenAI's {"error":{...}}, and Mistral's and others'
// would lose their status. A whole (not streamed) answer is read here too, so that a
// connection cut mid-body is told apart from a body that is not JSON.
func failedAnswers(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	res, err := next(req)
	if err != nil {
		return res, err
	}
	if res.StatusCode >= 400 {
		return nil, readStatusError(res)
	}
	if mt, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type")); mt == "text/event-stream" {
		return res, nil
	}
	body, err := io.ReadAll(io.LimitReader(res.Body, maxAnswer))
	res.Body.Close()
	if err != nil {
		return nil, &cutError{msg: "the connection was cut before the reply was complete"}
	}
	res.Body = io.NopCloser(bytes.NewReader(body))
	return res, nil
}

// maxAnswer bounds a whole answer: a reply of the largest max_tokens is far smaller.
const maxAnswer = 16 << 20

// Complete implements Client.
func (c *openAIClient) Complete(ctx context.Context, req Request, onText func(string) error) (*Reply, error) {
	ctx, cancel := context.WithTimeoutCause(ctx, c.timeout, errTimedOut)
	defer cancel()
	params, err := c.params(req)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	var reply *Reply
	if onText == nil {
		reply, err = c.complete(ctx, params)
	} else {
		reply, err = c.stream(ctx, params, onText, start)
	}
	if err != nil {
		return nil, c.fail(ctx, err)
	}
	reply.Total = time.Since(start)
	if onText == nil || reply.FirstToken == 0 {
		reply.FirstToken = reply.Total
	}
	return reply, nil
}

func (c *openAIClient) complete(ctx context.Context, params openai.ChatCompletionNewParams) (*Reply, error) {
	res, err := c.chat.New(ctx, params)
	if err != nil {
		return nil, decodeError(ctx, err)
	}
	if len(res.Choices) == 0 {
		return nil, &malformedError{"the answer has no choices"}
	}
	choice := res.Choices[0]
	reply := &Reply{
		Text:       choice.Message.Content,
		StopReason: openAIStopReason(choice.FinishReason),
		Usage:      Usage{InputTokens: int(res.Usage.PromptTokens), OutputTokens: int(res.Usage.CompletionTokens)},
	}
	for _, tc := range choice.Message.ToolCalls {
		if tc.Type == "custom" {
			continue // custom (free-text) tools are never offered
		}
		reply.ToolCalls = append(reply.ToolCalls, ToolCall{ID: orNewCallID(tc.ID), Name: tc.Function.Name, Arguments: tc.Function.Arguments})
	}
	return reply, nil
}

// decodeError tells what went wrong with a whole answer: the failures failedAnswers and
// the connection report pass as they are; any other is the SDK's failing to read a body
// that arrived whole, so it is not JSON of a completion.
func decodeError(ctx context.Context, err error) error {
	var se *statusError
	var ce *cutError
	var ue *url.Error
	if ctx.Err() != nil || errors.As(err, &se) || errors.As(err, &ce) || errors.As(err, &ue) {
		return err
	}
	return &malformedError{"the answer is not the JSON of a chat completion"}
}

// params builds the chat completion request of req in the provider's dialect.
func (c *openAIClient) params(req Request) (openai.ChatCompletionNewParams, error) {
	p := openai.ChatCompletionNewParams{Model: shared.ChatModel(c.model)}
	if req.System != "" {
		p.Messages = append(p.Messages, openai.SystemMessage(req.System))
	}
	for _, m := range req.Messages {
		msg, err := c.message(m)
		if err != nil {
			return p, err
		}
		p.Messages = append(p.Messages, msg)
	}
	if req.Temperature != nil {
		p.Temperature = openai.Float(*req.Temperature)
	}
	if req.MaxTokens > 0 {
		p.MaxTokens = openai.Int(int64(req.MaxTokens))
	}
	for _, t := range req.Tools {
		def := shared.FunctionDefinitionParam{Name: t.Name, Parameters: shared.FunctionParameters(schemaOrEmpty(t.Parameters))}
		if t.Description != "" {
			def.Description = openai.String(t.Description)
		}
		p.Tools = append(p.Tools, openai.ChatCompletionFunctionTool(def))
	}
	if len(req.Tools) > 0 { // a tool_choice without tools is refused
		choice, err := c.toolChoice(req.ToolChoice)
		if err != nil {
			return p, err
		}
		p.ToolChoice = choice
	}
	if rs := req.ResponseSchema; rs != nil {
		if rs.Name == "" || rs.Schema == nil {
			return p, c.configError("a response schema needs a name and a schema")
		}
		if !c.structured {
			return p, c.configError("api_version " + azureStructuredOutputsVersion + "-preview or later has structured output (a response schema); force a tool call instead")
		}
		p.ResponseFormat.OfJSONSchema = &shared.ResponseFormatJSONSchemaParam{
			JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: rs.Name, Schema: rs.Schema, Strict: openai.Bool(true)},
		}
	}
	return p, nil
}

func (c *openAIClient) message(m Message) (openai.ChatCompletionMessageParamUnion, error) {
	switch m.Role {
	case RoleUser:
		return openai.UserMessage(m.Content), nil
	case RoleTool:
		return openai.ToolMessage(m.Content, c.callID(m.ToolCallID)), nil
	case RoleAssistant:
		var a openai.ChatCompletionAssistantMessageParam
		if m.Content != "" || len(m.ToolCalls) == 0 {
			a.Content.OfString = openai.String(m.Content)
		}
		for _, tc := range m.ToolCalls {
			a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
				OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
					ID:       c.callID(tc.ID),
					Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: tc.Name, Arguments: argumentsOrEmpty(tc.Arguments)},
				},
			})
		}
		return openai.ChatCompletionMessageParamUnion{OfAssistant: &a}, nil
	}
	return openai.ChatCompletionMessageParamUnion{}, c.configError("a message has the unknown role " + string(m.Role))
}

// toolChoice maps ToolChoice to tool_choice: Mistral spells "some tool" any.
func (c *openAIClient) toolChoice(tc ToolChoice) (openai.ChatCompletionToolChoiceOptionUnionParam, error) {
	var u openai.ChatCompletionToolChoiceOptionUnionParam
	switch tc.Mode {
	case "":
	case "auto", "none":
		u.OfAuto = openai.String(tc.Mode)
	case "required":
		u.OfAuto = openai.String("required")
		if c.provider == data.LLMMistral {
			u.OfAuto = openai.String("any")
		}
	case "tool":
		u.OfFunctionToolChoice = &openai.ChatCompletionNamedToolChoiceParam{
			Function: openai.ChatCompletionNamedToolChoiceFunctionParam{Name: tc.Name},
		}
	default:
		return u, c.configError("unknown tool choice " + tc.Mode)
	}
	return u, nil
}

// mistralCallID is the form Mistral requires of a tool call id.
var mistralCallID = regexp.MustCompile(`^[a-zA-Z0-9]{9}$`)

// callID returns the id a tool call is sent back under. Mistral refuses any id but nine
// letters and digits: an id another model made (a conversation whose agent changed
// provider) is mapped to one, the same for its call and its result.
func (c *openAIClient) callID(id string) string {
	if c.provider != data.LLMMistral || mistralCallID.MatchString(id) {
		return id
	}
	sum := sha256.Sum256([]byte(id))
	out := make([]byte, 9)
	for i := range out {
		out[i] = alphanumerics[int(sum[i])%len(alphanumerics)]
	}
	return string(out)
}

const alphanumerics = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// orNewCallID returns id, or a new one when a server sent none (some local servers do):
// a tool result must name its call.
func orNewCallID(id string) string {
	if id != "" {
		return id
	}
	return "call" + rand.Text()[:20]
}

// schemaOrEmpty returns a tool's parameters, or the schema of no parameters: some
// providers refuse a function without one.
func schemaOrEmpty(s map[string]any) map[string]any {
	if s == nil {
		return map[string]any{"type": "object", "properties": map[string]any{}}
	}
	return s
}

// argumentsOrEmpty returns a call's arguments, or the empty object a provider expects.
func argumentsOrEmpty(args string) string {
	if args == "" {
		return "{}"
	}
	return args
}

// openAIStopReason normalizes finish_reason (Mistral's model_length is its length).
func openAIStopReason(r string) string {
	switch r {
	case "stop":
		return "stop"
	case "tool_calls", "function_call":
		return "tool_calls"
	case "length", "model_length":
		return "length"
	}
	return "other"
}
