package llm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/llm"
)

// splitReader hands out its stream in reads of the sizes it cycles through (1 to 256
// bytes), as a network does: a line, an event or a UTF-8 sequence may end anywhere.
type splitReader struct {
	rest  []byte
	sizes []byte
	n     int
}

func (r *splitReader) Read(p []byte) (int, error) {
	if len(r.rest) == 0 {
		return 0, io.EOF
	}
	size := 1
	if len(r.sizes) > 0 {
		size = int(r.sizes[r.n%len(r.sizes)]) + 1
		r.n++
	}
	size = min(size, len(p), len(r.rest))
	copy(p, r.rest[:size])
	r.rest = r.rest[size:]
	return size, nil
}

func (r *splitReader) Close() error { return nil }

// splitTransport answers a streaming request with the stream, read through a splitReader.
type splitTransport struct {
	stream []byte
	sizes  []byte
}

func (s splitTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}},
		Body: &splitReader{rest: s.stream, sizes: s.sizes}, Request: req}, nil
}

// streamLayout picks how an OpenAI-compatible server writes the same events: each bit a
// form the SSE format allows (WHATWG) and some server uses.
type streamLayout uint8

const (
	layoutCRLF       streamLayout = 1 << iota // lines end in CRLF (Azure behind some proxies)
	layoutComments                            // ": keep-alive" comments between events (OpenRouter)
	layoutNoSpace                             // "data:{…}" without the space (vLLM, llama.cpp)
	layoutMultiLine                           // each event's JSON over several data lines
	layoutNoDone                              // no "data: [DONE]" at the end (Ollama's older versions)
	layoutEventField                          // an "event: chunk" field before the data
	layoutRepeatID                            // every tool call delta repeats the call's id
)

// openAIStream writes a streamed reply: the text in pieces cut at cuts, then one tool
// call whose arguments come in pieces (when name is not empty), then the finish and the
// usage, in the given layout.
func openAIStream(layout streamLayout, text []string, name string, args []string, in, out uint16) []byte {
	var events []any
	delta := func(d map[string]any, finish any) map[string]any {
		return map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "m",
			"choices": []any{map[string]any{"index": 0, "delta": d, "finish_reason": finish}}}
	}
	events = append(events, delta(map[string]any{"role": "assistant", "content": ""}, nil))
	for _, t := range text {
		events = append(events, delta(map[string]any{"content": t}, nil))
	}
	finish := "stop"
	if name != "" {
		finish = "tool_calls"
		for i, a := range args {
			call := map[string]any{"index": 0, "function": map[string]any{"arguments": a}}
			if i == 0 || layout&layoutRepeatID != 0 {
				call["id"], call["type"] = "call_1", "function"
			}
			if i == 0 {
				call["function"].(map[string]any)["name"] = name
			}
			events = append(events, delta(map[string]any{"tool_calls": []any{call}}, nil))
		}
	}
	events = append(events, delta(map[string]any{}, finish))
	events = append(events, map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "m", "choices": []any{},
		"usage": map[string]any{"prompt_tokens": in, "completion_tokens": out, "total_tokens": int(in) + int(out)}})

	eol, field := "\n", "data: "
	if layout&layoutCRLF != 0 {
		eol = "\r\n"
	}
	if layout&layoutNoSpace != 0 {
		field = "data:"
	}
	var b bytes.Buffer
	for _, e := range events {
		if layout&layoutComments != 0 {
			b.WriteString(": keep-alive" + eol + eol)
		}
		if layout&layoutEventField != 0 {
			b.WriteString("event: chunk" + eol)
		}
		var enc []byte
		if layout&layoutMultiLine != 0 {
			enc, _ = json.MarshalIndent(e, "", " ")
		} else {
			enc, _ = json.Marshal(e)
		}
		for line := range strings.SplitSeq(string(enc), "\n") {
			b.WriteString(field + line + eol)
		}
		b.WriteString(eol)
	}
	if layout&layoutNoDone == 0 {
		b.WriteString(field + "[DONE]" + eol + eol)
	}
	return b.Bytes()
}

// cutAt splits s into pieces at the byte offsets cuts gives (each taken modulo what is
// left), so a piece may end inside a UTF-8 sequence, as a model's tokens do.
func cutAt(s string, cuts []byte) []string {
	var out []string
	for _, c := range cuts {
		if len(s) == 0 {
			break
		}
		n := int(c) % (len(s) + 1)
		out = append(out, s[:n])
		s = s[n:]
	}
	return append(out, s)
}

// FuzzStreamSplit: a streamed reply from an OpenAI-compatible server (Groq's adapter, the
// one every OpenAI-compatible provider shares), written in any layout the SSE format
// allows and handed to the client in reads cut at any byte, decodes to the reply it
// carries: the text joined from its deltas, the tool call with its name and its arguments
// joined, the usage, the stop reason. The same as the stream unsplit, in one read.
// (Garbage is FuzzAnswers' part: a reply or an *llm.Error, never a panic.)
func FuzzStreamSplit(f *testing.F) {
	f.Add(uint8(0), "Hello there, how can I help?", []byte{5, 7}, "", `{}`, []byte{}, uint16(10), uint16(8), []byte{0})
	f.Add(uint8(0x7f), "Ok.", []byte{1}, "book_table", `{"people":2,"time":"20:00"}`, []byte{3, 9, 1}, uint16(1), uint16(0), []byte{2, 0, 200})
	f.Add(uint8(layoutCRLF|layoutMultiLine), "Prix: 12 €\n\nnext line\r\n", []byte{9, 1}, "end_call", `{"reason":"done\n"}`, []byte{1}, uint16(0), uint16(0), []byte{})
	f.Add(uint8(layoutNoSpace|layoutComments|layoutRepeatID), "data: [DONE]\n\n", []byte{3}, "f", `{"a":"\r\n: x"}`, []byte{4, 4}, uint16(65535), uint16(1), []byte{0, 1})
	f.Fuzz(func(t *testing.T, layout uint8, text string, textCuts []byte, name, args string, argCuts []byte, in, out uint16, sizes []byte) {
		if len(textCuts) > 64 || len(argCuts) > 64 || len(sizes) > 64 {
			return
		}
		stream := openAIStream(streamLayout(layout), cutAt(text, textCuts), name, cutAt(args, argCuts), in, out)
		whole := completeStream(t, stream, nil)
		split := completeStream(t, stream, sizes)
		if whole.err != nil {
			t.Fatalf("a well-formed stream failed: %v\n%q", whole.err, stream)
		}
		if split.err != nil || !reflect.DeepEqual(split.reply, whole.reply) || split.text != whole.text {
			t.Fatalf("split in reads of %v: %+v (text %q, err %v), unsplit %+v (text %q)\n%q", sizes, split.reply, split.text, split.err, whole.reply, whole.text, stream)
		}
		// What json.Marshal sent: invalid UTF-8 is replaced, in each piece alone.
		wantText := strings.Join(mapStrings(cutAt(text, textCuts), jsonRoundTrip), "")
		wantCalls := []llm.ToolCall(nil)
		stop := "stop"
		if name != "" {
			wantCalls = []llm.ToolCall{{ID: "call_1", Name: jsonRoundTrip(name), Arguments: strings.Join(mapStrings(cutAt(args, argCuts), jsonRoundTrip), "")}}
			stop = "tool_calls"
		}
		var wantUsage llm.Usage
		if int(in)+int(out) > 0 {
			wantUsage = llm.Usage{InputTokens: int(in), OutputTokens: int(out)}
		}
		got := whole.reply
		if got.Text != wantText || whole.text != wantText || !reflect.DeepEqual(got.ToolCalls, wantCalls) || got.Usage != wantUsage || got.StopReason != stop {
			t.Fatalf("decoded %+v (streamed text %q), want text %q, calls %+v, usage %+v, stop %s\n%q", got, whole.text, wantText, wantCalls, wantUsage, stop, stream)
		}
	})
}

type streamed struct {
	reply llm.Reply // timings zeroed
	text  string    // what onText was given, joined
	err   error
}

func completeStream(t *testing.T, stream, sizes []byte) streamed {
	c, err := llm.New(llm.Config{Provider: data.LLMGroq, Model: "m", APIKey: "k"},
		llm.Options{HTTPClient: &http.Client{Transport: splitTransport{stream: stream, sizes: sizes}}})
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	reply, err := c.Complete(context.Background(), llm.Request{Messages: hi, Tools: []llm.Tool{endCall}},
		func(d string) error { text.WriteString(d); return nil })
	var s streamed
	s.text, s.err = text.String(), err
	if reply != nil {
		s.reply = *reply
		s.reply.FirstToken, s.reply.Total = 0, 0
	}
	return s
}

func jsonRoundTrip(s string) string {
	b, _ := json.Marshal(s)
	var out string
	json.Unmarshal(b, &out)
	return out
}

func mapStrings(in []string, f func(string) string) []string {
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = f(s)
	}
	return out
}
