package bolt

import (
	"bytes"
	"testing"
	"time"
)

// fuzzCursorKey replaces the random cursor key, so that cursors in the seed corpus stay
// valid from run to run.
var fuzzCursorKey = bytes.Repeat([]byte{0x5a}, 32)

// FuzzDecodeCursor: decodeCursor never panics on any string, accepts only the exact
// strings encodeCursor produced for that list, and every cursor it encodes decodes back
// to the same position, for its own list only.
func FuzzDecodeCursor(f *testing.F) {
	db := openInternal(f, &clock{t: time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)})
	db.cursorKey = fuzzCursorKey
	binding := string(bucketAgentsByWS) + "\x00ws_01JD6000000000000000000000"
	foreign := string(bucketAgentsByWS) + "\x00ws_01JD6000000000000000000001"
	for _, id := range []string{"agt_01JD6000000000000000000000", "call_01JD6ZZZZZZZZZZZZZZZZZZZZZ", ""} {
		f.Add(*db.encodeCursor(older, binding, id), id)
		f.Add(*db.encodeCursor(newer, binding, id), id)
	}
	f.Fuzz(func(t *testing.T, cursor, id string) {
		if dir, got, ok := db.decodeCursor(cursor, binding); ok {
			if again := *db.encodeCursor(dir, binding, got); again != cursor {
				t.Fatalf("decodeCursor accepted %q, which is not what it encodes for that position (%q)", cursor, again)
			}
			if _, _, ok := db.decodeCursor(cursor, foreign); ok {
				t.Fatalf("cursor %q decodes for another list too", cursor)
			}
		}
		for _, dir := range []byte{older, newer} {
			c := *db.encodeCursor(dir, binding, id)
			d, got, ok := db.decodeCursor(c, binding)
			if dir == older && id == "" {
				// "Older than nothing" is never produced: the first page has no cursor.
				if ok {
					t.Fatalf("a next-page cursor with an empty id decodes")
				}
				continue
			}
			if !ok || d != dir || got != id {
				t.Fatalf("cursor %q for (%c, %q) decodes as (%c, %q, %v)", c, dir, id, d, got, ok)
			}
			if _, _, ok := db.decodeCursor(c, foreign); ok {
				t.Fatalf("cursor %q decodes for another list", c)
			}
		}
	})
}
