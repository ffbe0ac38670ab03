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
	f := seedPruneDeliveries(t, open(t))
	// Oldest first, limit at a time.
	if n := f.prune(t, 2); n != 2 {
		t.Fatalf("first pass (limit 2) deleted %d, want 2", n)
	}
	f.checkFirstPass(t)
	if n := f.prune(t, 10); n != 2 {
		t.Fatalf("second pass deleted %d, want 2 (the retrying record and the one made a millisecond before)", n)
	}
	if n := f.prune(t, 10); n != 0 {
		t.Fatalf("third pass deleted %d, want 0", n)
	}
	f.checkKept(t)
}

// pruneDeliveries are deliveries of two webhooks, made around before.
type pruneDeliveries struct {
	s                                           service.Store
	before                                      time.Time
	w, other                                    *data.WebhookRecord
	succeeded, failed, pending, edge, restamped *data.Delivery
	all                                         []*data.Delivery
}

// seedPruneDeliveries stores deliveries in every status, old ones, one made at before,
// one just before, and an old id restamped new.
func seedPruneDeliveries(t *testing.T, s service.Store) *pruneDeliveries {
	t.Helper()
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
	return &pruneDeliveries{s: s, before: before, w: w, other: other, succeeded: succeeded, failed: failed, pending: pending, edge: edge, restamped: restamped, all: all}
}

// prune prunes the deliveries made before f.before, limit at most, and returns how many.
func (f *pruneDeliveries) prune(t *testing.T, limit int) int {
	t.Helper()
	var n int
	update(t, f.s, func(tx service.Tx) (err error) {
		n, err = tx.PruneDeliveries(f.before, limit)
		return err
	})
	return n
}

// checkFirstPass checks the first pass deleted the two oldest.
func (f *pruneDeliveries) checkFirstPass(t *testing.T) {
	t.Helper()
	view(t, f.s, func(tx service.Tx) error {
		for _, d := range f.all {
			got, err := tx.Delivery(d.ID)
			if err != nil {
				return err
			}
			if gone := d == f.succeeded || d == f.failed; (got == nil) != gone {
				t.Errorf("after the first pass delivery %s (%s, made %v) present = %v", d.ID, d.Status, d.CreatedAt, got != nil)
			}
		}
		return nil
	})
}

// checkKept checks what pruning kept: the one made at before, the restamped one and the
// pending one, none of the other webhook's, and the pending one still due.
func (f *pruneDeliveries) checkKept(t *testing.T) {
	t.Helper()
	view(t, f.s, func(tx service.Tx) error {
		page, _, err := tx.Deliveries(f.w.ID, service.DeliveryFilter{}, data.PageRequest{PerPage: 10})
		if err != nil {
			return err
		}
		var ids []string
		for _, d := range page {
			ids = append(ids, d.ID)
		}
		want := []string{f.edge.ID, f.restamped.ID, f.pending.ID} // newest first
		if !slices.Equal(ids, want) {
			t.Errorf("webhook's deliveries after pruning = %v, want %v (edge, restamped, pending)", ids, want)
		}
		page, _, err = tx.Deliveries(f.other.ID, service.DeliveryFilter{}, data.PageRequest{PerPage: 10})
		if err != nil || len(page) != 0 {
			t.Errorf("other webhook's deliveries after pruning = %d, %v; want none", len(page), err)
		}
		due, _, err := tx.DueDeliveries(f.before.Add(time.Hour), 10, nil)
		if err != nil || !slices.Equal(due, []string{f.pending.ID}) {
			t.Errorf("due after pruning = %v, %v; want the old pending one", due, err)
		}
		return err
	})
}
