package storetest

import (
	"fmt"
	"slices"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

func init() {
	suites = append(suites, suite{"event_pages_walk_their_facet", testEventPagesWalkTheirFacet})
}

// testEventPagesWalkTheirFacet: an events page filtered by type or actor (the audit
// log's) walks only the events of that type or actor: the scan bound counts them alone,
// so the few events of a rare type or a quiet user come in one page however many other
// events lie between them (before, the page answered empty with a cursor for every
// MaxScan of those). The pages read forward and back, keep their cursors' filter, and a
// deleted workspace takes its entries.
func testEventPagesWalkTheirFacet(t *testing.T, open Opener) {
	s := open(t)
	g := stepIDs()
	const maxScan = 20
	var rare, quiet, all []string
	update(t, s, func(tx service.Tx) error {
		for i := range 150 {
			for _, ws := range []string{"ws_f1", "ws_f2"} {
				e := &data.Event{ID: g.New(data.PrefixEvent), WorkspaceID: ws, Type: data.EventAgentUpdated, Data: []byte(`{}`), Hash: fmt.Sprint("h", i),
					Actor: data.Actor{Type: "user", UserID: "usr_busy"}}
				if i%50 == 7 {
					e.Type = data.EventAgentDeleted
				}
				if i%60 == 11 {
					e.Actor.UserID = "usr_quiet"
				}
				if i%25 == 3 {
					e.Actor = data.Actor{Type: "system"}
				}
				if err := tx.AppendEvent(e); err != nil {
					return err
				}
				if ws != "ws_f1" {
					continue
				}
				all = append([]string{e.ID}, all...)
				if e.Type == data.EventAgentDeleted {
					rare = append([]string{e.ID}, rare...)
				}
				if e.Actor.UserID == "usr_quiet" {
					quiet = append([]string{e.ID}, quiet...)
				}
			}
		}
		return nil
	})
	ofType := func(typ string) service.EventFilter {
		return service.EventFilter{Key: "type:" + typ, Type: typ, MaxScan: maxScan, Keep: func(e *data.Event) bool { return e.Type == typ }}
	}
	byActor := func(user string) service.EventFilter {
		return service.EventFilter{Key: "actor:" + user, Actor: user, MaxScan: maxScan, Keep: func(e *data.Event) bool { return e.Actor.UserID == user }}
	}
	both := service.EventFilter{Key: "both", Type: data.EventAgentUpdated, Actor: "usr_quiet", MaxScan: maxScan,
		Keep: func(e *data.Event) bool { return e.Type == data.EventAgentUpdated && e.Actor.UserID == "usr_quiet" }}
	var quietUpdates []string
	view(t, s, func(tx service.Tx) error {
		for _, id := range quiet {
			if e, err := tx.Event(id); err == nil && e.Type == data.EventAgentUpdated {
				quietUpdates = append(quietUpdates, id)
			}
		}
		for _, c := range []struct {
			name string
			f    service.EventFilter
			want []string
		}{
			{"a rare type", ofType(data.EventAgentDeleted), rare},
			{"a quiet user", byActor("usr_quiet"), quiet},
			{"a type and a user", both, quietUpdates},
		} {
			list, page, err := tx.EventPage("ws_f1", c.f, data.PageRequest{PerPage: 10})
			if err != nil || !slices.Equal(eventIDs(list), c.want) || page.NextCursor != nil {
				t.Errorf("%s: %v, %+v, %v; want %v in one page", c.name, eventIDs(list), page, err, c.want)
			}
		}
		if list, page, err := tx.EventPage("ws_f1", byActor("usr_nobody"), data.PageRequest{PerPage: 10}); err != nil || len(list) != 0 || page.NextCursor != nil {
			t.Errorf("a user of no event: %v, %+v, %v; want an empty last page", eventIDs(list), page, err)
		}
		// A filter no index serves is still bounded: a first page cut by the bound leads
		// on, and not back (nothing is newer than a first page).
		none := service.EventFilter{Key: "none", MaxScan: maxScan, Keep: func(*data.Event) bool { return false }}
		if list, page, err := tx.EventPage("ws_f1", none, data.PageRequest{PerPage: 10}); err != nil || len(list) != 0 || page.NextCursor == nil || page.PrevCursor != nil {
			t.Errorf("a first page the bound cut: %v, next %v, prev %v, %v; want empty, a next cursor only", eventIDs(list), page.NextCursor != nil, page.PrevCursor != nil, err)
		}
		return nil
	})
	// The facets' pages read forward and back, page by page, what one page reads.
	pageIDs := func(f service.EventFilter) func(tx service.Tx, req data.PageRequest) ([]string, data.Page, error) {
		return func(tx service.Tx, req data.PageRequest) ([]string, data.Page, error) {
			list, p, err := tx.EventPage("ws_f1", f, req)
			return eventIDs(list), p, err
		}
	}
	busy := byActor("usr_busy")
	var busyIDs []string
	view(t, s, func(tx service.Tx) error {
		for _, id := range all {
			if e, _ := tx.Event(id); e != nil && e.Actor.UserID == "usr_busy" {
				busyIDs = append(busyIDs, id)
			}
		}
		return nil
	})
	for _, per := range []int{1, 3} {
		checkPages(t, s, "a rare type's events", per, pageIDs(ofType(data.EventAgentDeleted)), rare)
		checkPages(t, s, "a busy user's events", per, pageIDs(busy), busyIDs)
	}
	// A cursor of one facet is refused under another filter.
	view(t, s, func(tx service.Tx) error {
		_, page, err := tx.EventPage("ws_f1", busy, data.PageRequest{PerPage: 2})
		if err != nil || page.NextCursor == nil {
			t.Fatalf("a busy user's first page: %+v, %v", page, err)
		}
		if _, _, err := tx.EventPage("ws_f1", byActor("usr_quiet"), data.PageRequest{PerPage: 2, Cursor: *page.NextCursor}); data.ErrorCode(err) != data.EINVALID {
			t.Errorf("a cursor of one user's events read for another's: %v; want validation_failed", err)
		}
		return nil
	})
	update(t, s, func(tx service.Tx) error { return tx.DeleteWorkspace("ws_f1") })
	view(t, s, func(tx service.Tx) error {
		for _, f := range []service.EventFilter{ofType(data.EventAgentDeleted), byActor("usr_quiet")} {
			if list, _, err := tx.EventPage("ws_f1", f, data.PageRequest{PerPage: 10}); err != nil || len(list) != 0 {
				t.Errorf("a deleted workspace's %s page: %v, %v", f.Key, eventIDs(list), err)
			}
		}
		if list, _, err := tx.EventPage("ws_f2", ofType(data.EventAgentDeleted), data.PageRequest{PerPage: 10}); err != nil || len(list) != len(rare) {
			t.Errorf("another workspace's page after a delete: %v, %v; want %d events", eventIDs(list), err, len(rare))
		}
		return nil
	})
}
