package storetest

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// testEventsAfter: the live event stream's read forward from a position.
func testEventsAfter(t *testing.T, open Opener) {
	s := open(t)
	var ws1 []string
	var other string
	for i := range 7 {
		ws := "ws_1"
		if i == 3 {
			ws = "ws_2" // interleaved: another workspace's event between ws_1's
		}
		e := &data.Event{ID: ids.New(data.PrefixEvent), Type: data.EventCallStarted, WorkspaceID: ws, Data: []byte(`{}`), Hash: fmt.Sprint("h", i)}
		if ws == "ws_1" {
			ws1 = append(ws1, e.ID)
		} else {
			other = e.ID
		}
		update(t, s, func(tx service.Tx) error { return tx.AppendEvent(e) })
	}
	view(t, s, func(tx service.Tx) error {
		cases := []struct {
			name, after string
			limit       int
			want        []string
		}{
			{"from the start", "", 10, ws1},
			{"from the start, bounded", "", 2, ws1[:2]},
			{"after the first", ws1[0], 10, ws1[1:]},
			{"after the third, across the other workspace's event", ws1[2], 2, ws1[3:5]},
			{"after the newest", ws1[5], 10, nil},
			{"another workspace's event", other, 10, nil},
			{"an id never stored", ids.New(data.PrefixEvent), 10, nil},
		}
		for _, c := range cases {
			got, err := eventsAfter(tx, "ws_1", c.after, c.limit)
			if err != nil || !slices.Equal(eventIDs(got), c.want) {
				t.Errorf("%s: EventsAfter = %v, %v; want %v", c.name, eventIDs(got), err, c.want)
			}
		}
		stop := errors.New("stop")
		if err := tx.EventsAfter("ws_1", "", func(*data.Event) (bool, error) { return true, stop }); err != stop {
			t.Errorf("fn's error: EventsAfter returned %v, want it", err)
		}
		got, err := eventsAfter(tx, "ws_2", "", 10)
		if err != nil || !slices.Equal(eventIDs(got), []string{other}) {
			t.Errorf("ws_2 from the start = %v, %v; want only its own event", eventIDs(got), err)
		}
		if len(got) == 1 && (got[0].Type != data.EventCallStarted || got[0].Hash != "h3" || string(got[0].Data) != `{}`) {
			t.Errorf("the event read back = %+v, want it as stored", got[0])
		}
		return nil
	})
	// An event appended after a reader's position is what the next read returns.
	late := &data.Event{ID: ids.New(data.PrefixEvent), Type: data.EventCallEnded, WorkspaceID: "ws_1", Data: []byte(`{}`), Hash: "h7"}
	update(t, s, func(tx service.Tx) error { return tx.AppendEvent(late) })
	view(t, s, func(tx service.Tx) error {
		got, err := eventsAfter(tx, "ws_1", ws1[5], 10)
		if err != nil || !slices.Equal(eventIDs(got), []string{late.ID}) {
			t.Errorf("after the former newest = %v, %v; want the late event", eventIDs(got), err)
		}
		return nil
	})
}

// eventsAfter collects up to limit events of EventsAfter, stopping it there.
func eventsAfter(tx service.Tx, ws, after string, limit int) ([]*data.Event, error) {
	var out []*data.Event
	err := tx.EventsAfter(ws, after, func(e *data.Event) (bool, error) {
		out = append(out, e)
		return len(out) < limit, nil
	})
	return out, err
}
