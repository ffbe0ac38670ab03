package storetest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

func init() {
	suites = append(suites, suite{"event_windows", testEventWindows})
}

// windowClock is the created_at of ws_1's events in chain order, in milliseconds after
// windowEpoch: equal times, and a clock that steps back twice (5 → 3, 10 → 7), so that
// time is not in chain order.
var windowClock = []int{0, 1, 2, 2, 5, 3, 4, 6, 10, 7, 8, 11, 11}

// testEventWindows: a time window of events (EventFilter.From and To, EventsBetween) seeks
// to its events, and what it reads is what the plain walk of every event keeps: the same
// events in the same order, for windows at the start, middle and end, empty ones, equal
// bounds, one bound alone, and bounds that fall between two events or on one (from
// inclusive, to exclusive). Pages are read to the end, with a scan bound smaller than the
// window, and followed back by prev_cursor, of every event, of a type (a facet) and of a
// type's (agent, type) pairs. Another workspace's events, interleaved, are
// never read.
func testEventWindows(t *testing.T, open Opener) {
	s := open(t)
	g := stepIDs()
	at := func(ms int) time.Time { return windowEpoch.Add(time.Duration(ms) * time.Millisecond) }
	update(t, s, func(tx service.Tx) error {
		for i, ms := range windowClock {
			for _, ws := range []string{"ws_1", "ws_2"} {
				created := at(ms)
				if ws == "ws_2" {
					created = at(i) // in order, within every window's span
				}
				e := &data.Event{ID: g.New(data.PrefixEvent), WorkspaceID: ws, Type: data.EventAgentUpdated, CreatedAt: data.NewTime(created),
					Data: []byte(fmt.Sprintf(`{"n":%d}`, i)), Hash: fmt.Sprint("h", i), Actor: data.Actor{Type: "system"}}
				if err := tx.AppendEvent(e); err != nil {
					return err
				}
			}
		}
		return nil
	})
	var all []*data.Event // ws_1's, newest first
	view(t, s, func(tx service.Tx) error {
		return tx.EventsNewestFirst("ws_1", func(e *data.Event) (bool, error) {
			all = append(all, e)
			return true, nil
		})
	})
	if len(all) != len(windowClock) {
		t.Fatalf("%d events stored; want %d", len(all), len(windowClock))
	}
	bounds := []time.Time{{}, at(-5), at(0), at(2), at(3), at(4), at(5), at(7), at(10), at(11), at(12), at(40),
		at(3).Add(500 * time.Microsecond)}
	for _, from := range bounds {
		for _, to := range bounds {
			in := func(e *data.Event) bool {
				return (from.IsZero() || !e.CreatedAt.Before(from)) && (to.IsZero() || e.CreatedAt.Before(to))
			}
			var want []string
			for _, e := range all {
				if in(e) {
					want = append(want, e.ID)
				}
			}
			name := fmt.Sprintf("[%s, %s)", windowBound(from), windowBound(to))
			var got []string
			view(t, s, func(tx service.Tx) error {
				return tx.EventsBetween("ws_1", from, to, func(e *data.Event) (bool, error) {
					if e.WorkspaceID != "ws_1" {
						t.Errorf("%s: EventsBetween read %s of %s", name, e.ID, e.WorkspaceID)
					}
					got = append(got, e.ID)
					return true, nil
				})
			})
			if !slices.Equal(got, want) {
				t.Errorf("%s: EventsBetween read %v; want %v", name, got, want)
			}
			// Every event, then its type's (a facet), then its type's of any agent (pairs).
			for _, f := range []service.EventFilter{{}, {Type: data.EventAgentUpdated},
				{Scopes: []service.EventScope{{Type: data.EventAgentUpdated, AnyAgent: true}}}} {
				f.Key, f.Keep, f.MaxScan, f.From, f.To = name, in, 3, from, to
				got = windowPages(t, s, name, f)
				if !slices.Equal(got, want) {
					t.Errorf("%s, %+v: the pages held %v; want %v", name, f.Scopes, got, want)
				}
			}
		}
	}
	// Stopping early stops the walk.
	n := 0
	view(t, s, func(tx service.Tx) error {
		return tx.EventsBetween("ws_1", at(0), at(40), func(*data.Event) (bool, error) { n++; return n < 2, nil })
	})
	if n != 2 {
		t.Errorf("EventsBetween went on after its fn said stop: %d calls; want 2", n)
	}
	view(t, s, func(tx service.Tx) error {
		return tx.EventsBetween("ws_none", at(0), at(40), func(e *data.Event) (bool, error) {
			t.Errorf("a workspace without events: EventsBetween read %s", e.ID)
			return true, nil
		})
	})
}

// windowPages reads every page of f (2 a page) and returns their events' ids, newest
// first; from each page after the first, prev_cursor leads back to the events just newer
// than it (as many as the scan bound lets a page find).
func windowPages(t *testing.T, s service.Store, name string, f service.EventFilter) []string {
	t.Helper()
	var ids []string
	req := data.PageRequest{PerPage: 2}
	for range 100 {
		var list []*data.Event
		var page data.Page
		view(t, s, func(tx service.Tx) error {
			var err error
			list, page, err = tx.EventPage("ws_1", f, req)
			return err
		})
		got := eventIDs(list)
		if len(got) > 0 && len(ids) > 0 {
			if page.PrevCursor == nil {
				t.Errorf("%s: the page %v after %v has no prev_cursor", name, got, ids)
			} else {
				var back []*data.Event
				view(t, s, func(tx service.Tx) error {
					var err error
					back, _, err = tx.EventPage("ws_1", f, data.PageRequest{PerPage: 2, Cursor: *page.PrevCursor})
					return err
				})
				if b := eventIDs(back); len(b) > len(ids) || !slices.Equal(b, ids[len(ids)-len(b):]) {
					t.Errorf("%s: prev_cursor of %v led to %v; want the events just before it in %v", name, got, b, ids)
				}
			}
		}
		ids = append(ids, got...)
		if page.NextCursor == nil {
			return ids
		}
		req.Cursor = *page.NextCursor
	}
	t.Fatalf("%s: more than 100 pages", name)
	return nil
}

// windowBound names a bound in milliseconds after windowEpoch, "" for none.
func windowBound(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return fmt.Sprint(t.Sub(windowEpoch))
}

// ExpectWindowsAsTheWalk checks that EventsBetween reads, for every window [from, to)
// with from at or before to among bounds, what the plain walk of the workspace's events
// keeps (an upgrade's fill is held to it).
func ExpectWindowsAsTheWalk(t *testing.T, s service.Store, ws string, bounds []time.Time) {
	t.Helper()
	for _, from := range bounds {
		for _, to := range bounds {
			if to.Before(from) {
				continue
			}
			var all, read []string
			view(t, s, func(tx service.Tx) error {
				if err := tx.EventsNewestFirst(ws, func(e *data.Event) (bool, error) {
					if !e.CreatedAt.Before(from) && e.CreatedAt.Before(to) {
						all = append(all, e.ID)
					}
					return true, nil
				}); err != nil {
					return err
				}
				return tx.EventsBetween(ws, from, to, func(e *data.Event) (bool, error) {
					read = append(read, e.ID)
					return true, nil
				})
			})
			if !slices.Equal(read, all) {
				t.Errorf("[%s, %s) read %v; want %v", from.Format(data.TimeLayout), to.Format(data.TimeLayout), read, all)
			}
		}
	}
}
