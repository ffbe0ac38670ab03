package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// deliveryLog stores a webhook and one finished delivery per type, oldest first, and
// returns the webhook's id and the ids of the deliveries of keptType, newest first.
func deliveryLog(t *testing.T, s service.Store, types []string, keptType string) (string, []string) {
	t.Helper()
	w := webhookRecord("ws_1")
	var kept []string
	update(t, s, func(tx service.Tx) error {
		if err := tx.PutWebhook(w); err != nil {
			return err
		}
		for _, typ := range types {
			d := pendingDelivery(w.ID, time.Now())
			d.EventType, d.Status, d.NextAttemptAt = typ, data.DeliverySucceeded, nil
			if typ == keptType {
				kept = append([]string{d.ID}, kept...)
			}
			if err := tx.PutDelivery(d); err != nil {
				return err
			}
		}
		return nil
	})
	return w.ID, kept
}

// deliveryPage reads one page of a webhook's deliveries.
func deliveryPage(t *testing.T, s service.Store, webhookID string, f service.DeliveryFilter, req data.PageRequest) ([]*data.Delivery, data.Page) {
	t.Helper()
	var list []*data.Delivery
	var meta data.Page
	view(t, s, func(tx service.Tx) (err error) {
		list, meta, err = tx.Deliveries(webhookID, f, req)
		return err
	})
	return list, meta
}

// hiddenThenKept is a log's types, oldest first: kept ones of keptType, then hidden ones
// of another type newer than them.
func hiddenThenKept(kept, hidden int) []string {
	types := slices.Repeat([]string{data.EventCallEnded}, kept)
	return append(types, slices.Repeat([]string{data.EventAgentCreated}, hidden)...)
}

// testDeliveriesScanBoundEdge: a narrowed page looks at no more than the filter's
// MaxScan deliveries, on every engine. A log of exactly MaxScan is looked at whole (no
// cursor past it); one more ends the first page at the bound, short, with a cursor that
// leads to the rest. So whether the kept delivery, the oldest, is on the first page or
// the next turns on the one delivery more. Before, PostgreSQL had no bound: it read
// every hidden delivery before the readable ones (21-27 ms a page past 100,000).
func testDeliveriesScanBoundEdge(t *testing.T, open Opener) {
	const maxScan = 10
	for _, c := range []struct {
		name          string
		hidden        int  // newer than the kept one
		kept          int  // the oldest deliveries, of the kept type (0 or 1)
		first, second int  // kept deliveries on the first page and on the next (-1: no next)
		newerOnNext   bool // the next page leads back to the first (a prev_cursor)
	}{
		{"hidden, at the bound", maxScan, 0, 0, -1, false},
		{"hidden, past the bound", maxScan + 1, 0, 0, 0, true},
		{"kept one, at the bound", maxScan - 1, 1, 1, -1, false},
		// The next page holds the kept one and nothing readable lies newer within the
		// bound: no prev_cursor. It had one, leading to a page of nothing with neither
		// cursor: a dead end, the way back to the first page lost.
		{"kept one, past the bound", maxScan, 1, 0, 1, false},
		// One hidden more past the bound: a page back from the kept one would be cut by
		// the bound, with a cursor on; so it is offered.
		{"kept one, one past the bound", maxScan + 1, 1, 0, 1, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := open(t)
			webhookID, kept := deliveryLog(t, s, hiddenThenKept(c.kept, c.hidden), data.EventCallEnded)
			f := service.DeliveryFilter{Types: []string{data.EventCallEnded}, MaxScan: maxScan}
			first, meta := deliveryPage(t, s, webhookID, f, data.PageRequest{PerPage: 15})
			if len(first) != c.first || meta.PrevCursor != nil {
				t.Errorf("the first page holds %d (prev_cursor %v), want %d and none", len(first), meta.PrevCursor, c.first)
			}
			if (meta.NextCursor != nil) != (c.second >= 0) {
				t.Fatalf("the first page's next_cursor: %v, want one: %v", meta.NextCursor, c.second >= 0)
			}
			if c.second < 0 {
				return
			}
			second, meta := deliveryPage(t, s, webhookID, f, data.PageRequest{PerPage: 15, Cursor: *meta.NextCursor})
			if len(second) != c.second || meta.NextCursor != nil {
				t.Errorf("the next page holds %d (next_cursor %v), want %d and the end", len(second), meta.NextCursor, c.second)
			}
			if len(second) == 1 && second[0].ID != kept[0] {
				t.Errorf("the next page holds %s, want the kept %s", second[0].ID, kept[0])
			}
			if (meta.PrevCursor != nil) != c.newerOnNext {
				t.Errorf("the next page's prev_cursor: %v, want one: %v", meta.PrevCursor, c.newerOnNext)
			}
			if meta.PrevCursor != nil {
				if back, meta := deliveryPage(t, s, webhookID, f, data.PageRequest{PerPage: 15, Cursor: *meta.PrevCursor}); len(back) == 0 && meta.NextCursor == nil && meta.PrevCursor == nil {
					t.Errorf("the next page's prev_cursor leads to a page of nothing with neither cursor")
				}
			}
		})
	}
}

// testDeliveriesScanBoundWalks: in narrowed logs whose readable deliveries lie apart by
// more than a page looks at, following next_cursor from the first page, then prev_cursor
// back from the last, each reaches every readable delivery exactly once, in order, and
// every cursor any page offers is taken (a cursor the list itself offered answered 422
// on bbolt before e0afc82). The same pages on every engine.
func testDeliveriesScanBoundWalks(t *testing.T, open Opener) {
	const maxScan = 4
	k, h := data.EventCallEnded, data.EventAgentCreated
	for _, c := range []struct {
		name    string
		types   []string // oldest first
		perPage int
	}{
		{"hidden only", slices.Repeat([]string{h}, 11), 15},
		{"kept apart", slices.Concat([]string{k, h, h, h, h, h, k, k}, slices.Repeat([]string{h}, 9), []string{k, h, k, h, h, h, h}), 2},
		{"kept apart, one a page", slices.Concat([]string{h, k}, slices.Repeat([]string{h}, 5), []string{k, k, k, h, h, h, h, k}), 1},
		{"kept only", slices.Repeat([]string{k}, 9), 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := open(t)
			webhookID, kept := deliveryLog(t, s, c.types, k)
			f := service.DeliveryFilter{Types: []string{k}, MaxScan: maxScan}
			read := func(cursor string) ([]string, data.Page) {
				list, meta := deliveryPage(t, s, webhookID, f, data.PageRequest{PerPage: c.perPage, Cursor: cursor})
				var got []string
				for _, d := range list {
					if d.EventType != k {
						t.Errorf("a narrowed page holds a %s delivery", d.EventType)
					}
					got = append(got, d.ID)
				}
				return got, meta
			}
			var onward []string // newest first
			cursor, pages := "", 0
			for ; pages < 50; pages++ {
				got, meta := read(cursor)
				onward = append(onward, got...)
				if meta.NextCursor == nil {
					break
				}
				cursor = *meta.NextCursor
			}
			if !slices.Equal(onward, kept) {
				t.Errorf("following next_cursor: %v, want %v", onward, kept)
			}
			if pages == 0 && len(c.types) > maxScan {
				t.Errorf("one page for %d deliveries, more than %d a page looks at", len(c.types), maxScan)
			}
			var back []string // newest first
			for range 50 {
				got, meta := read(cursor)
				back = append(got, back...)
				if meta.PrevCursor == nil {
					break
				}
				cursor = *meta.PrevCursor
			}
			if !slices.Equal(back, kept) {
				t.Errorf("following prev_cursor back from the last page: %v, want %v", back, kept)
			}
			seen := map[string]bool{}
			todo := []string{""}
			for len(todo) > 0 && len(seen) < 200 {
				cursor := todo[0]
				todo = todo[1:]
				if seen[cursor] {
					continue
				}
				seen[cursor] = true
				var meta data.Page
				var err error
				view(t, s, func(tx service.Tx) error {
					_, meta, err = tx.Deliveries(webhookID, f, data.PageRequest{PerPage: c.perPage, Cursor: cursor})
					return nil
				})
				if err != nil {
					t.Errorf("a cursor the list offered (after %d pages): %v", len(seen)-1, err)
					continue
				}
				for _, next := range []*string{meta.NextCursor, meta.PrevCursor} {
					if next != nil {
						todo = append(todo, *next)
					}
				}
			}
		})
	}
}
