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
