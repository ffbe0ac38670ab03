package bolt_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/service"
)

// TestDeliveriesFilterScanBound: a filtered page of a delivery log looks at no more than
// the filter's MaxScan deliveries: past more it may not keep, the page ends short with a
// cursor past what it looked at, and following the cursors reaches every kept one.
func TestDeliveriesFilterScanBound(t *testing.T) {
	ids := data.NewIDGen()
	s := testkit.OpenStore(t)
	w := &data.WebhookRecord{Webhook: data.Webhook{ID: ids.New(data.PrefixWebhook), WorkspaceID: "ws_1", URL: "https://example.com/h",
		Events: []string{"*"}, Enabled: true, CreatedAt: data.NewTime(time.Now()), UpdatedAt: data.NewTime(time.Now())}}
	var kept []string // newest first
	if err := s.Update(context.Background(), func(tx service.Tx) error {
		if err := tx.PutWebhook(w); err != nil {
			return err
		}
		for i := range 32 {
			d := &data.Delivery{ID: ids.New(data.PrefixDelivery), WebhookID: w.ID, EventID: "evt_x", EventType: data.EventAgentCreated,
				Attempt: 1, Status: data.DeliverySucceeded, CreatedAt: data.NewTime(time.Now())}
			if i < 2 { // the oldest two are of the kept type, 30 hidden ones after them
				d.EventType = data.EventCallEnded
				kept = append([]string{d.ID}, kept...)
			}
			if err := tx.PutDelivery(d); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	f := service.DeliveryFilter{Types: []string{data.EventCallEnded}, MaxScan: 10}
	var walked []string
	pages := 0
	req := data.PageRequest{PerPage: 15}
	for ; pages < 10; pages++ {
		var page []*data.Delivery
		var meta data.Page
		if err := s.View(context.Background(), func(tx service.Tx) (err error) {
			page, meta, err = tx.Deliveries(w.ID, f, req)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		for _, d := range page {
			walked = append(walked, d.ID)
		}
		if pages == 0 && meta.PrevCursor != nil {
			t.Errorf("the first page, cut short by the bound, leads to newer deliveries (%s): there are none", *meta.PrevCursor)
		}
		if meta.NextCursor == nil {
			break
		}
		req.Cursor = *meta.NextCursor
	}
	if !slices.Equal(walked, kept) || pages < 3 {
		t.Errorf("walked %v in %d pages, want %v in at least 3 (10 looked at a page)", walked, pages+1, kept)
	}
}
