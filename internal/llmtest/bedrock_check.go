package llmtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"slices"
	"strings"

	"github.com/voiceapi/voiceapi/llm"
)

// The Converse request as Bedrock's API reference spells it, decoded strictly: a member
// it does not list is a ValidationException.
type brRequest struct {
	Messages        []brMessage `json:"messages"`
	System          []brText    `json:"system"`
	InferenceConfig *struct {
		MaxTokens     *int     `json:"maxTokens"`
		Temperature   *float64 `json:"temperature"`
		TopP          *float64 `json:"topP"`
		StopSequences []string `json:"stopSequences"`
	} `json:"inferenceConfig"`
	ToolConfig *brToolConfig `json:"toolConfig"`

	GuardrailConfig                   json.RawMessage `json:"guardrailConfig"`
	AdditionalModelRequestFields      json.RawMessage `json:"additionalModelRequestFields"`
	AdditionalModelResponseFieldPaths []string        `json:"additionalModelResponseFieldPaths"`
	PerformanceConfig                 json.RawMessage `json:"performanceConfig"`
	PromptVariables                   json.RawMessage `json:"promptVariables"`
	RequestMetadata                   json.RawMessage `json:"requestMetadata"`
	ServiceTier                       json.RawMessage `json:"serviceTier"`
	OutputConfig                      json.RawMessage `json:"outputConfig"`
}

type brText struct {
	Text *string `json:"text"`
}

type brMessage struct {
	Role    string    `json:"role"`
	Content []brBlock `json:"content"`
}

// brBlock is a content block: a union, exactly one member set.
type brBlock struct {
	Text    *string `json:"text"`
	ToolUse *struct {
		ToolUseID string          `json:"toolUseId"`
		Name      string          `json:"name"`
		Input     json.RawMessage `json:"input"`
	} `json:"toolUse"`
	ToolResult *struct {
		ToolUseID string `json:"toolUseId"`
		Content   []struct {
			Text *string         `json:"text"`
			JSON json.RawMessage `json:"json"`
		} `json:"content"`
		Status string `json:"status"`
	} `json:"toolResult"`
	Image            json.RawMessage `json:"image"`
	Document         json.RawMessage `json:"document"`
	CachePoint       json.RawMessage `json:"cachePoint"`
	ReasoningContent json.RawMessage `json:"reasoningContent"`
}

type brToolConfig struct {
	Tools []struct {
		ToolSpec *struct {
			Name        string  `json:"name"`
			Description *string `json:"description"`
			InputSchema struct {
				JSON map[string]any `json:"json"`
			} `json:"inputSchema"`
		} `json:"toolSpec"`
	} `json:"tools"`
	ToolChoice *struct {
		Auto *struct{} `json:"auto"`
		Any  *struct{} `json:"any"`
		Tool *struct {
			Name string `json:"name"`
		} `json:"tool"`
	} `json:"toolChoice"`
}

// bedrockModelPath splits /model/{modelId}/{operation}.
func bedrockModelPath(escaped string) (model, op string, ok bool) {
	rest, found := strings.CutPrefix(escaped, "/model/")
	if !found {
		return "", "", false
	}
	i := strings.LastIndexByte(rest, '/')
	if i < 0 {
		return "", "", false
	}
	return pathUnescape(rest[:i]), rest[i+1:], true
}

// checkHTTP verifies method, path (the model and the operation), media type and signature.
func (p *bedrockProtocol) checkHTTP(s *Server, r *http.Request, body []byte, req *Request) *refusal {
	if r.Method != http.MethodPost {
		return s.deviation(http.StatusMethodNotAllowed, "ValidationException", "method %s, want POST", r.Method)
	}
	model, op, ok := bedrockModelPath(r.URL.EscapedPath())
	if !ok || (op != "converse" && op != "converse-stream") {
		return s.deviation(http.StatusNotFound, "UnknownOperationException", "path %s is not /model/{modelId}/converse or /converse-stream", r.URL.EscapedPath())
	}
	req.Model, req.Stream = model, op == "converse-stream"
	if model != s.Model {
		return s.deviation(http.StatusBadRequest, "ValidationException", "model %q, want %q (The provided model identifier is invalid.)", model, s.Model)
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return s.deviation(http.StatusBadRequest, "ValidationException", "Content-Type %q, want application/json", r.Header.Get("Content-Type"))
	}
	return p.checkSignature(s, r, body)
}

// checkBody verifies a Converse body as Bedrock does and parses it into req.
func (p *bedrockProtocol) checkBody(s *Server, body []byte, req *Request) *refusal {
	var b brRequest
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil {
		return s.deviation(http.StatusBadRequest, "ValidationException", "the body is not a Converse request: %v", err)
	}
	bad := func(format string, args ...any) *refusal {
		return s.deviation(http.StatusBadRequest, "ValidationException", format, args...)
	}
	var system []string
	for i, t := range b.System {
		if t.Text == nil || strings.TrimSpace(*t.Text) == "" {
			return bad("system.%d.text is blank", i)
		}
		system = append(system, *t.Text)
	}
	req.System = strings.Join(system, "\n\n")
	if c := b.InferenceConfig; c != nil {
		if c.MaxTokens != nil {
			if *c.MaxTokens < 1 {
				return bad("inferenceConfig.maxTokens %d is below 1", *c.MaxTokens)
			}
			req.MaxTokens = *c.MaxTokens
		}
		if c.Temperature != nil && (*c.Temperature < 0 || *c.Temperature > 1) {
			return bad("inferenceConfig.temperature %v is outside 0 to 1", *c.Temperature)
		}
		req.Temperature = c.Temperature
	}
	tools, ref := p.checkToolConfig(s, b.ToolConfig, req)
	if ref != nil {
		return ref
	}
	return p.checkMessages(s, b.Messages, tools, req)
}

// checkToolConfig verifies the tool specifications and the tool choice; it returns the
// names of the tools offered.
func (p *bedrockProtocol) checkToolConfig(s *Server, tc *brToolConfig, req *Request) (map[string]bool, *refusal) {
	names := map[string]bool{}
	if tc == nil {
		return names, nil
	}
	bad := func(format string, args ...any) *refusal {
		return s.deviation(http.StatusBadRequest, "ValidationException", "toolConfig."+format, args...)
	}
	if len(tc.Tools) == 0 {
		return nil, bad("tools is empty")
	}
	for i, t := range tc.Tools {
		spec := t.ToolSpec
		if spec == nil || !toolNameRe.MatchString(spec.Name) || names[spec.Name] {
			return nil, bad("tools.%d is not a toolSpec with a distinct name of ^[a-zA-Z0-9_-]{1,64}$", i)
		}
		if spec.Description != nil && *spec.Description == "" {
			return nil, bad("tools.%d.toolSpec.description is empty", i)
		}
		if spec.InputSchema.JSON == nil || spec.InputSchema.JSON["type"] != "object" {
			return nil, bad("tools.%d.toolSpec.inputSchema.json is not a JSON schema of type object", i)
		}
		names[spec.Name] = true
		desc := ""
		if spec.Description != nil {
			desc = *spec.Description
		}
		req.Tools = append(req.Tools, llm.Tool{Name: spec.Name, Description: desc, Parameters: spec.InputSchema.JSON})
	}
	if c := tc.ToolChoice; c != nil {
		set := 0
		for _, on := range []bool{c.Auto != nil, c.Any != nil, c.Tool != nil} {
			if on {
				set++
			}
		}
		switch {
		case set != 1:
			return nil, bad("toolChoice sets %d members of auto, any and tool", set)
		case c.Auto != nil:
			req.ToolChoice = llm.ToolChoice{Mode: "auto"}
		case c.Any != nil:
			req.ToolChoice = llm.ToolChoice{Mode: "required"}
		case !names[c.Tool.Name]:
			return nil, bad("toolChoice.tool.name %q names no tool", c.Tool.Name)
		default:
			req.ToolChoice = llm.ToolChoice{Mode: "tool", Name: c.Tool.Name}
		}
	}
	return names, nil
}

// checkMessages verifies the conversation as Converse requires it (user first, roles
// alternating, each tool use answered by a result in the next user turn) and parses it.
func (p *bedrockProtocol) checkMessages(s *Server, msgs []brMessage, tools map[string]bool, req *Request) *refusal {
	bad := func(format string, args ...any) *refusal {
		return s.deviation(http.StatusBadRequest, "ValidationException", "messages."+format, args...)
	}
	if len(msgs) == 0 || msgs[0].Role != "user" {
		return bad("0: A conversation must start with a user message. Try again with a conversation that starts with a user message.")
	}
	var pending []string // tool uses the next user turn must answer
	for i, m := range msgs {
		if i > 0 && m.Role == msgs[i-1].Role {
			return bad("%d: A conversation must alternate between user and assistant roles.", i)
		}
		if m.Role != "user" && m.Role != "assistant" {
			return bad("%d.role %q", i, m.Role)
		}
		if len(m.Content) == 0 {
			return bad("%d.content is empty", i)
		}
		var answered []string
		for j, blk := range m.Content {
			ref := p.checkBlock(s, fmt.Sprintf("messages.%d.content.%d", i, j), m.Role, blk, tools, req)
			if ref != nil {
				return ref
			}
			if blk.ToolResult != nil {
				if !slices.Contains(pending, blk.ToolResult.ToolUseID) {
					return bad("%d.content.%d: toolResult %s answers no toolUse of the previous turn", i, j, blk.ToolResult.ToolUseID)
				}
				answered = append(answered, blk.ToolResult.ToolUseID)
			}
		}
		if m.Role == "user" {
			for _, id := range pending {
				if !slices.Contains(answered, id) {
					return bad("%d: Expected toolResult blocks at messages.%d.content for the following Ids: %s", i, i, id)
				}
			}
			pending = nil
		} else {
			for _, blk := range m.Content {
				if blk.ToolUse != nil {
					pending = append(pending, blk.ToolUse.ToolUseID)
				}
			}
		}
	}
	return nil
}

// checkBlock verifies one content block and adds what it says to req's messages.
func (p *bedrockProtocol) checkBlock(s *Server, path, role string, blk brBlock, tools map[string]bool, req *Request) *refusal {
	bad := func(format string, args ...any) *refusal {
		return s.deviation(http.StatusBadRequest, "ValidationException", path+": "+format, args...)
	}
	set := 0
	for _, on := range []bool{blk.Text != nil, blk.ToolUse != nil, blk.ToolResult != nil, blk.Image != nil, blk.Document != nil, blk.CachePoint != nil, blk.ReasoningContent != nil} {
		if on {
			set++
		}
	}
	if set != 1 {
		return bad("a content block sets %d members; it is a union", set)
	}
	switch {
	case blk.Text != nil:
		if strings.TrimSpace(*blk.Text) == "" {
			return bad("The text field in the ContentBlock object is blank. Add text to the text field, and try again.")
		}
		r := llm.RoleUser
		if role == "assistant" {
			r = llm.RoleAssistant
		}
		addMessage(req, llm.Message{Role: r, Content: *blk.Text})
	case blk.ToolUse != nil:
		u := blk.ToolUse
		var input map[string]any
		if role != "assistant" || u.ToolUseID == "" || !tools[u.Name] || json.Unmarshal(u.Input, &input) != nil || input == nil {
			return bad("toolUse %s (%s, input %s) is not an assistant's call of an offered tool with an object input", u.ToolUseID, u.Name, u.Input)
		}
		compact, _ := json.Marshal(input)
		addMessage(req, llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: u.ToolUseID, Name: u.Name, Arguments: string(compact)}}})
	case blk.ToolResult != nil:
		res := blk.ToolResult
		if role != "user" || len(tools) == 0 {
			return bad("a toolResult outside a user turn, or without a toolConfig")
		}
		if res.Status != "" && res.Status != "success" && res.Status != "error" {
			return bad("toolResult.status %q", res.Status)
		}
		var text strings.Builder
		for k, c := range res.Content {
			switch {
			case c.Text != nil && c.JSON == nil && strings.TrimSpace(*c.Text) != "":
				text.WriteString(*c.Text)
			case c.Text == nil && c.JSON != nil:
				text.Write(c.JSON)
			default:
				return bad("toolResult.content.%d is not one non-blank text or json", k)
			}
		}
		req.Messages = append(req.Messages, llm.Message{Role: llm.RoleTool, ToolCallID: res.ToolUseID, Content: text.String(), ToolError: res.Status == "error"})
	default:
		addMessage(req, llm.Message{Role: llm.RoleUser})
	}
	return nil
}

// addMessage adds m to req, joined to the last message when both are the assistant's (a
// turn's text and its tool uses are one message in llm's terms).
func addMessage(req *Request, m llm.Message) {
	if n := len(req.Messages); n > 0 && m.Role == llm.RoleAssistant && req.Messages[n-1].Role == llm.RoleAssistant {
		last := &req.Messages[n-1]
		last.Content += m.Content
		last.ToolCalls = append(last.ToolCalls, m.ToolCalls...)
		return
	}
	req.Messages = append(req.Messages, m)
}
