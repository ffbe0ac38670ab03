package bolt

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
)

// An event whose payload equals its workspace's previous event's is stored as a reference
// to the event holding it, reads back with the same bytes, and keeps its form and payload
// through a relink; any other payload, or the same payload after a different one, or
// another workspace's, is stored whole.
func TestEventReferences(t *testing.T) {
	db := openInternal(t, &clock{time.Now()})
	payload := []byte(`{"id":"call_1","transcript":"` + strings.Repeat("hello there ", 20) + `"}`)
	other := []byte(`{"id":"call_2","transcript":"` + strings.Repeat("goodbye now ", 20) + `"}`)
	small := []byte(`{"id":"call_3"}`)
	events := []struct {
		ws     string
		data   []byte
		holder int // index of the event it must reference, -1 for none
	}{
		{"ws_1", payload, -1},
		{"ws_1", payload, 0},
		{"ws_1", payload, 0}, // the holder of its predecessor, never a reference
		{"ws_2", payload, -1},
		{"ws_1", other, -1},
		{"ws_1", payload, -1}, // equal to an older one, not to the previous one
		{"ws_1", small, -1},
		{"ws_1", small, -1}, // too small to reference
	}
	ids := make([]string, len(events))
	for i, ev := range events {
		ids[i] = db.ids.New(data.PrefixEvent)
		e := &data.Event{ID: ids[i], Type: "call.ended", CreatedAt: data.NewTime(time.Now()), WorkspaceID: ev.ws,
			Actor: data.Actor{Type: "system"}, Data: ev.data, PrevHash: "k1:prev", Hash: "k1:hash"}
		if err := db.bolt.Update(func(tx *bbolt.Tx) error { return db.appendEvent(tx, e) }); err != nil {
			t.Fatal(err)
		}
	}
	err := db.bolt.Update(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketEvents)
		for i, ev := range events {
			v := b.Get([]byte(ids[i]))
			isRef := v[0] == markEventRef
			if isRef != (ev.holder >= 0) {
				t.Errorf("event %d: stored as a reference %v, want %v", i, isRef, ev.holder >= 0)
			}
			if isRef {
				holder, _, err := splitEventRef(v)
				if err != nil || holder != ids[ev.holder] {
					t.Errorf("event %d references %s (%v), want %s", i, holder, err, ids[ev.holder])
				}
			}
			e, err := readEvent(tx, ids[i])
			if err != nil || !bytes.Equal(e.Data, ev.data) || e.ID != ids[i] || e.WorkspaceID != ev.ws || e.Hash != "k1:hash" {
				t.Fatalf("event %d reads %+v, %v", i, e, err)
			}
		}
		if err := relinkEvent(b, ids[1], "k1:p2", "k1:h2"); err != nil {
			return err
		}
		if v := b.Get([]byte(ids[1])); v[0] != markEventRef {
			t.Error("a relinked reference was stored whole")
		}
		e, err := readEvent(tx, ids[1])
		if err != nil || !bytes.Equal(e.Data, payload) || e.PrevHash != "k1:p2" || e.Hash != "k1:h2" {
			t.Errorf("relinked reference reads %+v, %v", e, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
