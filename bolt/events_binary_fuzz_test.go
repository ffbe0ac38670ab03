package bolt

import (
	"bytes"
	"reflect"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
)

// FuzzStoredEvent: an event of arbitrary members, stored whole or as either reference,
// reads back as its JSON form reads (the binary form is chosen only where that holds),
// and arbitrary stored bytes never panic a reader.
func FuzzStoredEvent(f *testing.F) {
	ids := testIDs()
	e := baseEvent(ids, []byte(`{"a":1}`))
	target := ids.New(data.PrefixCall)
	f.Add(e.ID, e.Type, int64(0), int64(0), e.WorkspaceID, "user", e.Actor.UserID, int64(42), "203.0.113.9",
		[]byte(`{"a":1}`), e.PrevHash, e.Hash, target, storeEvent(e))
	f.Add(e.ID, "webhook.test", int64(-5), int64(999_999), e.WorkspaceID, "system", "", int64(0), "",
		[]byte(`null`), "", e.Hash, e.ID, storeRef(markEventRef, ids.New(data.PrefixEvent), e))
	f.Add("evt_1", "x", int64(1)<<40, int64(1), "ws_1", "client", "usr_1", int64(-1), "a\xff",
		[]byte(`{"s":"<\u2028>"}`), "k1:AB", "ab", "call_1", []byte{markCallRefBinary, 1, 2, 3})
	f.Fuzz(func(t *testing.T, id, typ string, deltaMS, subNS int64, ws, actorType, user string, token int64,
		addr string, payload []byte, prev, hash, target string, stored []byte) {
		// Arbitrary stored bytes: an error at worst.
		parseEvent(id, stored)
		if isBinaryEvent(stored) {
			binaryEventWorkspace(stored)
		}
		parseRefList(stored)

		idMS, _ := idMillis(data.PrefixEvent, id)
		at := time.UnixMilli(idMS + deltaMS).Add(time.Duration(subNS % int64(time.Millisecond)))
		e := &data.Event{ID: id, Type: typ, CreatedAt: data.Time{Time: at}, WorkspaceID: ws,
			Actor: data.Actor{Type: actorType, UserID: user, TokenID: token, Address: addr},
			Data:  jsonCompact(payload), PrevHash: prev, Hash: hash}
		want, wantErr := readToday(t, e)
		for _, kind := range []byte{0, markEventRef, markCallRef} {
			v := storeEvent(e)
			if kind != 0 {
				v = storeRef(kind, target, e)
			}
			s, err := parseEvent(id, v)
			if wantErr != nil {
				if isBinaryEvent(v) {
					t.Fatalf("kind %d: the binary form holds an event its JSON cannot (%v)", kind, wantErr)
				}
				continue
			}
			if err != nil {
				t.Fatalf("kind %d: stored as 0x%02x, reads: %v", kind, v[0], err)
			}
			if s.ref != kind || kind != 0 && s.target != target {
				t.Fatalf("kind %d: reads as a reference of kind %d to %q", kind, s.ref, s.target)
			}
			if kind != 0 {
				s.e.Data = want.Data // in another record
			}
			if !reflect.DeepEqual(s.e, want) || !bytes.Equal(s.e.AppendJSON(nil, true), want.AppendJSON(nil, true)) {
				t.Fatalf("kind %d, stored as 0x%02x: reads\n%s\nwant\n%s", kind, v[0], s.e.AppendJSON(nil, true), want.AppendJSON(nil, true))
			}
			if isBinaryEvent(v) {
				if got, err := binaryEventWorkspace(v); err != nil || got != want.WorkspaceID {
					t.Fatalf("kind %d: workspace %q, %v", kind, got, err)
				}
			}
		}
	})
}
