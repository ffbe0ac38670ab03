package llmtest

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"

	"github.com/voiceapi/voiceapi/llm"
)

// bedrockProtocol is Bedrock's Converse (JSON) and ConverseStream (AWS event stream).
type bedrockProtocol struct{}

func (p *bedrockProtocol) check(s *Server, r *http.Request, body []byte) (Request, *refusal) {
	var req Request
	if ref := p.checkHTTP(s, r, body, &req); ref != nil {
		return req, ref
	}
	return req, p.checkBody(s, body, &req)
}

// bedrockErrorTypes are the exception each status stands for when a script names none.
var bedrockErrorTypes = map[int]string{
	400: "ValidationException", 403: "AccessDeniedException", 404: "ResourceNotFoundException",
	408: "ModelTimeoutException", 424: "ModelErrorException", 429: "ThrottlingException",
	500: "InternalServerException", 503: "ServiceUnavailableException",
}

// refuse writes an error as Bedrock does: the exception's name in X-Amzn-ErrorType, the
// message in a JSON body.
func (p *bedrockProtocol) refuse(w http.ResponseWriter, f refusal) {
	kind := f.kind
	if kind == "" {
		kind = bedrockErrorTypes[f.status]
	}
	if kind == "" {
		kind = "InternalServerException"
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amzn-ErrorType", kind+":http://internal.amazon.com/coral/com.amazon.bedrock/")
	w.Header().Set("X-Amzn-RequestId", "6f1b0c5e-1e2a-4d1c-9a39-llmtest00000")
	w.WriteHeader(f.status)
	json.NewEncoder(w).Encode(map[string]string{"message": f.message})
}

func (p *bedrockProtocol) answer(s *Server, w http.ResponseWriter, req Request, reply Reply) {
	calls := bedrockIDs(s, reply.ToolCalls)
	usage := reply.usage(req)
	if req.Stream {
		p.stream(s, w, reply, calls, usage)
		return
	}
	var content []any
	if reply.Text != "" {
		content = append(content, map[string]any{"text": reply.Text})
	}
	for _, c := range calls {
		content = append(content, map[string]any{"toolUse": map[string]any{"toolUseId": c.ID, "name": c.Name, "input": json.RawMessage(c.Arguments)}})
	}
	body, _ := json.Marshal(map[string]any{
		"output":     map[string]any{"message": map[string]any{"role": "assistant", "content": content}},
		"stopReason": bedrockStopReason(reply.stopReason()),
		"usage":      bedrockUsage(usage),
		"metrics":    map[string]any{"latencyMs": 412},
	})
	w.Header().Set("Content-Type", "application/json")
	switch {
	case reply.Malformed:
		w.WriteHeader(http.StatusOK)
		w.Write(body[:len(body)/2])
	case reply.Cut:
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(http.StatusOK)
		flushed(w, body[:len(body)/2])
		cut()
	default:
		w.WriteHeader(http.StatusOK)
		w.Write(body)
	}
}

// stream writes ConverseStream's events in the event stream's binary framing: the
// message start, a text block a word a delta, a tool use block per call (its input in
// three deltas), the message stop and the metadata with usage. Each event carries the "p"
// padding Bedrock adds.
func (p *bedrockProtocol) stream(s *Server, w http.ResponseWriter, reply Reply, calls []llm.ToolCall, usage llm.Usage) {
	type event struct {
		kind    string
		payload map[string]any
	}
	events := []event{{"messageStart", map[string]any{"role": "assistant"}}}
	block := 0
	if reply.Text != "" {
		for _, piece := range words(reply.Text) {
			events = append(events, event{"contentBlockDelta", map[string]any{"contentBlockIndex": block, "delta": map[string]any{"text": piece}}})
		}
		events = append(events, event{"contentBlockStop", map[string]any{"contentBlockIndex": block}})
		block++
	}
	for _, c := range calls {
		events = append(events, event{"contentBlockStart", map[string]any{"contentBlockIndex": block, "start": map[string]any{"toolUse": map[string]any{"toolUseId": c.ID, "name": c.Name}}}})
		for _, piece := range thirds(c.Arguments) {
			events = append(events, event{"contentBlockDelta", map[string]any{"contentBlockIndex": block, "delta": map[string]any{"toolUse": map[string]any{"input": piece}}}})
		}
		events = append(events, event{"contentBlockStop", map[string]any{"contentBlockIndex": block}})
		block++
	}
	events = append(events,
		event{"messageStop", map[string]any{"stopReason": bedrockStopReason(reply.stopReason())}},
		event{"metadata", map[string]any{"usage": bedrockUsage(usage), "metrics": map[string]any{"latencyMs": 412}}})

	w.Header().Set("Content-Type", "application/vnd.amazon.eventstream")
	w.WriteHeader(http.StatusOK)
	enc := eventstream.NewEncoder()
	for i, e := range events {
		if reply.Cut && i == len(events)/2 {
			cut()
		}
		e.payload["p"] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123"[:10+i%20]
		var frame bytes.Buffer
		if reply.MidStream && reply.Status != 0 && i == len(events)/2 { // an exception in the stream
			enc.Encode(&frame, exceptionMessage(reply))
			flushed(w, frame.Bytes())
			return
		}
		payload, _ := json.Marshal(e.payload)
		msg := eventstream.Message{Payload: payload}
		msg.Headers.Set(":event-type", eventstream.StringValue(e.kind))
		msg.Headers.Set(":content-type", eventstream.StringValue("application/json"))
		msg.Headers.Set(":message-type", eventstream.StringValue("event"))
		enc.Encode(&frame, msg)
		if reply.Malformed && i == 1 {
			b := frame.Bytes()
			b[len(b)-1] ^= 0xff // the message's checksum no longer holds
		}
		flushed(w, frame.Bytes())
		if reply.ChunkDelay > 0 {
			select {
			case <-time.After(reply.ChunkDelay):
			case <-s.closing:
				return
			}
		}
	}
}

// exceptionMessage is an exception sent inside the stream, as ConverseStream reports a
// failure after its answer began (throttlingException, modelStreamErrorException, ...).
func exceptionMessage(reply Reply) eventstream.Message {
	kind := reply.ErrorType
	if kind == "" {
		kind = bedrockErrorTypes[reply.Status]
	}
	if kind == "" {
		kind = "InternalServerException"
	}
	kind = string(kind[0]+'a'-'A') + kind[1:] // the stream's member names are lower camel case
	payload, _ := json.Marshal(map[string]string{"message": reply.Message})
	msg := eventstream.Message{Payload: payload}
	msg.Headers.Set(":exception-type", eventstream.StringValue(kind))
	msg.Headers.Set(":content-type", eventstream.StringValue("application/json"))
	msg.Headers.Set(":message-type", eventstream.StringValue("exception"))
	return msg
}

// bedrockIDs gives calls without an id one of Bedrock's form, tooluse_ and 22 more.
func bedrockIDs(s *Server, calls []llm.ToolCall) []llm.ToolCall {
	out := append([]llm.ToolCall(nil), calls...)
	for i := range out {
		if out[i].Arguments == "" {
			out[i].Arguments = "{}"
		}
		if out[i].ID != "" {
			continue
		}
		sum := sha256.Sum256([]byte(fmt.Sprintf("bedrock-%d", s.nextID())))
		id := make([]byte, 22)
		for j := range id {
			id[j] = idAlphabet[int(sum[j])%len(idAlphabet)]
		}
		out[i].ID = "tooluse_" + string(id)
	}
	return out
}

func bedrockStopReason(reason string) string {
	switch reason {
	case "stop":
		return "end_turn"
	case "tool_calls":
		return "tool_use"
	case "length":
		return "max_tokens"
	}
	return "content_filtered"
}

func bedrockUsage(u llm.Usage) map[string]any {
	return map[string]any{"inputTokens": u.InputTokens, "outputTokens": u.OutputTokens, "totalTokens": u.InputTokens + u.OutputTokens}
}
