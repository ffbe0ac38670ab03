package llmtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"regexp"
	"slices"
	"strings"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/llm"
)

// requestFields are the chat completion request members each dialect accepts. OpenAI and
// Groq refuse any other (400 "Unrecognized request argument"); Mistral too (422
// extra_forbidden), and it knows fewer: no stream_options, no max_completion_tokens.
var requestFields = map[string][]string{
	"openai": {"model", "messages", "tools", "tool_choice", "temperature", "top_p", "max_tokens",
		"max_completion_tokens", "stream", "stream_options", "stop", "seed", "n", "parallel_tool_calls",
		"response_format", "user", "frequency_penalty", "presence_penalty", "logprobs", "top_logprobs", "logit_bias"},
	data.LLMMistral: {"model", "messages", "tools", "tool_choice", "temperature", "top_p", "max_tokens",
		"stream", "stop", "random_seed", "response_format", "presence_penalty", "frequency_penalty", "n",
		"prediction", "parallel_tool_calls", "prompt_mode", "safe_prompt"},
}

// oaMessage is a chat message as the protocol spells it; decoded strictly, so a member no
// role has is a deviation.
type oaMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	Name       string          `json:"name,omitempty"`
	ToolCalls  []oaToolCall    `json:"tool_calls,omitempty"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
	Refusal    *string         `json:"refusal,omitempty"`
	Prefix     bool            `json:"prefix,omitempty"`
}

type oaToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type,omitempty"`
	Index    *int   `json:"index,omitempty"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type oaTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string         `json:"name"`
		Description string         `json:"description,omitempty"`
		Parameters  map[string]any `json:"parameters,omitempty"`
		Strict      *bool          `json:"strict,omitempty"`
	} `json:"function"`
}

// toolNameRe is the form OpenAI, Groq and Mistral require of a function's name.
var toolNameRe = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// mistralIDRe is the form Mistral requires of a tool call id.
var mistralIDRe = regexp.MustCompile(`^[a-zA-Z0-9]{9}$`)

// checkHTTP verifies the method, path, query, credentials and media type of a chat
// completion request.
func (p *openAIProtocol) checkHTTP(s *Server, r *http.Request) *refusal {
	if r.Method != http.MethodPost {
		return s.deviation(http.StatusMethodNotAllowed, "invalid_request_error", "method %s, want POST", r.Method)
	}
	want := "/v1/chat/completions"
	switch p.dialect {
	case data.LLMGroq:
		want = "/openai/v1/chat/completions"
	case data.LLMAzure:
		want = "/openai/deployments/" + s.Deployment + "/chat/completions"
	}
	if got := pathUnescape(r.URL.EscapedPath()); got != want {
		return s.deviation(http.StatusNotFound, "404", "path %s, want %s", got, want)
	}
	if p.dialect == data.LLMAzure {
		if v := r.URL.Query()["api-version"]; len(v) != 1 || v[0] != s.APIVersion {
			return s.deviation(http.StatusNotFound, "404", "api-version %q, want %q", v, s.APIVersion)
		}
	}
	if ref := p.checkCredentials(s, r); ref != nil {
		return ref
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return s.deviation(http.StatusBadRequest, "invalid_request_error", "Content-Type %q, want application/json", r.Header.Get("Content-Type"))
	}
	return nil
}

// checkCredentials: Azure's api-key header, the others' Bearer token. A wrong or missing
// key is the provider's 401, not a deviation; a credential sent the wrong way is.
func (p *openAIProtocol) checkCredentials(s *Server, r *http.Request) *refusal {
	auth := r.Header.Get("Authorization")
	if p.dialect == data.LLMAzure {
		if auth != "" {
			return s.deviation(http.StatusBadRequest, "invalid_request_error", "an Authorization header beside api-key")
		}
		if r.Header.Get("api-key") != s.APIKey {
			return &refusal{status: http.StatusUnauthorized, kind: "401", message: "Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource."}
		}
		return nil
	}
	if s.APIKey == "" {
		if auth != "" {
			return s.deviation(http.StatusBadRequest, "invalid_request_error", "an Authorization header %q where no key is configured", auth)
		}
		return nil
	}
	if auth != "Bearer "+s.APIKey {
		msg := "Invalid API Key"
		if p.dialect == data.LLMMistral {
			msg = "Unauthorized"
		}
		return &refusal{status: http.StatusUnauthorized, kind: "invalid_api_key", message: msg}
	}
	return nil
}

// checkBody verifies a chat completion body as the dialect's API reference states it and
// parses it into req.
func (p *openAIProtocol) checkBody(s *Server, body []byte, req *Request) *refusal {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		return s.deviation(http.StatusBadRequest, "invalid_request_error", "the body is not a JSON object: %v", err)
	}
	allowed := requestFields["openai"]
	if p.dialect == data.LLMMistral {
		allowed = requestFields[data.LLMMistral]
	}
	for name := range fields {
		if !slices.Contains(allowed, name) {
			return p.unknownField(s, name)
		}
	}
	var b struct {
		Model         *string           `json:"model"`
		Messages      []json.RawMessage `json:"messages"`
		Tools         []oaTool          `json:"tools"`
		ToolChoice    json.RawMessage   `json:"tool_choice"`
		Temperature   *float64          `json:"temperature"`
		MaxTokens     *int              `json:"max_tokens"`
		Stream        *bool             `json:"stream"`
		StreamOptions *struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
		N              *int            `json:"n"`
		ResponseFormat json.RawMessage `json:"response_format"`
	}
	if err := json.Unmarshal(body, &b); err != nil {
		return s.deviation(http.StatusBadRequest, "invalid_request_error", "the body does not decode: %v", err)
	}
	if b.Model != nil {
		req.Model = *b.Model
	}
	if p.dialect != data.LLMAzure && req.Model != s.Model {
		return s.deviation(http.StatusNotFound, "model_not_found", "model %q, want %q", req.Model, s.Model)
	}
	if b.Temperature != nil && (*b.Temperature < 0 || *b.Temperature > 2) {
		return s.deviation(http.StatusBadRequest, "invalid_request_error", "temperature %v is outside 0 to 2", *b.Temperature)
	}
	req.Temperature = b.Temperature
	if b.MaxTokens != nil {
		if *b.MaxTokens < 1 {
			return s.deviation(http.StatusBadRequest, "invalid_request_error", "max_tokens %d is below 1", *b.MaxTokens)
		}
		req.MaxTokens = *b.MaxTokens
	}
	if b.N != nil && *b.N != 1 {
		return s.deviation(http.StatusBadRequest, "invalid_request_error", "n %d: one choice is read", *b.N)
	}
	req.Stream = b.Stream != nil && *b.Stream
	if b.StreamOptions != nil {
		if !req.Stream {
			return s.deviation(http.StatusBadRequest, "invalid_request_error", "stream_options without stream: true")
		}
		req.StreamUsage = b.StreamOptions.IncludeUsage
	}
	if ref := p.checkTools(s, b.Tools, b.ToolChoice, req); ref != nil {
		return ref
	}
	if ref := p.checkResponseFormat(s, b.ResponseFormat, req); ref != nil {
		return ref
	}
	return p.checkMessages(s, b.Messages, req)
}

// checkResponseFormat verifies response_format as OpenAI documents structured output:
// {"type":"json_schema","json_schema":{"name","schema","strict"}} with a name of
// ^[a-zA-Z0-9_-]{1,64}$ and a schema object; strict, whose subset wants an object at
// the root, every property required and additionalProperties false. The plain forms
// (text, json_object) are the provider's too, but voiceapi sends neither: a deviation.
func (p *openAIProtocol) checkResponseFormat(s *Server, raw json.RawMessage, req *Request) *refusal {
	if isNull(raw) {
		return nil
	}
	var rf struct {
		Type       string `json:"type"`
		JSONSchema *struct {
			Name        string         `json:"name"`
			Description string         `json:"description,omitempty"`
			Schema      map[string]any `json:"schema"`
			Strict      *bool          `json:"strict"`
		} `json:"json_schema"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	bad := func(format string, args ...any) *refusal {
		return s.deviation(http.StatusBadRequest, "invalid_request_error", "response_format: %s", fmt.Sprintf(format, args...))
	}
	if err := dec.Decode(&rf); err != nil {
		return bad("%v", err)
	}
	js := rf.JSONSchema
	switch {
	case rf.Type != "json_schema":
		return bad("type %q, want json_schema", rf.Type)
	case js == nil:
		return bad("json_schema is missing")
	case !toolNameRe.MatchString(js.Name):
		return bad("json_schema.name %q is not ^[a-zA-Z0-9_-]{1,64}$", js.Name)
	case js.Schema == nil:
		return bad("json_schema.schema is not an object")
	case js.Strict == nil || !*js.Strict:
		return bad("json_schema.strict is not true")
	}
	if why := strictSchemaFault(js.Schema); why != "" {
		return bad("json_schema.schema is outside strict mode's subset: %s", why)
	}
	req.ResponseSchema = &llm.ResponseSchema{Name: js.Name, Schema: js.Schema}
	return nil
}

// strictSchemaFault returns what in a root schema strict structured output refuses, ""
// when nothing: the root an object, additionalProperties false, each property required.
func strictSchemaFault(schema map[string]any) string {
	if schema["type"] != "object" {
		return "the root is not of type object"
	}
	if schema["additionalProperties"] != false {
		return "additionalProperties is not false"
	}
	props, _ := schema["properties"].(map[string]any)
	required, _ := schema["required"].([]any)
	for name := range props {
		if !slices.Contains(required, any(name)) {
			return "the property " + name + " is not required"
		}
	}
	return ""
}

func (p *openAIProtocol) unknownField(s *Server, name string) *refusal {
	if p.dialect == data.LLMMistral {
		ref := s.deviation(http.StatusUnprocessableEntity, "invalid_request_error", "the field %s, which Mistral does not know", name)
		ref.detail = fmt.Sprintf(`{"detail":[{"type":"extra_forbidden","loc":["body",%q],"msg":"Extra inputs are not permitted"}]}`, name)
		return ref
	}
	return s.deviation(http.StatusBadRequest, "invalid_request_error", "Unrecognized request argument supplied: %s", name)
}

// checkTools verifies tools (function schemas) and tool_choice.
func (p *openAIProtocol) checkTools(s *Server, tools []oaTool, choice json.RawMessage, req *Request) *refusal {
	names := map[string]bool{}
	for i, t := range tools {
		if t.Type != "function" {
			return s.deviation(http.StatusBadRequest, "invalid_request_error", "tools[%d].type %q, want function", i, t.Type)
		}
		f := t.Function
		if !toolNameRe.MatchString(f.Name) || names[f.Name] {
			return s.deviation(http.StatusBadRequest, "invalid_request_error", "tools[%d].function.name %q is not a distinct ^[a-zA-Z0-9_-]{1,64}$ name", i, f.Name)
		}
		names[f.Name] = true
		if f.Parameters != nil && f.Parameters["type"] != "object" {
			return s.deviation(http.StatusBadRequest, "invalid_request_error", "tools[%d].function.parameters is not a JSON schema of type object", i)
		}
		req.Tools = append(req.Tools, llm.Tool{Name: f.Name, Description: f.Description, Parameters: f.Parameters})
	}
	if len(choice) == 0 || string(choice) == "null" {
		return nil
	}
	if len(tools) == 0 {
		return s.deviation(http.StatusBadRequest, "invalid_request_error", "tool_choice is only allowed when tools are specified")
	}
	var mode string
	if json.Unmarshal(choice, &mode) == nil {
		modes := []string{"auto", "none", "required"}
		if p.dialect == data.LLMMistral {
			modes = append(modes, "any")
		}
		if !slices.Contains(modes, mode) {
			return s.deviation(http.StatusBadRequest, "invalid_request_error", "tool_choice %q is not one of %v", mode, modes)
		}
		if mode == "any" {
			mode = "required"
		}
		req.ToolChoice = llm.ToolChoice{Mode: mode}
		return nil
	}
	var named struct {
		Type     string `json:"type"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	dec := json.NewDecoder(bytes.NewReader(choice))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&named); err != nil || named.Type != "function" || !names[named.Function.Name] {
		return s.deviation(http.StatusBadRequest, "invalid_request_error", "tool_choice %s does not name an offered function", choice)
	}
	req.ToolChoice = llm.ToolChoice{Mode: "tool", Name: named.Function.Name}
	return nil
}

// checkMessages verifies the messages (roles, contents, tool calls and the results that
// answer them) and parses them into req.
func (p *openAIProtocol) checkMessages(s *Server, raw []json.RawMessage, req *Request) *refusal {
	if len(raw) == 0 {
		return s.deviation(http.StatusBadRequest, "invalid_request_error", "messages is empty")
	}
	calls := map[string]bool{} // ids of the calls made so far
	var system []string
	for i, r := range raw {
		var m oaMessage
		dec := json.NewDecoder(bytes.NewReader(r))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&m); err != nil {
			return s.deviation(http.StatusBadRequest, "invalid_request_error", "messages[%d]: %v", i, err)
		}
		content, isText := textContent(m.Content)
		if !isText && !(m.Role == "assistant" && len(m.ToolCalls) > 0 && isNull(m.Content)) {
			return s.deviation(http.StatusBadRequest, "invalid_request_error", "messages[%d].content is not text", i)
		}
		bad := func(format string, args ...any) *refusal {
			return s.deviation(http.StatusBadRequest, "invalid_request_error", "messages[%d]: %s", i, fmt.Sprintf(format, args...))
		}
		switch m.Role {
		case "system":
			system = append(system, content)
		case "user":
			req.Messages = append(req.Messages, llm.Message{Role: llm.RoleUser, Content: content})
		case "assistant":
			msg := llm.Message{Role: llm.RoleAssistant, Content: content}
			for j, c := range m.ToolCalls {
				if ref := p.checkCall(c); ref != "" {
					return bad("tool_calls[%d]: %s", j, ref)
				}
				calls[c.ID] = true
				msg.ToolCalls = append(msg.ToolCalls, llm.ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments})
			}
			req.Messages = append(req.Messages, msg)
		case "tool":
			if !calls[m.ToolCallID] {
				return bad("tool_call_id %q answers no call made before it", m.ToolCallID)
			}
			req.Messages = append(req.Messages, llm.Message{Role: llm.RoleTool, Content: content, ToolCallID: m.ToolCallID, ToolName: m.Name})
		default:
			return bad("role %q", m.Role)
		}
	}
	req.System = strings.Join(system, "\n\n")
	return nil
}

// checkCall verifies a tool call the conversation sends back; "" when it is right.
func (p *openAIProtocol) checkCall(c oaToolCall) string {
	switch {
	case p.dialect == data.LLMMistral && !mistralIDRe.MatchString(c.ID):
		return fmt.Sprintf("Tool call id was %s but must be a-z, A-Z, 0-9, with a length of 9.", c.ID)
	case c.ID == "":
		return "no id"
	case p.dialect != data.LLMMistral && c.Type != "function":
		return fmt.Sprintf("type %q, want function", c.Type)
	case c.Function.Name == "":
		return "no function name"
	case !json.Valid([]byte(c.Function.Arguments)):
		return fmt.Sprintf("arguments %q are not JSON", c.Function.Arguments)
	}
	return ""
}

// textContent reads a message's content: a string, or an array of text parts.
func textContent(raw json.RawMessage) (string, bool) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, true
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return "", false
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type != "text" {
			return "", false
		}
		b.WriteString(p.Text)
	}
	return b.String(), true
}

func isNull(raw json.RawMessage) bool { return len(raw) == 0 || string(raw) == "null" }
