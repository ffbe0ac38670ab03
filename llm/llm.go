// Package llm is voiceapi's language model layer: one small interface for a chat model
// and an adapter per provider protocol (conventions §21). It imports no package of ours
// but data, so the conversation engine, agent tests and post-call analysis all speak to a
// model the same way, and every provider failure reaches a client as the same typed error.
package llm

import (
	"context"
	"time"

	"github.com/voiceapi/voiceapi/data"
)

// Role is who wrote a message.
type Role string

// Message roles. The system prompt is not a message: it is Request.System.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	// RoleTool carries a tool's result back to the model; ToolCallID names the call.
	RoleTool Role = "tool"
)

// Message is one turn of the conversation sent to the model.
type Message struct {
	Role    Role
	Content string
	// ToolCalls are the calls an assistant message made (the model's earlier reply).
	ToolCalls []ToolCall
	// ToolCallID and ToolName name the call a RoleTool message answers.
	ToolCallID string
	ToolName   string
	// ToolError marks a RoleTool message whose content is an error, where the protocol can
	// say so (Bedrock's toolResult status); others read it from the content.
	ToolError bool
}

// Tool is a function the model may call: its parameters are a JSON schema object.
type Tool struct {
	Name        string
	Description string
	Parameters  map[string]any
}

// ToolCall is the model's request to run a tool. Arguments is the JSON text the model
// wrote, unparsed: the caller checks it against the tool's schema.
type ToolCall struct {
	ID        string
	Name      string
	Arguments string
}

// ToolChoice says whether and which tool the model must call.
type ToolChoice struct {
	// Mode is "" or "auto" (the model decides), "none", "required" (some tool), or
	// "tool" (the one named in Name: a forced call, as structured extraction uses).
	Mode string
	Name string
}

// Request is one completion asked of a model.
type Request struct {
	System      string
	Messages    []Message
	Tools       []Tool
	ToolChoice  ToolChoice
	Temperature *float64
	// MaxTokens bounds the reply; 0 leaves the provider's default.
	MaxTokens int
	// ResponseSchema, when set, makes the reply's text one JSON value of this schema
	// (structured output). Only clients StructuredOutput names take it; the others
	// refuse the request with a configuration error.
	ResponseSchema *ResponseSchema
}

// ResponseSchema is a structured output's shape: a name and a JSON schema object, which
// the provider holds the model to strictly (every property required, no other).
type ResponseSchema struct {
	Name   string
	Schema map[string]any
}

// SupportsResponseSchema tells whether provider's protocol has structured output:
// OpenAI-compatible chat completions do (response_format json_schema); Bedrock Converse
// has no such member, so a caller there forces a tool call instead. A configured client
// can know better (an Azure api-version older than structured output): ask
// StructuredOutput.
func SupportsResponseSchema(provider string) bool {
	switch provider {
	case data.LLMInternal, data.LLMGroq, data.LLMMistral, data.LLMAzure:
		return true
	}
	return false
}

// StructuredOutput tells whether c takes a Request's ResponseSchema: its provider's
// protocol has structured output and its configuration does not rule it out.
func StructuredOutput(c Client) bool {
	if s, ok := c.(interface{ structuredOutput() bool }); ok {
		return s.structuredOutput()
	}
	return SupportsResponseSchema(c.Provider())
}

// Usage is the tokens a completion consumed, as the provider counted them.
type Usage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
}

// Add returns the sum of two usages.
func (u Usage) Add(o Usage) Usage {
	return Usage{InputTokens: u.InputTokens + o.InputTokens, OutputTokens: u.OutputTokens + o.OutputTokens}
}

// Reply is a model's answer: text, tool calls or both.
type Reply struct {
	Text      string
	ToolCalls []ToolCall
	// StopReason is the provider's reason normalized: "stop", "tool_calls", "length" or
	// "other".
	StopReason string
	Usage      Usage
	// FirstToken is the time to the first streamed token (the whole reply's time when not
	// streamed); Total is the time to the end of the reply.
	FirstToken time.Duration
	Total      time.Duration
}

// Client is a chat model of one provider and model, configured for one agent.
type Client interface {
	// Complete asks for one reply. When onText is not nil the reply is streamed and
	// onText receives each piece of text as it arrives (tool calls arrive whole, in the
	// Reply); an error from onText stops the stream and is returned. Failures are *Error.
	Complete(ctx context.Context, req Request, onText func(delta string) error) (*Reply, error)
	// Provider names the provider, as llm_config.provider spells it.
	Provider() string
}
