package server

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/ssetest"
)

// sseEvent is one event as a browser's EventSource dispatches it.
type sseEvent = ssetest.Event

// parseSSE reads a stream as the WHATWG parser of internal/ssetest does.
func parseSSE(stream []byte) []sseEvent {
	events, _ := ssetest.Parse(stream)
	return events
}

// FuzzEventStream writes events of any id, type and data (CR, LF, CRLF, NUL, invalid
// UTF-8) through the event stream's writer, and a reply's text delta through the
// conversation stream's, then reads the bytes as the WHATWG parser above does. Property:
// the parser gets back exactly the events written, in order, each with its id, type and
// data (the envelope webhooks get, a byte that is not UTF-8 as U+FFFD, as a JSON reader
// takes it); no value injects a field or an event. An event whose
// id or type no event stream can carry (a line break, NUL, invalid UTF-8, an empty type)
// is refused with an error and writes nothing.
func FuzzEventStream(f *testing.F) {
	f.Add("evt_01JD0000000000000000000000", "call.ended", `{"call_id":"call_1"}`, "Hello")
	f.Add("evt_1", "agent.updated", `{"name":"a\nb\r\nc\u0000"}`, "two\nlines\r\n")
	f.Add("evt_1\nevent: x", "call.ended", `{}`, "\r")
	f.Add("evt_1", "call.ended\r\ndata: {}\r\n\r\n", `null`, "\x00\xff")
	f.Add(" evt", "a", `"\u2028"`, "data: x\n\n")
	f.Add("evt\x00", "", `[1,2]`, "")
	f.Add("\xff", "\xfe", `{"a":"\xff"}`, "\ufeff")
	f.Fuzz(func(t *testing.T, id, typ, payload, delta string) {
		raw := json.RawMessage(payload)
		if !json.Valid(raw) {
			b, _ := json.Marshal(payload)
			raw = b
		}
		events := []*data.Event{
			{ID: "evt_before", Type: "call.started", Data: json.RawMessage(`{"n":1}`)},
			{ID: id, Type: typ, Data: raw, WorkspaceID: id, Actor: data.Actor{Type: typ}},
			{ID: "evt_after", Type: "call.ended", Data: json.RawMessage(`{"n":2}`)},
		}
		checkEventStream(t, events)
		checkReplyDelta(t, delta)
	})
}

// deadlineRecorder records a response and takes write deadlines, as a server's
// connection does.
type deadlineRecorder struct{ *httptest.ResponseRecorder }

func (deadlineRecorder) SetWriteDeadline(time.Time) error { return nil }

func newRecordingSSE() (*httptest.ResponseRecorder, *sseWriter) {
	rec := httptest.NewRecorder()
	w := deadlineRecorder{rec}
	return rec, &sseWriter{w: w, rc: http.NewResponseController(w), stall: time.Minute, closing: context.Background()}
}

func checkEventStream(t *testing.T, events []*data.Event) {
	rec, sw := newRecordingSSE()
	var want []sseEvent
	var refused bool
	for _, e := range events {
		// The parser's own view of a field that reads back: valid UTF-8, no line end, no NUL.
		// (each alone: "\xd3" and "\x80" are invalid, joined they are U+04C0).
		if !utf8.ValidString(e.ID) || !utf8.ValidString(e.Type) || strings.ContainsAny(e.ID+e.Type, "\r\n\x00") || e.Type == "" {
			refused = true
			break
		}
		env, err := e.Envelope()
		if err != nil {
			t.Fatalf("envelope of %+v: %v", e, err)
		}
		// The data a JSON reader reads from the envelope: each byte that is not UTF-8
		// as U+FFFD (encoding/json's own reading, checked below).
		data := strings.Map(func(r rune) rune { return r }, string(env))
		var fromEnv, fromData any
		if json.Unmarshal(env, &fromEnv) != nil || json.Unmarshal([]byte(data), &fromData) != nil || !reflect.DeepEqual(fromEnv, fromData) {
			t.Fatalf("the envelope %q does not read as %q", env, data)
		}
		want = append(want, sseEvent{ID: e.ID, Type: e.Type, Data: data})
	}
	err := sw.events(events)
	if refused != (err != nil) {
		t.Fatalf("writer error %v, want refused=%v (id %q, type %q)", err, refused, events[1].ID, events[1].Type)
	}
	got := parseSSE(rec.Body.Bytes())
	if len(got) != len(want) {
		t.Fatalf("parsed %d events, wrote %d:\n%q\nparsed %q", len(got), len(want), rec.Body.String(), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("event %d parsed as %q, wrote %q\nstream %q", i, got[i], want[i], rec.Body.String())
		}
	}
	if !bytes.HasSuffix(rec.Body.Bytes(), []byte("\n\n")) && rec.Body.Len() > 0 {
		t.Fatalf("the stream does not end on an event's end: %q", rec.Body.String())
	}
}

// checkReplyDelta streams a reply's text through the conversation stream: one delta
// event whose data reads as the text (invalid UTF-8 as encoding/json replaces it).
func checkReplyDelta(t *testing.T, delta string) {
	rec, sw := newRecordingSSE()
	ms := &messageStream{w: sw.w, sw: sw}
	if err := ms.item(&data.ConversationItem{Role: data.ItemUser, Content: delta}); err != nil {
		t.Fatal(err)
	}
	if err := ms.text(delta); err != nil {
		t.Fatal(err)
	}
	got := parseSSE(rec.Body.Bytes())
	if len(got) != 2 || got[0].Type != "item" || got[1].Type != "delta" {
		t.Fatalf("parsed %q from %q, want an item then a delta", got, rec.Body.String())
	}
	want, _ := json.Marshal(delta)
	var text string
	json.Unmarshal(want, &text)
	var item data.ConversationItem
	if err := json.Unmarshal([]byte(got[0].Data), &item); err != nil || item.Content != text {
		t.Fatalf("item data %q (%v), want the content %q", got[0].Data, err, text)
	}
	var d struct{ Text string }
	if err := json.Unmarshal([]byte(got[1].Data), &d); err != nil || d.Text != text {
		t.Fatalf("delta data %q (%v), want the text %q", got[1].Data, err, text)
	}
}

// TestSSEWriterFieldsCannotInject: the writer's table of what FuzzEventStream found. An id
// or type no stream can carry is refused and writes nothing; data bytes that are not UTF-8
// go as U+FFFD, each byte one, as a JSON reader takes them.
func TestSSEWriterFieldsCannotInject(t *testing.T) {
	cases := []struct {
		name, id, typ, data string
		want                string // "" when refused
	}{
		{"plain", "evt_1", "call.ended", `{"a":"b"}`,
			`id: evt_1` + "\n" + `event: call.ended` + "\n" + `data: {"id":"evt_1","type":"call.ended","created_at":null,"workspace_id":"","actor":{"type":""},"data":{"a":"b"}}` + "\n\n"},
		{"LF in the id", "evt_1\nevent: x", "call.ended", `{}`, ""},
		{"CR in the id", "evt_1\rdata: x", "call.ended", `{}`, ""},
		{"CRLF CRLF in the type", "evt_1", "call.ended\r\n\r\n", `{}`, ""},
		{"NUL in the id", "evt\x00", "call.ended", `{}`, ""},
		{"invalid UTF-8 in the type", "evt_1", "call.\xff", `{}`, ""},
		{"empty type", "evt_1", "", `{}`, ""},
		{"invalid UTF-8 in the data", "evt_1", "t", "{\"a\":\"\xe2\x82x\x84\"}",
			"id: evt_1\nevent: t\ndata: {\"id\":\"evt_1\",\"type\":\"t\",\"created_at\":null,\"workspace_id\":\"\",\"actor\":{\"type\":\"\"},\"data\":{\"a\":\"\uFFFD\uFFFDx\uFFFD\"}}\n\n"},
	}
	for _, c := range cases {
		rec, sw := newRecordingSSE()
		err := sw.events([]*data.Event{{ID: c.id, Type: c.typ, Data: json.RawMessage(c.data)}})
		if got := rec.Body.String(); got != c.want || (err != nil) != (c.want == "") {
			t.Errorf("%s: wrote %q (err %v), want %q", c.name, got, err, c.want)
		}
	}
}
