package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// testDeliveriesByType: a filtered page of a webhook's deliveries holds only the types
// the filter keeps, walks both ways by its cursors without skipping or repeating one,
// and refuses a cursor made under another filter; an empty filter lists none.
func testDeliveriesByType(t *testing.T, open Opener) {
	s := open(t)
	w := webhookRecord("ws_1")
	var kept []string // newest first
	update(t, s, func(tx service.Tx) error {
		if err := tx.PutWebhook(w); err != nil {
			return err
		}
		for i := range 7 {
			d := pendingDelivery(w.ID, time.Now().Add(time.Hour))
			if i%2 == 0 {
				d.EventType = data.EventCallEnded
				kept = append([]string{d.ID}, kept...)
			}
			if err := tx.PutDelivery(d); err != nil {
				return err
			}
		}
		return nil
	})
	calls := service.DeliveryFilter{Types: []string{data.EventCallEnded}}
	view(t, s, func(tx service.Tx) error {
		var walked []string
		var last data.Page
		req := data.PageRequest{PerPage: 2}
		for range 10 {
			page, meta, err := tx.Deliveries(w.ID, calls, req)
			if err != nil {
				return err
			}
			for _, d := range page {
				if d.EventType != data.EventCallEnded {
					t.Errorf("a filtered page holds a %s delivery", d.EventType)
				}
				walked = append(walked, d.ID)
			}
			last = meta
			if meta.NextCursor == nil {
				break
			}
			req.Cursor = *meta.NextCursor
		}
		if !slices.Equal(walked, kept) {
			t.Errorf("the filtered walk = %v, want %v", walked, kept)
		}
		if last.PrevCursor == nil {
			t.Fatal("the last filtered page has no prev_cursor")
		}
		back, _, err := tx.Deliveries(w.ID, calls, data.PageRequest{PerPage: 2, Cursor: *last.PrevCursor})
		if err != nil || len(back) != 2 || back[0].ID != kept[0] || back[1].ID != kept[1] {
			t.Errorf("back from the last page: %v, %v; want %v", back, err, kept[:2])
		}
		_, all, err := tx.Deliveries(w.ID, service.DeliveryFilter{}, data.PageRequest{PerPage: 1})
		if err != nil || all.NextCursor == nil {
			t.Fatalf("the unfiltered first page: %+v, %v", all, err)
		}
		if _, _, err := tx.Deliveries(w.ID, calls, data.PageRequest{PerPage: 1, Cursor: *all.NextCursor}); err == nil {
			t.Error("a cursor of the unfiltered list is accepted under a filter")
		}
		none, meta, err := tx.Deliveries(w.ID, service.DeliveryFilter{Types: []string{}}, data.PageRequest{PerPage: 5})
		if err != nil || len(none) != 0 || meta.NextCursor != nil {
			t.Errorf("an empty filter lists %d, next %v, %v", len(none), meta.NextCursor, err)
		}
		return nil
	})
}

// testDeliveriesByTypeAfterPrune: a filtered page past a cursor whose older deliveries
// were pruned, and that finds only deliveries the filter passes over, leads back to the
// oldest page only when that page holds one it keeps. Before, bbolt linked back whenever
// any delivery remained, to a page of hidden deliveries only.
func testDeliveriesByTypeAfterPrune(t *testing.T, open Opener) {
	s := open(t)
	w := webhookRecord("ws_1")
	kept := func(pending bool) *data.Delivery {
		d := pendingDelivery(w.ID, time.Now().Add(time.Hour))
		d.EventType = data.EventCallEnded
		if !pending {
			d.Status, d.NextAttemptAt, d.CreatedAt = data.DeliverySucceeded, nil, data.NewTime(time.Now().Add(-time.Hour))
		}
		return d
	}
	update(t, s, func(tx service.Tx) error {
		if err := tx.PutWebhook(w); err != nil {
			return err
		}
		// Oldest first: two hidden ones, pending (never pruned), then two kept, finished.
		for _, d := range []*data.Delivery{pendingDelivery(w.ID, time.Now().Add(time.Hour)), pendingDelivery(w.ID, time.Now().Add(time.Hour)), kept(false), kept(false)} {
			if err := tx.PutDelivery(d); err != nil {
				return err
			}
		}
		return nil
	})
	calls := service.DeliveryFilter{Types: []string{data.EventCallEnded}}
	var cursor string
	view(t, s, func(tx service.Tx) error {
		page, meta, err := tx.Deliveries(w.ID, calls, data.PageRequest{PerPage: 1})
		if err != nil || len(page) != 1 || meta.NextCursor == nil {
			t.Fatalf("the first page: %d, next %v, %v; want one and a cursor", len(page), meta.NextCursor, err)
		}
		cursor = *meta.NextCursor
		return nil
	})
	update(t, s, func(tx service.Tx) error {
		n, err := tx.PruneDeliveries(time.Now().Add(time.Minute), 100)
		if err == nil && n != 2 {
			t.Fatalf("pruned %d, want the two finished", n)
		}
		return err
	})
	view(t, s, func(tx service.Tx) error {
		page, meta, err := tx.Deliveries(w.ID, calls, data.PageRequest{PerPage: 1, Cursor: cursor})
		if err != nil || len(page) != 0 || meta.NextCursor != nil || meta.PrevCursor != nil {
			t.Errorf("past the pruned ones, none readable left: %d, next %v, prev %v, %v; want an empty page, no cursor", len(page), meta.NextCursor, meta.PrevCursor, err)
		}
		return nil
	})
	newest := kept(true)
	update(t, s, func(tx service.Tx) error { return tx.PutDelivery(newest) })
	view(t, s, func(tx service.Tx) error {
		_, meta, err := tx.Deliveries(w.ID, calls, data.PageRequest{PerPage: 1, Cursor: cursor})
		if err != nil || meta.PrevCursor == nil {
			t.Fatalf("past the pruned ones, a readable one newer: prev %v, %v; want a cursor back", meta.PrevCursor, err)
		}
		back, _, err := tx.Deliveries(w.ID, calls, data.PageRequest{PerPage: 1, Cursor: *meta.PrevCursor})
		if err != nil || len(back) != 1 || back[0].ID != newest.ID {
			t.Errorf("back from the empty page: %v, %v; want %s", back, err, newest.ID)
		}
		return nil
	})
}
