package service_test

import (
	"context"
	"crypto/rand"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// sendAndFinish sends a test event to w, claims its delivery and finishes it with out.
func sendAndFinish(t *testing.T, svc *service.Services, w *data.Webhook, now time.Time, out data.AttemptOutcome) *data.DeliveryJob {
	t.Helper()
	if _, err := svc.Webhooks.SendTestEvent(as("ws_1"), w.ID); err != nil {
		t.Fatal(err)
	}
	drain(t, svc)
	jobs := due(t, svc, now)[w.ID]
	if len(jobs) != 1 {
		t.Fatalf("jobs after a test event: %+v", jobs)
	}
	if err := svc.Deliveries.FinishAttempt(context.Background(), jobs[0].DeliveryID, out); err != nil {
		t.Fatal(err)
	}
	return jobs[0]
}

func TestPruneDeliveriesKeepsPendingRecentAndEvents(t *testing.T) {
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	clock := &fixedClock{start}
	svc, store := newServices(t, clock, nil)
	ctx := as("ws_1")
	w, _, err := svc.Webhooks.CreateWebhook(ctx, data.WebhookCreate{URL: "https://a.example/", Events: []string{data.EventWebhookTest}})
	if err != nil {
		t.Fatal(err)
	}
	settle(t, svc, clock.t)

	// Day 0: one delivered, one failed with a retry queued (its second attempt stays
	// pending), one failed for good.
	ok := sendAndFinish(t, svc, w, clock.t, data.AttemptOutcome{Succeeded: true, ResponseStatus: 204})
	retried := sendAndFinish(t, svc, w, clock.t, data.AttemptOutcome{ResponseStatus: 503, RetryAt: start.Add(400 * time.Hour)})
	failed := sendAndFinish(t, svc, w, clock.t, data.AttemptOutcome{Error: "refused"})
	// Day 10: one more delivered.
	clock.t = start.Add(240 * time.Hour)
	recent := sendAndFinish(t, svc, w, clock.t, data.AttemptOutcome{Succeeded: true})

	if n, err := svc.Deliveries.PruneDeliveries(context.Background(), 0); n != 0 || err != nil {
		t.Fatalf("retention 0 pruned %d, %v; want nothing", n, err)
	}
	if n, err := svc.Deliveries.PruneDeliveries(context.Background(), 11*24*time.Hour); n != 0 || err != nil {
		t.Fatalf("retention of 11 days on day 10 pruned %d, %v; want nothing", n, err)
	}
	n, err := svc.Deliveries.PruneDeliveries(context.Background(), 7*24*time.Hour)
	if err != nil || n != 3 {
		t.Fatalf("retention of 7 days on day 10 pruned %d, %v; want the three finished day-0 records", n, err)
	}
	list, _, err := svc.Webhooks.ListDeliveries(ctx, w.ID, data.PageRequest{PerPage: 100})
	if err != nil {
		t.Fatal(err)
	}
	left := map[string]string{}
	for _, d := range list {
		left[d.ID] = d.Status
	}
	if len(left) != 2 || left[recent.DeliveryID] != data.DeliverySucceeded {
		t.Fatalf("left after pruning %v; want day 10's record and the pending retry", left)
	}
	for _, j := range []*data.DeliveryJob{ok, retried, failed} {
		if _, kept := left[j.DeliveryID]; kept {
			t.Errorf("day 0's record %s was kept", j.DeliveryID)
		}
	}
	// The pending retry of day 0 is still due at its time, for attempt 2.
	if jobs := due(t, svc, start.Add(400*time.Hour))[w.ID]; len(jobs) != 1 || jobs[0].EventID != retried.EventID || jobs[0].Attempt != 2 {
		t.Errorf("the pending retry after pruning: %+v", jobs)
	}
	// The events stay: the audit log is made of them.
	if err := store.View(context.Background(), func(tx service.Tx) error {
		for _, j := range []*data.DeliveryJob{ok, retried, failed} {
			if e, err := tx.Event(j.EventID); err != nil || e == nil {
				t.Errorf("event %s after pruning: %v, %v", j.EventID, e, err)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

func TestPruneDeliveriesGoesInBatches(t *testing.T) {
	clock := &fixedClock{time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	svc, store := newServices(t, clock, nil)
	w, _, err := svc.Webhooks.CreateWebhook(as("ws_1"), data.WebhookCreate{URL: "https://a.example/", Events: []string{data.EventWebhookTest}})
	if err != nil {
		t.Fatal(err)
	}
	settle(t, svc, clock.t)
	total := service.DeliveryPruneBatch + 10
	ids := &data.IDGen{Now: func() time.Time { return clock.t }, Rand: rand.Reader}
	if err := store.Update(context.Background(), func(tx service.Tx) error {
		for range total {
			d := &data.Delivery{ID: ids.New(data.PrefixDelivery), WebhookID: w.ID, EventID: "evt_x", EventType: data.EventWebhookTest,
				Attempt: 1, Status: data.DeliverySucceeded, CreatedAt: data.NewTime(clock.t)}
			if err := tx.PutDelivery(d); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	clock.t = clock.t.Add(2 * time.Hour)
	for pass, want := range []int{service.DeliveryPruneBatch, total - service.DeliveryPruneBatch, 0} {
		n, err := svc.Deliveries.PruneDeliveries(context.Background(), time.Hour)
		if err != nil || n != want {
			t.Fatalf("pass %d pruned %d, %v; want %d", pass, n, err, want)
		}
	}
	if list, _, err := svc.Webhooks.ListDeliveries(as("ws_1"), w.ID, data.PageRequest{}); err != nil || len(list) != 0 {
		t.Errorf("deliveries after the passes: %d, %v", len(list), err)
	}
}
