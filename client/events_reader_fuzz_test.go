package client_test

import (
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"testing"

	"github.com/voiceapi/voiceapi/client"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/ssetest"
)

// FuzzEventStreamReader reads any byte stream, opened with any resume id and delivered in
// pieces of any size, through the client's EventStream and through the WHATWG parser of
// internal/ssetest (the oracle FuzzEventStream judges the server's writer by). Property:
// Next returns one result per event the oracle dispatches, in order: the event its data
// decodes to (its type from the event field where the data names none), or an error
// exactly when that data is no JSON event; after each, LastEventID is the oracle's id of
// that event; once the oracle's events are read, Next ends the stream (io.EOF, or
// io.ErrUnexpectedEOF for a line cut short) and LastEventID is the oracle's last event ID,
// which messages without data move too.
func FuzzEventStreamReader(f *testing.F) {
	f.Add("id: evt_1\nevent: call.ended\ndata: {\"id\":\"evt_1\",\"type\":\"call.ended\",\"data\":{}}\n\n: heartbeat\n\n", "", uint8(0))
	f.Add("id: a\n\nid: b\r\rdata: {}\r\n\r\n", "evt_0", uint8(1))
	f.Add("\uFEFFid\ndata\ndata: [1]\n\n", "r", uint8(3))
	f.Add("id: a\x00\ndata: {\"id\":\"\xff\"}\n\nevent: x\ndata: {\"type\":\"\"}\n\ndata: {", "", uint8(2))
	f.Add("data: {\"data\":1}\r", "", uint8(7))
	f.Fuzz(func(t *testing.T, stream, resume string, piece uint8) {
		want, wantLast := ssetest.ParseFrom([]byte(stream), resume)
		st := client.ReadEventStream(&pieceReader{rest: stream, size: int(piece%16) + 1}, resume)
		for i, w := range want {
			got, err := st.Next()
			var e data.Event
			if decodeErr := json.Unmarshal([]byte(w.Data), &e); decodeErr != nil {
				if err == nil {
					t.Fatalf("event %d: data %q is no JSON event, Next returned %+v", i, w.Data, got)
				}
			} else {
				if err != nil {
					t.Fatalf("event %d (%q): %v\nstream %q", i, w.Data, err, stream)
				}
				if e.Type == "" && (got.Type != "" || w.Type != "message") {
					e.Type = w.Type
				}
				if !reflect.DeepEqual(*got, e) {
					t.Fatalf("event %d read as %+v, the oracle's data gives %+v\nstream %q", i, *got, e, stream)
				}
			}
			if st.LastEventID() != w.ID {
				t.Fatalf("after event %d LastEventID is %q, the oracle's id %q\nstream %q", i, st.LastEventID(), w.ID, stream)
			}
		}
		got, err := st.Next()
		if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("after the oracle's %d events Next gave %+v, %v\nstream %q", len(want), got, err, stream)
		}
		if st.LastEventID() != wantLast {
			t.Fatalf("LastEventID %q at the end, the oracle's %q\nstream %q", st.LastEventID(), wantLast, stream)
		}
	})
}

// pieceReader gives its text size bytes per Read, as a network does in its own pieces.
type pieceReader struct {
	rest string
	size int
}

func (r *pieceReader) Read(p []byte) (int, error) {
	if r.rest == "" {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), r.size)], r.rest)
	r.rest = r.rest[n:]
	return n, nil
}
