package client_test

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/client"
)

// TestEventStreamLastEventID: the id a stream resumes from is the one WHATWG's EventSource
// would send: the last id field read, counted once its message ends, whether or not that
// message had data; an id holding NUL is ignored, an empty one clears it; lines end with
// CRLF, LF or CR.
func TestEventStreamLastEventID(t *testing.T) {
	ev := func(id string) string { return `data: {"id":"` + id + `","type":"t"}` }
	cases := []struct {
		name, resume, stream string
		// ids are the event ids Next returns, then LastEventID once the stream ended.
		ids  []string
		last string
	}{
		{"id on each event", "", "id: a\n" + ev("a") + "\n\nid: b\n" + ev("b") + "\n\n", []string{"a", "b"}, "b"},
		{"id without data, then nothing", "", "id: a\n" + ev("a") + "\n\nid: b\n\n", []string{"a"}, "b"},
		{"id without data, then an event without id", "", "id: a\n\n" + ev("x") + "\n\n", []string{"x"}, "a"},
		{"id without data resumed from", "r", "id: a\n\n", nil, "a"},
		{"empty id clears it", "r", "id\n\n", nil, ""},
		{"id holding NUL ignored", "r", "id: a\x00\n\n", nil, "r"},
		{"id of an unfinished message not counted", "r", "id: a\n", nil, "r"},
		{"CR line ends", "", "id: a\r" + ev("a") + "\r\rid: b\r\r", []string{"a"}, "b"},
		{"CRLF line ends", "", "id: a\r\n" + ev("a") + "\r\n\r\n", []string{"a"}, "a"},
		{"byte order mark", "", "\uFEFFid: a\n" + ev("a") + "\n\n", []string{"a"}, "a"},
	}
	for _, c := range cases {
		st := client.ReadEventStream(strings.NewReader(c.stream), c.resume)
		var ids []string
		for {
			e, err := st.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			ids = append(ids, e.ID)
		}
		if strings.Join(ids, ",") != strings.Join(c.ids, ",") || st.LastEventID() != c.last {
			t.Errorf("%s: events %q, last event id %q; want %q, %q", c.name, ids, st.LastEventID(), c.ids, c.last)
		}
	}
}
