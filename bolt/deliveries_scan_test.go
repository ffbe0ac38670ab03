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

// TestDeliveriesFilterScanBoundEdge: the bound's edge and just past it. A log of exactly
// MaxScan deliveries is looked at whole (no cursor past it); one more ends the first page
// at the bound, with a cursor that leads to the rest. So whether the kept delivery, the
// oldest, is on the first page or the second turns on the one delivery more.
func TestDeliveriesFilterScanBoundEdge(t *testing.T) {
	const maxScan = 10
	for _, c := range []struct {
		name          string
		hidden        int  // newer than the kept one
		kept          bool // the oldest delivery is of the kept type
		first, second int  // kept deliveries on the first page and on the next (-1: no next)
	}{
		{"hidden, at the bound", maxScan, false, 0, -1},
		{"hidden, past the bound", maxScan + 1, false, 0, 0},
		{"kept one, at the bound", maxScan - 1, true, 1, -1},
		{"kept one, past the bound", maxScan, true, 0, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			ids := data.NewIDGen()
			s := testkit.OpenStore(t)
			now := data.NewTime(time.Now())
			w := &data.WebhookRecord{Webhook: data.Webhook{ID: ids.New(data.PrefixWebhook), WorkspaceID: "ws_1", URL: "https://example.com/h",
				Events: []string{"*"}, Enabled: true, CreatedAt: now, UpdatedAt: now}}
			if err := s.Update(context.Background(), func(tx service.Tx) error {
				if err := tx.PutWebhook(w); err != nil {
					return err
				}
				types := make([]string, c.hidden)
				for i := range types {
					types[i] = data.EventAgentCreated
				}
				if c.kept {
					types = append([]string{data.EventCallEnded}, types...) // the oldest
				}
				for _, typ := range types {
					d := &data.Delivery{ID: ids.New(data.PrefixDelivery), WebhookID: w.ID, EventID: "evt_x", EventType: typ,
						Attempt: 1, Status: data.DeliverySucceeded, CreatedAt: now}
					if err := tx.PutDelivery(d); err != nil {
						return err
					}
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			f := service.DeliveryFilter{Types: []string{data.EventCallEnded}, MaxScan: maxScan}
			page := func(cursor string) ([]*data.Delivery, data.Page) {
				var list []*data.Delivery
				var meta data.Page
				if err := s.View(context.Background(), func(tx service.Tx) (err error) {
					list, meta, err = tx.Deliveries(w.ID, f, data.PageRequest{PerPage: 15, Cursor: cursor})
					return err
				}); err != nil {
					t.Fatal(err)
				}
				return list, meta
			}
			first, meta := page("")
			if len(first) != c.first {
				t.Errorf("the first page holds %d, want %d", len(first), c.first)
			}
			if (meta.NextCursor != nil) != (c.second >= 0) {
				t.Fatalf("the first page's next_cursor: %v, want one: %v", meta.NextCursor, c.second >= 0)
			}
			if c.second < 0 {
				return
			}
			second, meta := page(*meta.NextCursor)
			if len(second) != c.second || meta.NextCursor != nil {
				t.Errorf("the next page holds %d (next_cursor %v), want %d and the end", len(second), meta.NextCursor, c.second)
			}
		})
	}
}

// TestDeliveriesFilterOffersOnlyCursorsItTakes: a narrowed log of only deliveries the
// key may not read, more than a page looks at, walked by every cursor its pages offer:
// each is taken. The page read newer from the oldest end (where an empty last page leads
// back) was cut by the bound and offered an older cursor past the oldest delivery, one
// without an id, which pagecursor refuses: the server's own next_cursor answered 422.
func TestDeliveriesFilterOffersOnlyCursorsItTakes(t *testing.T) {
	ids := data.NewIDGen()
	s := testkit.OpenStore(t)
	now := data.NewTime(time.Now())
	w := &data.WebhookRecord{Webhook: data.Webhook{ID: ids.New(data.PrefixWebhook), WorkspaceID: "ws_1", URL: "https://example.com/h",
		Events: []string{"*"}, Enabled: true, CreatedAt: now, UpdatedAt: now}}
	if err := s.Update(context.Background(), func(tx service.Tx) error {
		if err := tx.PutWebhook(w); err != nil {
			return err
		}
		for range 3 {
			if err := tx.PutDelivery(&data.Delivery{ID: ids.New(data.PrefixDelivery), WebhookID: w.ID, EventID: "evt_x",
				EventType: data.EventAgentCreated, Attempt: 1, Status: data.DeliverySucceeded, CreatedAt: now}); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	f := service.DeliveryFilter{Types: []string{data.EventCallEnded}, MaxScan: 2}
	seen := map[string]bool{}
	todo := []string{""} // the first page, then every cursor offered, each followed once
	for len(todo) > 0 && len(seen) < 20 {
		cursor := todo[0]
		todo = todo[1:]
		if seen[cursor] {
			continue
		}
		seen[cursor] = true
		var meta data.Page
		if err := s.View(context.Background(), func(tx service.Tx) (err error) {
			_, meta, err = tx.Deliveries(w.ID, f, data.PageRequest{PerPage: 15, Cursor: cursor})
			return err
		}); err != nil {
			t.Errorf("a cursor the list offered (after %d pages): %v", len(seen)-1, err)
			continue
		}
		for _, next := range []*string{meta.NextCursor, meta.PrevCursor} {
			if next != nil {
				todo = append(todo, *next)
			}
		}
	}
	if len(seen) < 3 {
		t.Errorf("%d pages walked, want the bound to have cut at least one (3 or more)", len(seen))
	}
}
