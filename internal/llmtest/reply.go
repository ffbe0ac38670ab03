package llmtest

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/voiceapi/voiceapi/llm"
)

// Request is a request a stand-in received: the HTTP request as it came, and its body
// parsed into the llm package's terms, the same for every protocol.
type Request struct {
	Provider string
	Method   string
	Path     string
	Query    url.Values
	Header   http.Header
	Body     []byte

	Model string
	// System is the system prompt (OpenAI's system messages, Bedrock's system blocks).
	System     string
	Messages   []llm.Message
	Tools      []llm.Tool
	ToolChoice llm.ToolChoice
	// Temperature is nil when the request left it to the provider.
	Temperature *float64
	MaxTokens   int
	// Stream is true for a streamed request (stream: true, or Bedrock's ConverseStream).
	Stream bool
	// StreamUsage is true when the request asked for usage in the stream
	// (stream_options.include_usage).
	StreamUsage bool
	// ResponseSchema is the structured output asked for (response_format json_schema),
	// nil when the reply may be free text.
	ResponseSchema *llm.ResponseSchema
}

// LastUserText returns the content of the last user message, "" when there is none.
func (r Request) LastUserText() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == llm.RoleUser {
			return r.Messages[i].Content
		}
	}
	return ""
}

// ToolResults returns the tool results that follow the last assistant message: the answers
// to the calls the model made last.
func (r Request) ToolResults() []llm.Message {
	var out []llm.Message
	for i := len(r.Messages) - 1; i >= 0 && r.Messages[i].Role == llm.RoleTool; i-- {
		out = append([]llm.Message{r.Messages[i]}, out...)
	}
	return out
}

// Reply is what a stand-in answers to one request. The zero value is an empty text reply.
type Reply struct {
	// Text is the reply's text; streamed, it goes out a word a chunk.
	Text string
	// ToolCalls are the calls the model makes; an empty ID gets one in the provider's form
	// (Mistral's nine letters and digits, OpenAI's call_..., Bedrock's tooluse_...).
	ToolCalls []llm.ToolCall
	// StopReason is llm's normalized reason ("stop", "tool_calls", "length"), written in
	// the provider's words; "" means tool_calls when there are calls, else stop.
	StopReason string
	// Usage is the tokens reported; nil counts a token a word of the request and reply.
	Usage *llm.Usage

	// Status, with Message and ErrorType, makes the reply a failure in the provider's
	// error shape (ErrorType is the provider's error type or code; "" picks the usual one
	// for the status).
	Status    int
	Message   string
	ErrorType string
	// MidStream sends the failure inside a streamed answer, halfway: an error event
	// (OpenAI-compatible servers) or an exception message (Bedrock). A request that does
	// not stream gets it as an error answer.
	MidStream bool
	// Raw sends Status, ContentType and Body exactly as given.
	Raw         bool
	ContentType string
	Body        string

	// Delay holds the answer back; Hang never answers (until the client gives up).
	Delay time.Duration
	Hang  bool
	// ChunkDelay is the pause between a stream's chunks.
	ChunkDelay time.Duration
	// Cut closes the connection halfway through the answer: mid-stream for a streamed
	// request, mid-body for a whole one.
	Cut bool
	// Malformed sends bytes that are not the protocol's (broken JSON, a broken event).
	Malformed bool
}

// Text is a reply of text.
func Text(text string) Reply { return Reply{Text: text} }

// JSON is a structured output's reply: v written as JSON text, the reply's content, as a
// model held to a response schema answers. A string is sent as it is, so a test can
// script text that is not JSON or does not fit.
func JSON(v any) Reply {
	if s, ok := v.(string); ok {
		return Reply{Text: s}
	}
	b, err := json.Marshal(v)
	if err != nil {
		panic("llmtest.JSON: " + err.Error())
	}
	return Reply{Text: string(b)}
}

// Calls is a reply that calls tools.
func Calls(calls ...llm.ToolCall) Reply { return Reply{ToolCalls: calls} }

// Fail is a failure: status and message in the provider's error shape.
func Fail(status int, message string) Reply { return Reply{Status: status, Message: message} }

// FailMidStream is a failure that comes halfway through a streamed answer.
func FailMidStream(status int, message string) Reply {
	return Reply{Status: status, Message: message, MidStream: true, Text: "the start of a reply that fails"}
}

// Raw is an answer of exactly these bytes.
func Raw(status int, contentType, body string) Reply {
	return Reply{Raw: true, Status: status, ContentType: contentType, Body: body}
}

// Hang never answers: the client's timeout is what ends the request.
func Hang() Reply { return Reply{Hang: true} }

// Cut is reply with its connection closed halfway.
func Cut(reply Reply) Reply {
	reply.Cut = true
	return reply
}

// Malformed is an answer of broken bytes with a success status.
func Malformed() Reply { return Reply{Malformed: true, Text: "never read"} }

// stopReason is the normalized reason the reply ends with.
func (r Reply) stopReason() string {
	switch {
	case r.StopReason != "":
		return r.StopReason
	case len(r.ToolCalls) > 0:
		return "tool_calls"
	}
	return "stop"
}

// usage is the reply's usage: scripted, or counted from the request and reply.
func (r Reply) usage(req Request) llm.Usage {
	if r.Usage != nil {
		return *r.Usage
	}
	in := []string{req.System}
	for _, m := range req.Messages {
		in = append(in, m.Content)
		for _, c := range m.ToolCalls {
			in = append(in, c.Arguments)
		}
	}
	out := []string{r.Text}
	for _, c := range r.ToolCalls {
		out = append(out, c.Name, c.Arguments)
	}
	return llm.Usage{InputTokens: countTokens(in...), OutputTokens: countTokens(out...)}
}

// words splits text into the pieces a stream sends: each word with the space before it.
func words(text string) []string {
	var out []string
	for len(text) > 0 {
		i := strings.IndexByte(strings.TrimLeft(text, " "), ' ')
		lead := len(text) - len(strings.TrimLeft(text, " "))
		if i < 0 {
			out = append(out, text)
			break
		}
		out = append(out, text[:lead+i])
		text = text[lead+i:]
	}
	return out
}
