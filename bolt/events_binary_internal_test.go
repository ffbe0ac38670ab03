package bolt

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math"
	mrand "math/rand"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
)

// testIDs makes canonical ids on a fixed clock and seed.
func testIDs() *data.IDGen {
	at := time.Date(2026, 11, 27, 8, 29, 59, 709e6, time.UTC)
	return &data.IDGen{Now: func() time.Time { return at }, Rand: mrand.New(mrand.NewSource(1))}
}

func k1(seed string) string {
	sum := sha256.Sum256([]byte(seed))
	return "k1:" + hex.EncodeToString(sum[:])
}

// baseEvent is an event every member of which the binary form holds.
func baseEvent(ids *data.IDGen, payload []byte) *data.Event {
	id := ids.New(data.PrefixEvent)
	return &data.Event{
		ID: id, Type: data.EventCallEnded, CreatedAt: data.NewTime(data.IDTime(data.PrefixEvent, id)),
		WorkspaceID: ids.New(data.PrefixWorkspace),
		Actor:       data.Actor{Type: "user", UserID: ids.New(data.PrefixUser), TokenID: 42, Address: "203.0.113.9"},
		Data:        payload, PrevHash: k1("prev"), Hash: k1("hash"),
	}
}

// readToday is what the reader of schema 3 returns for e: e's JSON as it stored it, read
// back.
func readToday(t *testing.T, e *data.Event) (data.Event, error) {
	t.Helper()
	var out data.Event
	err := jsonUnmarshal(encodeValue(e.AppendJSON(nil, true)), &out)
	return out, err
}

// eventCase is a shape of an event: an edit of baseEvent, and whether the binary form
// holds it (else the form of before is written).
type eventCase struct {
	name   string
	edit   func(e *data.Event)
	binary bool
}

// eventCases are the shapes of an event.
func eventCases() []eventCase {
	ids := testIDs()
	type c = eventCase
	at := func(e *data.Event) time.Time { return data.IDTime(data.PrefixEvent, e.ID) }
	cases := []c{
		{"every member", func(e *data.Event) {}, true},
		{"system actor", func(e *data.Event) { e.Actor = data.Actor{Type: "system"} }, true},
		{"client actor with an address", func(e *data.Event) { e.Actor = data.Actor{Type: "client", Address: "2001:db8::1"} }, true},
		{"user without a token", func(e *data.Event) { e.Actor.TokenID = 0 }, true},
		{"user without an address", func(e *data.Event) { e.Actor.Address = "" }, true},
		{"token only", func(e *data.Event) { e.Actor = data.Actor{Type: "user", TokenID: 1} }, true},
		{"largest token", func(e *data.Event) { e.Actor.TokenID = math.MaxInt64 }, true},
		{"address with escapes", func(e *data.Event) { e.Actor.Address = "<a&b>\"\\\n\u2028é\x00" }, true},
		{"address not UTF-8", func(e *data.Event) { e.Actor.Address = "a\xffb" }, false},
		{"unknown actor type", func(e *data.Event) { e.Actor.Type = "robot" }, false},
		{"empty actor type", func(e *data.Event) { e.Actor.Type = "" }, false},
		{"non-canonical user id", func(e *data.Event) { e.Actor.UserID = "usr_1" }, false},
		{"negative token", func(e *data.Event) { e.Actor.TokenID = -3 }, false},
		{"created later than its id", func(e *data.Event) { e.CreatedAt = data.NewTime(at(e).Add(90 * 24 * time.Hour)) }, true},
		{"created earlier than its id", func(e *data.Event) { e.CreatedAt = data.NewTime(at(e).Add(-time.Millisecond)) }, true},
		{"created with a sub-millisecond part", func(e *data.Event) { e.CreatedAt = data.Time{Time: at(e).Add(999_999)} }, true},
		{"created in another zone", func(e *data.Event) { e.CreatedAt = data.Time{Time: at(e).In(time.FixedZone("X", 5*3600))} }, true},
		{"created at the epoch", func(e *data.Event) { e.CreatedAt = data.NewTime(time.UnixMilli(0)) }, true},
		{"zero created_at", func(e *data.Event) { e.CreatedAt = data.Time{} }, false},
		{"created before 1970", func(e *data.Event) { e.CreatedAt = data.NewTime(time.UnixMilli(-1)) }, false},
		{"created after 9999", func(e *data.Event) { e.CreatedAt = data.NewTime(time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)) }, false},
		{"first of a chain", func(e *data.Event) { e.PrevHash = "" }, true},
		{"no hash", func(e *data.Event) { e.Hash = "" }, true},
		{"legacy hashes", func(e *data.Event) { e.PrevHash, e.Hash = e.PrevHash[3:], e.Hash[3:] }, false},
		{"upper-case hash", func(e *data.Event) { e.Hash = strings.ToUpper(e.Hash[:3]) + strings.ToUpper(e.Hash[3:]) }, false},
		{"upper-case hex", func(e *data.Event) { e.Hash = "k1:" + strings.ToUpper(e.Hash[3:]) }, false},
		{"short hash", func(e *data.Event) { e.PrevHash = "k1:prev" }, false},
		{"unknown type", func(e *data.Event) { e.Type = "agent.teleported" }, false},
		{"non-canonical event id", func(e *data.Event) { e.ID = "evt_1" }, false},
		{"lower-case event id", func(e *data.Event) { e.ID = strings.ToLower(e.ID) }, false},
		{"event id of another kind", func(e *data.Event) { e.ID = ids.New(data.PrefixCall) }, false},
		{"non-canonical workspace id", func(e *data.Event) { e.WorkspaceID = "ws_a" }, false},
		{"no workspace id", func(e *data.Event) { e.WorkspaceID = "" }, false},
		{"no payload", func(e *data.Event) { e.Data = nil }, true},
		{"null payload", func(e *data.Event) { e.Data = []byte("null") }, true},
		{"short payload", func(e *data.Event) { e.Data = []byte(`{"a":"\u003cb\u003e"}`) }, true},
	}
	for _, typ := range data.EventTypes {
		cases = append(cases, c{"type " + typ, func(e *data.Event) { e.Type = typ }, true})
	}
	return cases
}

func callPayload(t testing.TB) []byte {
	t.Helper()
	raw, err := os.ReadFile("testdata/call.json")
	if err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSpace(raw)
}

// TestStoredEventForms: each shape of an event, stored whole, as a reference to an event
// and as a reference to a call, is stored in the binary form when it can be and else in
// the form of before, and every reader returns what it returned from the form of before:
// the same data.Event, the same JSON, the same workspace; a relink keeps the kind.
func TestStoredEventForms(t *testing.T) {
	db := openInternal(t, &clock{time.Now()})
	ids := testIDs()
	payload := callPayload(t)
	kinds := []struct {
		name          string
		binary, old   byte // first byte of the binary form and of the fallback
		oldIsJSONForm bool
	}{{"whole", markEventBinary, 0, true}, {"event reference", markEventRefBinary, markEventRef, false}, {"call reference", markCallRefBinary, markCallRef, false}}
	for _, c := range eventCases() {
		for _, kind := range kinds {
			e := baseEvent(ids, payload)
			c.edit(e)
			want, wantErr := readToday(t, e)
			err := db.bolt.Update(func(b *bbolt.Tx) error {
				events := b.Bucket(bucketEvents)
				var stored []byte
				switch kind.old {
				case 0:
					stored = storeEvent(e)
				case markEventRef:
					holder := baseEvent(ids, e.Data)
					holder.WorkspaceID = e.WorkspaceID
					if err := events.Put([]byte(holder.ID), storeEvent(holder)); err != nil {
						return err
					}
					stored = storeRef(markEventRef, holder.ID, e)
				case markCallRef:
					callID := ids.New(data.PrefixCall)
					if err := b.Bucket(bucketCalls).Put([]byte(callID), encodeValue(want.Data)); err != nil {
						return err
					}
					stored = storeRef(markCallRef, callID, e)
				}
				switch {
				case c.binary && stored[0] != kind.binary:
					t.Errorf("%s, %s: stored with 0x%02x, want the binary form", c.name, kind.name, stored[0])
				case !c.binary && kind.oldIsJSONForm && (isBinaryEvent(stored) || stored[0] > markDeflateDict1 && stored[0] != '{'):
					t.Errorf("%s, %s: stored with 0x%02x, want JSON", c.name, kind.name, stored[0])
				case !c.binary && !kind.oldIsJSONForm && stored[0] != kind.old:
					t.Errorf("%s, %s: stored with 0x%02x, want 0x%02x", c.name, kind.name, stored[0], kind.old)
				}
				if err := events.Put([]byte(e.ID), stored); err != nil {
					return err
				}
				checkStoredEvent(t, c.name+", "+kind.name, tx{db: db, b: b}, e.ID, want, wantErr)
				if wantErr != nil {
					return nil
				}
				// A relink keeps the kind; new links of the k1 form keep (or make) it binary.
				if err := relinkEvent(events, e.ID, k1("p2"), k1("h2")); err != nil {
					t.Errorf("%s, %s: relink: %v", c.name, kind.name, err)
					return nil
				}
				relinked := events.Get([]byte(e.ID))
				if kind.old != 0 && relinked[0] != kind.binary && relinked[0] != kind.old {
					t.Errorf("%s, %s: relinked to 0x%02x, no longer a reference", c.name, kind.name, relinked[0])
				}
				want.PrevHash, want.Hash = k1("p2"), k1("h2")
				checkStoredEvent(t, c.name+", "+kind.name+", relinked", tx{db: db, b: b}, e.ID, want, nil)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
}

// checkStoredEvent compares every reader of the stored event id with want.
func checkStoredEvent(t *testing.T, name string, r tx, id string, want data.Event, wantErr error) {
	t.Helper()
	got, err := readEvent(r.b, id)
	if wantErr != nil {
		if err == nil {
			t.Errorf("%s: read %+v where the form of before failed (%v)", name, got, wantErr)
		}
		return
	}
	if err != nil || got == nil {
		t.Errorf("%s: read: %v", name, err)
		return
	}
	if !reflect.DeepEqual(*got, want) {
		g, w := *got, want
		g.Data, w.Data = nil, nil
		t.Errorf("%s: read\n%#v %s\nwant\n%#v %s", name, g, got.Data, w, want.Data)
	}
	if g, w := got.AppendJSON(nil, true), want.AppendJSON(nil, true); !bytes.Equal(g, w) {
		t.Errorf("%s: JSON\n%s\nwant\n%s", name, g, w)
	}
	if ws, err := r.EventWorkspace(id); err != nil || ws != want.WorkspaceID {
		t.Errorf("%s: workspace %q, %v; want %q", name, ws, err, want.WorkspaceID)
	}
}

// TestEventTypeCodesFrozen: the codes of stored events never change meaning, and every
// event type has one.
func TestEventTypeCodesFrozen(t *testing.T) {
	const frozen = 36
	sum := sha256.Sum256([]byte(strings.Join(eventTypeCodes[:frozen], ",") + "|" + strings.Join(actorTypeCodes[:], ",")))
	if got := hex.EncodeToString(sum[:]); got != "33f55f1272b6e2c19acaa2db9a7a6f7b841bdfa6d6914e4859356afe60e3abf3" {
		t.Errorf("the stored codes changed (%s): append new types, never edit or reorder", got)
	}
	for _, typ := range data.EventTypes {
		if _, ok := eventTypeCode[typ]; !ok {
			t.Errorf("event type %s has no code: append it to eventTypeCodes", typ)
		}
	}
	if len(eventTypeCodes) > 256 {
		t.Error("a type code is one byte")
	}
}

// TestIDRaw: a canonical id goes to 16 bytes and back; anything else is refused.
func TestIDRaw(t *testing.T) {
	ids := testIDs()
	for _, prefix := range []string{data.PrefixEvent, data.PrefixCall, data.PrefixWorkspace, data.PrefixUser} {
		for range 100 {
			id := ids.New(prefix)
			raw, ok := idRaw(prefix, id)
			if !ok || idText(prefix, raw[:]) != id {
				t.Fatalf("%s: %x, %v -> %s", id, raw, ok, idText(prefix, raw[:]))
			}
			if ms, ok := idMillis(prefix, id); !ok || ms != data.IDTime(prefix, id).UnixMilli() {
				t.Fatalf("%s: time %d, %v", id, ms, ok)
			}
		}
	}
	for _, bad := range []string{"", "evt_", "evt_1", "evt_01M8E20AGXC6ATCF3WEBD4QK1", "evt_81M8E20AGXC6ATCF3WEBD4QK1N",
		"evt_01m8e20agxc6atcf3webd4qk1n", "evt_01M8E20AGXC6ATCF3WEBD4QKIN", "call_01M8E20AGXC6ATCF3WEBD4QK1N"} {
		if _, ok := idRaw(data.PrefixEvent, bad); ok {
			t.Errorf("%q taken as an event id", bad)
		}
	}
	max := "evt_7ZZZZZZZZZZZZZZZZZZZZZZZZZ"
	if raw, ok := idRaw(data.PrefixEvent, max); !ok || idText(data.PrefixEvent, raw[:]) != max {
		t.Errorf("the largest id: %x, %v", raw, ok)
	}
}

// jsonCompact is payload made what data.Event.AppendJSON takes: compact JSON.
func jsonCompact(payload []byte) []byte {
	var buf bytes.Buffer
	if json.Compact(&buf, payload) != nil {
		raw, _ := json.Marshal(string(payload))
		return raw
	}
	return buf.Bytes()
}
