package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// TestNarrowedDeliveriesPutBackThePlanSettings: the statements of a transaction after a
// narrowed page, and a page past a cursor (its back cursor's check too), plan as the
// session does: enable_bitmapscan and enable_sort as they were.
func TestNarrowedDeliveriesPutBackThePlanSettings(t *testing.T) {
	db := openInternal(t)
	ctx := context.Background()
	w := &data.WebhookRecord{Webhook: data.Webhook{ID: "wh_1", WorkspaceID: "ws_1", URL: "https://example.com/h", Events: []string{"*"}, Enabled: true}}
	if err := db.Update(ctx, func(stx service.Tx) error {
		if err := stx.PutWebhook(w); err != nil {
			return err
		}
		for range 4 {
			if err := stx.PutDelivery(&data.Delivery{ID: db.IDs().New(data.PrefixDelivery), WebhookID: w.ID, EventID: "evt_x",
				EventType: data.EventCallEnded, Attempt: 1, Status: data.DeliverySucceeded, CreatedAt: data.NewTime(time.Now())}); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	f := service.DeliveryFilter{Types: []string{data.EventCallEnded}}
	if err := db.View(ctx, func(stx service.Tx) error {
		_, meta, err := stx.Deliveries(w.ID, f, data.PageRequest{PerPage: 1})
		if err != nil || meta.NextCursor == nil {
			t.Fatalf("the first page: next %v, %v", meta.NextCursor, err)
		}
		if _, meta, err = stx.Deliveries(w.ID, f, data.PageRequest{PerPage: 1, Cursor: *meta.NextCursor}); err != nil || meta.PrevCursor == nil {
			t.Fatalf("the second page: prev %v, %v", meta.PrevCursor, err)
		}
		var bitmap, sort string
		if err := stx.(*tx).queryRow(`SELECT current_setting('enable_bitmapscan'), current_setting('enable_sort')`).Scan(&bitmap, &sort); err != nil {
			return err
		}
		if bitmap != "on" || sort != "on" {
			t.Errorf("after the pages: enable_bitmapscan %s, enable_sort %s; want both on, as the session has them", bitmap, sort)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
