package bolt

import (
	"bytes"
	"compress/flate"
	"testing"
	"time"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
)

// oldEventForms are the stored forms of schema 1 to 3 of e (whose payload is in holder,
// or in the stored call callID, for the references), built with their own encoders.
func oldEventForms(t *testing.T, e *data.Event, holder, callID string) map[string][]byte {
	raw := e.AppendJSON(nil, true)
	var noDict bytes.Buffer
	noDict.WriteByte(markDeflate)
	w, _ := flate.NewWriter(&noDict, flate.BestSpeed)
	w.Write(raw)
	w.Close()
	return map[string][]byte{
		"plain":              raw,
		"deflated":           noDict.Bytes(),
		"deflated with dict": append([]byte{markDeflateDict1}, deflateWithDict(t, raw)...),
		"event reference":    encodeRef(markEventRef, holder, e),
		"call reference":     encodeRef(markCallRef, callID, e),
	}
}

// TestOldEventFormsStillRead: an event of every form of before reads as it did, through
// readEvent, EventWorkspace and StoredEventJSON, and a relink writes it in the binary form
// (when that can hold it) with the same content.
func TestOldEventFormsStillRead(t *testing.T) {
	db := openInternal(t, &clock{time.Now()})
	ids := testIDs()
	payload := callPayload(t)
	shapes := []struct {
		name   string
		edit   func(e *data.Event)
		binary bool // after a relink
	}{
		{"canonical", func(e *data.Event) {}, true},
		{"non-canonical ids", func(e *data.Event) { e.WorkspaceID, e.Actor.UserID = "ws_1", "usr_1" }, false},
	}
	for _, shape := range shapes {
		for _, form := range []string{"plain", "deflated", "deflated with dict", "event reference", "call reference"} {
			e := baseEvent(ids, payload)
			shape.edit(e)
			holder := baseEvent(ids, payload)
			callID := ids.New(data.PrefixCall)
			stored := oldEventForms(t, e, holder.ID, callID)[form]
			want, err := readToday(t, e)
			if err != nil {
				t.Fatal(err)
			}
			err = db.bolt.Update(func(b *bbolt.Tx) error {
				events := b.Bucket(bucketEvents)
				// The holder in the form of before too.
				if err := events.Put([]byte(holder.ID), encodeValue(holder.AppendJSON(nil, true))); err != nil {
					return err
				}
				if err := b.Bucket(bucketCalls).Put([]byte(callID), encodeValue(payload)); err != nil {
					return err
				}
				if err := events.Put([]byte(e.ID), stored); err != nil {
					return err
				}
				label := shape.name + ", " + form
				checkStoredEvent(t, label, tx{db: db, b: b}, e.ID, want, nil)
				if j, err := StoredEventJSON(e.ID, stored); err != nil || form != "event reference" && form != "call reference" && !bytes.Equal(j, want.AppendJSON(nil, true)) {
					t.Errorf("%s: StoredEventJSON %s, %v", label, j, err)
				}
				if err := relinkEvent(events, e.ID, k1("p"), k1("h")); err != nil {
					return err
				}
				if v := events.Get([]byte(e.ID)); isBinaryEvent(v) != shape.binary {
					t.Errorf("%s: relinked to 0x%02x", label, v[0])
				}
				want.PrevHash, want.Hash = k1("p"), k1("h")
				checkStoredEvent(t, label+", relinked", tx{db: db, b: b}, e.ID, want, nil)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestMaterializeCallRefsEveryForm: a call's referencing events, one in each reference
// form and listed in either list form, are written whole with the call's bytes before it
// changes, and read as before.
func TestMaterializeCallRefsEveryForm(t *testing.T) {
	db := openInternal(t, &clock{time.Now()})
	ids := testIDs()
	payload := callPayload(t)
	callID := ids.New(data.PrefixCall)
	binaryRef, oldRef := baseEvent(ids, payload), baseEvent(ids, payload)
	oldRef.Type = data.EventCallRegistered
	err := db.bolt.Update(func(b *bbolt.Tx) error {
		events, refs := b.Bucket(bucketEvents), b.Bucket(bucketCallEventRefs)
		if err := b.Bucket(bucketCalls).Put([]byte(callID), encodeValue(payload)); err != nil {
			return err
		}
		events.Put([]byte(oldRef.ID), encodeRef(markCallRef, callID, oldRef))
		// The list of schema 3 (uvarint length, text), then one more: rewritten raw.
		refs.Put([]byte(callID), appendRefListText(nil, []string{oldRef.ID}))
		if err := putCallRef(b, events, callID, binaryRef); err != nil {
			return err
		}
		list := refs.Get([]byte(callID))
		if got, err := parseRefList(list); err != nil || len(list) != 33 || list[0] != refListRaw || len(got) != 2 || got[0] != oldRef.ID || got[1] != binaryRef.ID {
			t.Errorf("the list %x reads %v, %v", list, got, err)
		}
		if v := events.Get([]byte(binaryRef.ID)); v[0] != markCallRefBinary {
			t.Errorf("a call reference stored with 0x%02x", v[0])
		}
		if err := materializeCallRefs(b, callID); err != nil {
			return err
		}
		if refs.Get([]byte(callID)) != nil {
			t.Error("the list outlived its materialization")
		}
		for _, e := range []*data.Event{oldRef, binaryRef} {
			if v := events.Get([]byte(e.ID)); v[0] != markEventBinary {
				t.Errorf("%s materialized with 0x%02x", e.Type, v[0])
			}
			want, _ := readToday(t, e)
			checkStoredEvent(t, e.Type+" materialized", tx{db: db, b: b}, e.ID, want, nil)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestRefListForms: lists of both forms read; one holding an id the raw form cannot hold
// is kept as text.
func TestRefListForms(t *testing.T) {
	ids := testIDs()
	a, b := ids.New(data.PrefixEvent), ids.New(data.PrefixEvent)
	raw, err := appendRefList(nil, a)
	if err != nil || len(raw) != 17 || raw[0] != refListRaw {
		t.Fatalf("a new list: %x, %v", raw, err)
	}
	raw, _ = appendRefList(raw, b)
	text, err := appendRefList(raw, "evt_1")
	if err != nil || text[0] == refListRaw {
		t.Fatalf("a list with a non-canonical id: %x, %v", text, err)
	}
	for _, c := range []struct {
		list []byte
		want []string
	}{{raw, []string{a, b}}, {text, []string{a, b, "evt_1"}}, {appendRefListText(nil, []string{a}), []string{a}}} {
		got, err := parseRefList(c.list)
		if err != nil || len(got) != len(c.want) {
			t.Errorf("%x: %v, %v; want %v", c.list, got, err, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%x: %v; want %v", c.list, got, c.want)
			}
		}
	}
	for _, bad := range [][]byte{{refListRaw, 1, 2}, {30, 'e'}, {0x80}} {
		if _, err := parseRefList(bad); err == nil {
			t.Errorf("%x read as a list", bad)
		}
	}
}

// TestAppendEventWritesBinary: appendEvent stores a canonical event in the binary form,
// the next one with the same payload as a binary reference to it, and both read back.
func TestAppendEventWritesBinary(t *testing.T) {
	db := openInternal(t, &clock{time.Now()})
	ids := testIDs()
	payload := callPayload(t)
	first := baseEvent(ids, payload)
	second := baseEvent(ids, payload)
	second.WorkspaceID, second.PrevHash = first.WorkspaceID, first.Hash
	for _, e := range []*data.Event{first, second} {
		if err := db.bolt.Update(func(b *bbolt.Tx) error { return db.appendEvent(b, e) }); err != nil {
			t.Fatal(err)
		}
	}
	db.bolt.View(func(b *bbolt.Tx) error {
		for i, mark := range []byte{markEventBinary, markEventRefBinary} {
			e := []*data.Event{first, second}[i]
			if v := b.Bucket(bucketEvents).Get([]byte(e.ID)); v[0] != mark {
				t.Errorf("event %d stored with 0x%02x, want 0x%02x", i, v[0], mark)
			}
			want, _ := readToday(t, e)
			checkStoredEvent(t, e.ID, tx{db: db, b: b}, e.ID, want, nil)
		}
		return nil
	})
}
