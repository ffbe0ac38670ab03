package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// deliveryLog stores a webhook and one finished delivery per type, oldest first, and
// returns the webhook's id and the ids of the deliveries of keptTypes, newest first.
func deliveryLog(t *testing.T, s service.Store, types []string, keptTypes ...string) (string, []string) {
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
			if slices.Contains(keptTypes, typ) {
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

// testDeliveriesHiddenUncounted: a narrowed page walks its types' deliveries alone, on
// every engine: behind more hidden deliveries than a page once looked at (2,000), the
// caller's are on its first page, which ends there, with no cursor either way; a log of
// hidden ones only is an empty page and the end. Before, the hidden ones counted against
// that bound: the page came back empty with a next_cursor, telling the caller that
// deliveries it may not read were there, and roughly how many.
func testDeliveriesHiddenUncounted(t *testing.T, open Opener) {
	k, k2, h := data.EventCallEnded, data.EventAgentDeleted, data.EventAgentCreated
	for _, c := range []struct {
		name  string
		types []string // oldest first
		kept  int
	}{
		{"one type", slices.Concat([]string{k, k, k}, slices.Repeat([]string{h}, 2100)), 3},
		{"two types", slices.Concat([]string{k, k2}, slices.Repeat([]string{h}, 1100), []string{k2}, slices.Repeat([]string{h}, 1100)), 3},
		{"hidden only", slices.Repeat([]string{h}, 2100), 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := open(t)
			webhookID, kept := deliveryLog(t, s, c.types, k, k2)
			f := service.DeliveryFilter{Types: []string{k, k2}}
			page, meta := deliveryPage(t, s, webhookID, f, data.PageRequest{PerPage: 15})
			var got []string
			for _, d := range page {
				got = append(got, d.ID)
			}
			if len(kept) != c.kept || !slices.Equal(got, kept) || meta.NextCursor != nil || meta.PrevCursor != nil {
				t.Errorf("the first page: %v (next %v, prev %v), want %v and neither cursor", got, meta.NextCursor, meta.PrevCursor, kept)
			}
		})
	}
}

// testDeliveriesNarrowedWalks: in narrowed logs whose readable deliveries, of one type
// or two, lie apart among hidden ones, following next_cursor from the first page, then
// prev_cursor back from the last, each reaches every readable delivery exactly once, in
// order, every page but the last full (the hidden ones shape none), and every cursor
// any page offers is taken. The same pages on every engine.
func testDeliveriesNarrowedWalks(t *testing.T, open Opener) {
	k, k2, h := data.EventCallEnded, data.EventAgentDeleted, data.EventAgentCreated
	for _, c := range []struct {
		name    string
		types   []string // oldest first
		perPage int
	}{
		{"hidden only", slices.Repeat([]string{h}, 11), 15},
		{"kept apart", slices.Concat([]string{k, h, h, h, h, h, k, k}, slices.Repeat([]string{h}, 9), []string{k, h, k, h, h, h, h}), 2},
		{"kept apart, one a page", slices.Concat([]string{h, k}, slices.Repeat([]string{h}, 5), []string{k, k, k, h, h, h, h, k}), 1},
		{"kept only", slices.Repeat([]string{k}, 9), 2},
		{"two kept types apart", slices.Concat([]string{k2, h, h, k, h, k2, k2}, slices.Repeat([]string{h}, 9), []string{k, h, k2, k, h, h, k2}), 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := open(t)
			webhookID, kept := deliveryLog(t, s, c.types, k, k2)
			f := service.DeliveryFilter{Types: []string{k, k2}}
			read := func(cursor string) ([]string, data.Page) {
				list, meta := deliveryPage(t, s, webhookID, f, data.PageRequest{PerPage: c.perPage, Cursor: cursor})
				var got []string
				for _, d := range list {
					if d.EventType != k && d.EventType != k2 {
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
				if len(got) != c.perPage {
					t.Errorf("page %d holds %d, not the last, want %d", pages, len(got), c.perPage)
				}
				cursor = *meta.NextCursor
			}
			if !slices.Equal(onward, kept) {
				t.Errorf("following next_cursor: %v, want %v", onward, kept)
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
