package llmtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/llm"
)

// stream writes reply as server-sent chat.completion.chunk events ending in [DONE]: the
// role, the text a word a chunk, the tool calls (OpenAI's and Azure's split over chunks,
// their arguments in three pieces; Groq's and Mistral's whole, as those send them), the
// finish reason, and the usage where the dialect puts it.
func (p *openAIProtocol) stream(s *Server, w http.ResponseWriter, req Request, reply Reply, id int, calls []llm.ToolCall) {
	chunk := func(delta map[string]any, finish any) map[string]any {
		c := p.envelope(s, "chat.completion.chunk", id)
		choice := map[string]any{"index": 0, "delta": delta, "finish_reason": finish}
		if p.dialect != data.LLMMistral {
			choice["logprobs"] = nil
		}
		c["choices"] = []any{choice}
		return c
	}
	var events []map[string]any
	if p.dialect == data.LLMAzure { // Azure opens with the prompt's filter results
		events = append(events, map[string]any{"id": "", "object": "", "created": 0, "model": "", "choices": []any{},
			"prompt_filter_results": []any{map[string]any{"prompt_index": 0, "content_filter_results": azureFilterResults()}}})
	}
	events = append(events, chunk(map[string]any{"role": "assistant", "content": ""}, nil))
	for _, piece := range words(reply.Text) {
		events = append(events, chunk(map[string]any{"content": piece}, nil))
	}
	events = append(events, p.callChunks(calls, chunk)...)
	usage := reply.usage(req)
	last := chunk(map[string]any{}, p.finishReason(reply.stopReason()))
	switch p.dialect {
	case data.LLMMistral:
		last["usage"] = openAIUsage(usage)
	case data.LLMGroq:
		last["x_groq"] = map[string]any{"id": fmt.Sprintf("req_%026d", id), "usage": openAIUsage(usage)}
	}
	events = append(events, last)
	if req.StreamUsage {
		u := p.envelope(s, "chat.completion.chunk", id)
		u["choices"] = []any{}
		u["usage"] = openAIUsage(usage)
		events = append(events, u)
	}

	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	for i, e := range events {
		if reply.Cut && i == max(len(events)/2, 1) {
			cut()
		}
		if reply.MidStream && reply.Status != 0 && i == max(len(events)/2, 1) {
			b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": reply.Message, "type": orDefault(reply.ErrorType, openAIErrorType(reply.Status)), "code": reply.Status}})
			flushed(w, append(append([]byte("data: "), b...), '\n', '\n'))
			return
		}
		if reply.Malformed && i == 1 {
			flushed(w, []byte("data: {\"id\":\"chatcmpl-broken\",\"choices\":[{\"delta\":{\"content\":\"oops\n\n"))
			continue
		}
		b, _ := json.Marshal(e)
		flushed(w, append(append([]byte("data: "), b...), '\n', '\n'))
		if reply.ChunkDelay > 0 {
			select {
			case <-time.After(reply.ChunkDelay):
			case <-s.closing:
				return
			}
		}
	}
	flushed(w, []byte("data: [DONE]\n\n"))
}

// callChunks are the chunks of the tool calls.
func (p *openAIProtocol) callChunks(calls []llm.ToolCall, chunk func(map[string]any, any) map[string]any) []map[string]any {
	if len(calls) == 0 {
		return nil
	}
	if p.dialect == data.LLMGroq || p.dialect == data.LLMMistral {
		return []map[string]any{chunk(map[string]any{"tool_calls": p.toolCalls(calls, true)}, nil)}
	}
	var out []map[string]any
	for i, c := range calls {
		head := map[string]any{"index": i, "id": c.ID, "type": "function", "function": map[string]any{"name": c.Name, "arguments": ""}}
		out = append(out, chunk(map[string]any{"tool_calls": []any{head}}, nil))
		for _, piece := range thirds(c.Arguments) {
			part := map[string]any{"index": i, "function": map[string]any{"arguments": piece}}
			out = append(out, chunk(map[string]any{"tool_calls": []any{part}}, nil))
		}
	}
	return out
}

// thirds splits s into three pieces (fewer when it is shorter), at character boundaries
// that may fall inside a JSON string: a client must join before it parses.
func thirds(s string) []string {
	r := []rune(s)
	if len(r) < 3 {
		return []string{s}
	}
	a, b := len(r)/3, 2*len(r)/3
	return []string{string(r[:a]), string(r[a:b]), string(r[b:])}
}
