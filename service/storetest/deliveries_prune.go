package storetest

import (
	"crypto/rand"
	"slices"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// deliveryAt is a delivery of webhookID with status, made at made (its id and created_at).
func deliveryAt(webhookID, status string, made time.Time) *data.Delivery {
	g := &data.IDGen{Now: func() time.Time { return made }, Rand: rand.Reader}
	d := &data.Delivery{ID: g.New(data.PrefixDelivery), WebhookID: webhookID, EventID: "evt_x", EventType: data.EventAgentCreated,
		Attempt: 1, Status: status, CreatedAt: data.NewTime(made)}
	if status == data.DeliveryPending || status == data.DeliveryRetrying {
		next := data.NewTime(made.Add(time.Minute))
		d.NextAttemptAt = &next
	}
	return d
}

func testPruneDeliveries(t *testing.T, open Opener) {
	s := open(t)
	w, other := webhookRecord("ws_1"), webhookRecord("ws_2")
	before := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	old := before.Add(-48 * time.Hour)
	succeeded := deliveryAt(w.ID, data.DeliverySucceeded, old)
	failed := deliveryAt(other.ID, data.DeliveryFailed, old.Add(time.Second))
	retrying := deliveryAt(w.ID, data.DeliveryRetrying, old.Add(2*time.Second))
	pending := deliveryAt(w.ID, data.DeliveryPending, old.Add(3*time.Second)) // never pruned, however old
	edge := deliveryAt(w.ID, data.DeliverySucceeded, before)                  // made at before: kept
	justBefore := deliveryAt(w.ID, data.DeliveryFailed, before.Add(-time.Millisecond))
	// An old id whose created_at is not old (written back by an import, say) is kept.
	restamped := deliveryAt(w.ID, data.DeliverySucceeded, old.Add(4*time.Second))
	restamped.CreatedAt = data.NewTime(before.Add(time.Hour))
	all := []*data.Delivery{succeeded, failed, retrying, pending, edge, justBefore, restamped}
	update(t, s, func(tx service.Tx) error {
		for _, h := range []*data.WebhookRecord{w, other} {
			if err := tx.PutWebhook(h); err != nil {
				return err
			}
		}
		for _, d := range all {
			if err := tx.PutDelivery(d); err != nil {
				return err
			}
		}
		return nil
	})
	prune := func(limit int) int {
		t.Helper()
		var n int
		update(t, s, func(tx service.Tx) (err error) {
			n, err = tx.PruneDeliveries(before, limit)
			return err
		})
		return n
	}
	// Oldest first, limit at a time.
	if n := prune(2); n != 2 {
		t.Fatalf("first pass (limit 2) deleted %d, want 2", n)
	}
	view(t, s, func(tx service.Tx) error {
		for _, d := range all {
			got, err := tx.Delivery(d.ID)
			if err != nil {
				return err
			}
			if gone := d == succeeded || d == failed; (got == nil) != gone {
				t.Errorf("after the first pass delivery %s (%s, made %v) present = %v", d.ID, d.Status, d.CreatedAt, got != nil)
			}
		}
		return nil
	})
	if n := prune(10); n != 2 {
		t.Fatalf("second pass deleted %d, want 2 (the retrying record and the one made a millisecond before)", n)
	}
	if n := prune(10); n != 0 {
		t.Fatalf("third pass deleted %d, want 0", n)
	}
	view(t, s, func(tx service.Tx) error {
		page, _, err := tx.Deliveries(w.ID, data.PageRequest{PerPage: 10})
		if err != nil {
			return err
		}
		var ids []string
		for _, d := range page {
			ids = append(ids, d.ID)
		}
		want := []string{edge.ID, restamped.ID, pending.ID} // newest first
		if !slices.Equal(ids, want) {
			t.Errorf("webhook's deliveries after pruning = %v, want %v (edge, restamped, pending)", ids, want)
		}
		page, _, err = tx.Deliveries(other.ID, data.PageRequest{PerPage: 10})
		if err != nil || len(page) != 0 {
			t.Errorf("other webhook's deliveries after pruning = %d, %v; want none", len(page), err)
		}
		due, _, err := tx.DueDeliveries(before.Add(time.Hour), 10, nil)
		if err != nil || !slices.Equal(due, []string{pending.ID}) {
			t.Errorf("due after pruning = %v, %v; want the old pending one", due, err)
		}
		return err
	})
}
