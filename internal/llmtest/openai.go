package llmtest

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/llm"
)

// openAIProtocol is chat completions as internal, groq, mistral and azure serve them;
// dialect is the provider, whose differences the checks and answers follow.
type openAIProtocol struct{ dialect string }

func (p *openAIProtocol) check(s *Server, r *http.Request, body []byte) (Request, *refusal) {
	var req Request
	if ref := p.checkHTTP(s, r); ref != nil {
		return req, ref
	}
	return req, p.checkBody(s, body, &req)
}

// refuse writes an error in the dialect's shape: OpenAI's and Groq's
// {"error":{"message","type","param","code"}}, Azure's {"error":{"code","message"}},
// Mistral's {"object":"error",...} (and its gateway's bare {"message"} for a bad key).
func (p *openAIProtocol) refuse(w http.ResponseWriter, f refusal) {
	var body any
	switch p.dialect {
	case data.LLMAzure:
		code := f.kind
		if code == "" || code == "invalid_request_error" {
			code = strconv.Itoa(f.status)
		}
		body = map[string]any{"error": map[string]any{"code": code, "message": f.message}}
	case data.LLMMistral:
		if f.status == http.StatusUnauthorized {
			body = map[string]any{"message": f.message, "request_id": "0123456789abcdef0123456789abcdef"}
			break
		}
		var msg any = f.message
		if f.detail != "" {
			msg = json.RawMessage(f.detail)
		}
		body = map[string]any{"object": "error", "message": msg, "type": orDefault(f.kind, openAIErrorType(f.status)), "param": nil, "code": nil}
	default:
		code := any(nil)
		if f.kind == "invalid_api_key" || f.kind == "model_not_found" || f.kind == "rate_limit_exceeded" {
			code = f.kind
		}
		typ := f.kind
		if code != nil || typ == "" {
			typ = openAIErrorType(f.status)
		}
		body = map[string]any{"error": map[string]any{"message": f.message, "type": typ, "param": nil, "code": code}}
	}
	w.Header().Set("Content-Type", "application/json")
	if f.status == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", "1")
	}
	w.WriteHeader(f.status)
	json.NewEncoder(w).Encode(body)
}

func openAIErrorType(status int) string {
	switch {
	case status == http.StatusTooManyRequests:
		return "rate_limit_error"
	case status >= 500:
		return "server_error"
	}
	return "invalid_request_error"
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// answer writes reply as a completion, or as a stream of chunks when the request streams.
func (p *openAIProtocol) answer(s *Server, w http.ResponseWriter, req Request, reply Reply) {
	id := s.nextID()
	calls := p.withIDs(s, reply.ToolCalls)
	if req.Stream {
		p.stream(s, w, req, reply, id, calls)
		return
	}
	usage := reply.usage(req)
	msg := map[string]any{"role": "assistant", "content": reply.Text}
	if len(calls) > 0 {
		msg["tool_calls"] = p.toolCalls(calls, false)
	}
	if p.dialect == data.LLMMistral && len(calls) > 0 && reply.Text == "" {
		msg["content"] = ""
	} else if p.dialect != data.LLMMistral {
		msg["refusal"] = nil
	}
	choice := map[string]any{"index": 0, "message": msg, "finish_reason": p.finishReason(reply.stopReason()), "logprobs": nil}
	if p.dialect == data.LLMAzure {
		choice["content_filter_results"] = azureFilterResults()
	}
	body := p.envelope(s, "chat.completion", id)
	body["choices"] = []any{choice}
	body["usage"] = openAIUsage(usage)
	if p.dialect == data.LLMAzure {
		body["prompt_filter_results"] = []any{map[string]any{"prompt_index": 0, "content_filter_results": azureFilterResults()}}
	}
	if p.dialect == data.LLMGroq {
		body["x_groq"] = map[string]any{"id": fmt.Sprintf("req_%026d", id)}
	}
	out, _ := json.Marshal(body)
	w.Header().Set("Content-Type", "application/json")
	switch {
	case reply.Malformed:
		w.WriteHeader(http.StatusOK)
		w.Write(out[:len(out)/2]) // a JSON document that stops halfway
	case reply.Cut:
		w.Header().Set("Content-Length", strconv.Itoa(len(out)))
		w.WriteHeader(http.StatusOK)
		flushed(w, out[:len(out)/2])
		cut()
	default:
		w.WriteHeader(http.StatusOK)
		w.Write(out)
	}
}

// envelope is the members every completion and chunk of the dialect carries.
func (p *openAIProtocol) envelope(s *Server, object string, id int) map[string]any {
	model := s.Model
	if p.dialect == data.LLMAzure {
		model = "gpt-4o-2024-11-20" // Azure names the deployed model version
	}
	body := map[string]any{"id": fmt.Sprintf("chatcmpl-%08d", id), "object": object, "created": time.Now().Unix(), "model": model}
	if p.dialect != data.LLMMistral {
		body["system_fingerprint"] = "fp_llmtest"
	}
	return body
}

// withIDs gives calls without an id one in the dialect's form: Mistral's nine letters and
// digits, OpenAI's call_ and 24 more.
func (p *openAIProtocol) withIDs(s *Server, calls []llm.ToolCall) []llm.ToolCall {
	out := append([]llm.ToolCall(nil), calls...)
	for i := range out {
		if out[i].ID != "" {
			continue
		}
		sum := sha256.Sum256([]byte(fmt.Sprintf("%s-%d", s.Provider, s.nextID())))
		id := make([]byte, 24)
		for j := range id {
			id[j] = idAlphabet[int(sum[j])%len(idAlphabet)]
		}
		if p.dialect == data.LLMMistral {
			out[i].ID = string(id[:9])
		} else {
			out[i].ID = "call_" + string(id)
		}
		if out[i].Arguments == "" {
			out[i].Arguments = "{}"
		}
	}
	return out
}

const idAlphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// toolCalls renders calls: with index in a stream; Mistral's without type.
func (p *openAIProtocol) toolCalls(calls []llm.ToolCall, indexed bool) []any {
	var out []any
	for i, c := range calls {
		tc := map[string]any{"id": c.ID, "function": map[string]any{"name": c.Name, "arguments": c.Arguments}}
		if p.dialect != data.LLMMistral {
			tc["type"] = "function"
		}
		if indexed || p.dialect == data.LLMMistral {
			tc["index"] = i
		}
		out = append(out, tc)
	}
	return out
}

// finishReason writes a normalized stop reason in the protocol's words.
func (p *openAIProtocol) finishReason(reason string) string {
	switch reason {
	case "tool_calls", "length", "stop":
		return reason
	}
	return "content_filter"
}

func openAIUsage(u llm.Usage) map[string]any {
	return map[string]any{"prompt_tokens": u.InputTokens, "completion_tokens": u.OutputTokens, "total_tokens": u.InputTokens + u.OutputTokens}
}

func azureFilterResults() map[string]any {
	safe := map[string]any{"filtered": false, "severity": "safe"}
	return map[string]any{"hate": safe, "self_harm": safe, "sexual": safe, "violence": safe}
}
