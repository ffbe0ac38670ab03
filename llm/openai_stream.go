package llm

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"
)

// stream asks for the reply as server-sent events: text deltas go to onText as they come,
// tool call deltas are assembled into whole calls.
func (c *openAIClient) stream(ctx context.Context, params openai.ChatCompletionNewParams, onText func(string) error, start time.Time) (*Reply, error) {
	if c.usageOption {
		params.StreamOptions.IncludeUsage = openai.Bool(true)
	}
	s := c.chat.NewStreaming(ctx, params)
	defer s.Close()
	reply := &Reply{}
	var text strings.Builder
	var calls callAssembler
	finish := ""
	for s.Next() {
		chunk := s.Current()
		if u, ok := chunkUsage(chunk); ok {
			reply.Usage = u
		}
		for _, ch := range chunk.Choices {
			if ch.Index != 0 {
				continue // one choice is asked for
			}
			if d := ch.Delta.Content; d != "" {
				if reply.FirstToken == 0 {
					reply.FirstToken = time.Since(start)
				}
				text.WriteString(d)
				if err := onText(d); err != nil {
					return nil, &callbackError{err}
				}
			}
			for _, tc := range ch.Delta.ToolCalls {
				if reply.FirstToken == 0 {
					reply.FirstToken = time.Since(start)
				}
				calls.add(tc)
			}
			if ch.FinishReason != "" {
				finish = ch.FinishReason
			}
		}
	}
	if err := s.Err(); err != nil {
		return nil, streamError(err)
	}
	// A stream that ends without a finish_reason was cut (the server or a proxy closed it
	// between events): its reply may be missing words or a tool call's arguments.
	if finish == "" {
		return nil, &cutError{msg: "the stream was cut before the reply was complete"}
	}
	reply.Text = text.String()
	reply.ToolCalls = calls.calls()
	reply.StopReason = openAIStopReason(finish)
	return reply, nil
}

// streamError classifies a stream's failure: an error event the server sent in the stream
// (vLLM and Groq do, mid-reply) is the provider's message; an event that is not JSON is a
// malformed answer.
func streamError(err error) error {
	var se *ssestream.StreamError
	if errors.As(err, &se) {
		return &cutError{msg: "the stream ended with an error: " + providerMessage(se.Event.Data, 0)}
	}
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	if errors.As(err, &syntax) || errors.As(err, &typ) {
		return &malformedError{"an event of the stream is not valid JSON"}
	}
	return err
}

// chunkUsage reads a chunk's usage: OpenAI's, Azure's, Ollama's and vLLM's in usage,
// Groq's in x_groq.usage.
func chunkUsage(chunk openai.ChatCompletionChunk) (Usage, bool) {
	if chunk.JSON.Usage.Valid() && chunk.Usage.PromptTokens+chunk.Usage.CompletionTokens > 0 {
		return Usage{InputTokens: int(chunk.Usage.PromptTokens), OutputTokens: int(chunk.Usage.CompletionTokens)}, true
	}
	if x, ok := chunk.JSON.ExtraFields["x_groq"]; ok {
		var g struct {
			Usage *struct {
				PromptTokens     int `json:"prompt_tokens"`
				CompletionTokens int `json:"completion_tokens"`
			} `json:"usage"`
		}
		if json.Unmarshal([]byte(x.Raw()), &g) == nil && g.Usage != nil {
			return Usage{InputTokens: g.Usage.PromptTokens, OutputTokens: g.Usage.CompletionTokens}, true
		}
	}
	return Usage{}, false
}

// callAssembler joins tool call deltas into calls. OpenAI splits a call's arguments over
// chunks under one index; Mistral and Groq send each call whole, and some servers give
// every call index 0: a delta with a new id at a known index starts a new call.
type callAssembler struct {
	list    []*ToolCall
	byIndex map[int64]*ToolCall
}

func (a *callAssembler) add(d openai.ChatCompletionChunkChoiceDeltaToolCall) {
	if a.byIndex == nil {
		a.byIndex = map[int64]*ToolCall{}
	}
	cur := a.byIndex[d.Index]
	if cur == nil || (d.ID != "" && cur.ID != "" && d.ID != cur.ID) {
		cur = &ToolCall{}
		a.byIndex[d.Index] = cur
		a.list = append(a.list, cur)
	}
	if cur.ID == "" {
		cur.ID = d.ID
	}
	if cur.Name == "" {
		cur.Name = d.Function.Name
	}
	cur.Arguments += d.Function.Arguments
}

func (a *callAssembler) calls() []ToolCall {
	var out []ToolCall
	for _, c := range a.list {
		out = append(out, ToolCall{ID: orNewCallID(c.ID), Name: c.Name, Arguments: c.Arguments})
	}
	return out
}
