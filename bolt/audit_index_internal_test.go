package bolt

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// A schema 26 file listed events by workspace only. Opening it (schema 27) lists the
// stored events by type and by actor too, in the opening transaction, so that a filtered
// audit page of before the upgrade walks its facet; a workspace's delete then takes its
// facet entries with its events.
func TestEventsOfAnOlderFileAreListedByFacet(t *testing.T) {
	db, dir, opts := openFile(t)
	want := map[string][]string{} // "<ws> <facet>" → ids, newest first
	if err := db.Update(context.Background(), func(stx service.Tx) error {
		for i := range 40 {
			ws := []string{"ws_1", "ws_2"}[i%2]
			e := &data.Event{ID: fmt.Sprintf("evt_%03d", i), WorkspaceID: ws, Type: []string{data.EventAgentCreated, data.EventAgentDeleted}[i%3/2],
				Actor: data.Actor{Type: "user", UserID: []string{"usr_a", "usr_b"}[i%5/4]}, Data: []byte(`{}`), Hash: fmt.Sprint("h", i)}
			if i%7 == 0 {
				e.Actor = data.Actor{Type: "system"}
			}
			if err := stx.AppendEvent(e); err != nil {
				return err
			}
			want[ws+" "+e.Type] = append([]string{e.ID}, want[ws+" "+e.Type]...)
			if e.Actor.UserID != "" {
				want[ws+" "+e.Actor.UserID] = append([]string{e.ID}, want[ws+" "+e.Actor.UserID]...)
			}
		}
		// A call's event whose payload is the stored call is stored as a reference to it
		// (events_callref.go): its facets come from its own header.
		at := data.NewTime(time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC))
		call := &data.Call{ID: "call_01JD6ZJ7Q8W9X0Y1Z2A3B4C5D0", WorkspaceID: "ws_1", AgentID: "agt_1", Direction: data.DirectionWeb,
			Status: data.CallEnded, Transcript: []data.TranscriptItem{}, Variables: map[string]any{}, Metadata: map[string]any{}, CreatedAt: at, UpdatedAt: at}
		if err := stx.InsertCall(call); err != nil {
			return err
		}
		payload, err := decodeValue(stx.(tx).b.Bucket(bucketCalls).Get([]byte(call.ID)))
		if err != nil {
			return err
		}
		e := &data.Event{ID: "evt_999", WorkspaceID: "ws_1", Type: data.EventCallEnded, Actor: data.Actor{Type: "user", UserID: "usr_b"},
			Data: append([]byte(nil), payload...), Hash: "h999"}
		if err := stx.AppendEvent(e); err != nil {
			return err
		}
		if ref, _ := parseEvent(e.ID, stx.(tx).b.Bucket(bucketEvents).Get([]byte(e.ID))); ref.ref != markCallRef {
			return fmt.Errorf("the call's event is not stored as a reference to the call")
		}
		want["ws_1 "+e.Type] = []string{e.ID}
		want["ws_1 usr_b"] = append([]string{e.ID}, want["ws_1 usr_b"]...)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	db = asOlderFile(t, db, dir, opts, 26, bucketEventsByFacet)
	defer db.Close()
	for _, ws := range []string{"ws_1", "ws_2"} {
		for _, c := range []service.EventFilter{
			{Type: data.EventAgentCreated}, {Type: data.EventAgentDeleted}, {Actor: "usr_a"}, {Actor: "usr_b"}, {Type: data.EventCallEnded},
		} {
			// The bound of one event a page: a page walking every event would find
			// nothing of a facet whose first event is not the newest.
			c.Key, c.MaxScan, c.Keep = c.Type+c.Actor, 1, func(*data.Event) bool { return true }
			var got []string
			if err := db.View(context.Background(), func(tx service.Tx) error {
				list, _, err := tx.EventPage(ws, c, data.PageRequest{PerPage: 100})
				for _, e := range list {
					got = append(got, e.ID)
				}
				return err
			}); err != nil {
				t.Fatal(err)
			}
			w := want[ws+" "+c.Type+c.Actor] // ws_2 holds no call's event: nothing
			if len(w) > 0 && (len(got) != 1 || got[0] != w[0]) || len(w) == 0 && len(got) != 0 {
				t.Errorf("%s, %s: the first page %v; want its newest event of %v", ws, c.Key, got, w)
			}
		}
	}
	if err := db.Update(context.Background(), func(tx service.Tx) error { return tx.DeleteWorkspace("ws_1") }); err != nil {
		t.Fatal(err)
	}
	var left []string
	if err := db.bolt.View(func(tx *bbolt.Tx) error {
		return tx.Bucket(bucketEventsByFacet).ForEach(func(k, _ []byte) error {
			left = append(left, string(bytes.ReplaceAll(k, []byte{0}, []byte(" "))))
			return nil
		})
	}); err != nil {
		t.Fatal(err)
	}
	// Each event is listed by its type, by its agent and type (schema 29), and by its actor.
	events2 := len(want["ws_2 "+data.EventAgentCreated]) + len(want["ws_2 "+data.EventAgentDeleted])
	if n := 2*events2 + len(want["ws_2 usr_a"]) + len(want["ws_2 usr_b"]); len(left) != n ||
		slices.ContainsFunc(left, func(k string) bool { return !bytes.HasPrefix([]byte(k), []byte("ws_2 ")) }) {
		t.Errorf("after ws_1's delete the facet index holds %d entries, want ws_2's %d: %v", len(left), n, left)
	}
}
