package postgres_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// claim is the service's claim at the storage level: the due deliveries, each moved to
// the lease's end in the same write transaction.
func claim(ctx context.Context, db service.Store, now time.Time, limit int) ([]string, error) {
	var got []string
	err := db.Update(ctx, func(tx service.Tx) error {
		got = nil
		ids, _, err := tx.DueDeliveries(now, limit, nil)
		if err != nil {
			return err
		}
		lease := data.NewTime(now.Add(time.Hour))
		for _, id := range ids {
			d, err := tx.Delivery(id)
			if err != nil || d == nil {
				return err
			}
			d.NextAttemptAt = &lease
			if err := tx.PutDelivery(d); err != nil {
				return err
			}
			got = append(got, id)
		}
		return nil
	})
	return got, err
}

// Claimers on three replicas draining one queue at once claim every due delivery exactly
// once: the rows a claim reads FOR UPDATE SKIP LOCKED are passed over by the others, and
// a conflict the serializable check finds is retried, never double-claimed.
func TestClaimsAcrossReplicasTakeEachDeliveryOnce(t *testing.T) {
	dbs := openReplicas(t, 3)
	ctx := context.Background()
	now := time.Now()
	const n = 120
	w := &data.WebhookRecord{Webhook: data.Webhook{ID: "wh_1", WorkspaceID: "ws_1", URL: "https://example.com", Events: []string{"*"}}}
	err := dbs[0].Update(ctx, func(tx service.Tx) error {
		if err := tx.PutWebhook(w); err != nil {
			return err
		}
		for i := range n {
			due := data.NewTime(now.Add(-time.Duration(n-i) * time.Millisecond))
			d := &data.Delivery{ID: dbs[0].IDs().New(data.PrefixDelivery), WebhookID: w.ID, EventID: "evt_1", EventType: data.EventAgentCreated,
				Attempt: 1, Status: data.DeliveryPending, NextAttemptAt: &due}
			if err := tx.PutDelivery(d); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	claimed := map[string]int{}
	var wg sync.WaitGroup
	errs := make(chan error, 9)
	for c := range 9 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				ids, err := claim(ctx, dbs[c%3], now, 4)
				if err != nil {
					errs <- err
					return
				}
				if len(ids) == 0 {
					return
				}
				mu.Lock()
				for _, id := range ids {
					claimed[id]++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if len(claimed) != n {
		t.Errorf("%d deliveries claimed, want all %d", len(claimed), n)
	}
	for id, times := range claimed {
		if times != 1 {
			t.Errorf("delivery %s claimed %d times", id, times)
		}
	}
}
