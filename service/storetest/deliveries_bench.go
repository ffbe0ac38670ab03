package storetest

import (
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// BenchDeliveriesFiltered reads the first page (15) of a narrowed webhook's delivery log
// for a key that reads only its present type, as the service asks for it: the 10,000
// newest deliveries are of a type it carried before, which the page does not walk (each
// kept type's deliveries alone), before the readable ones. VOICEAPI_BENCH_HIDDEN_THOUSANDS=100
// puts 100,000 hidden ones there instead; a store with a Settle method (PostgreSQL's,
// which may run ANALYZE as autovacuum would) is settled once they are stored.
func BenchDeliveriesFiltered(b *testing.B, open Opener) {
	s := open(b)
	w := webhookRecord("ws_1")
	update(b, s, func(tx service.Tx) error { return tx.PutWebhook(w) })
	hidden := 10
	if n, err := strconv.Atoi(os.Getenv("VOICEAPI_BENCH_HIDDEN_THOUSANDS")); err == nil && n > 0 {
		hidden = n
	}
	for batch := range hidden + 1 {
		update(b, s, func(tx service.Tx) error {
			for range 1000 {
				d := pendingDelivery(w.ID, time.Now())
				d.Status, d.NextAttemptAt = data.DeliverySucceeded, nil
				if batch == 0 {
					d.EventType = data.EventCallEnded // the oldest: the present type
				}
				if err := tx.PutDelivery(d); err != nil {
					return err
				}
			}
			return nil
		})
	}
	if settle, ok := s.(interface{ Settle(testing.TB) }); ok {
		settle.Settle(b)
	}
	f := service.DeliveryFilter{Types: []string{data.EventCallEnded}}
	b.ReportAllocs()
	for b.Loop() {
		view(b, s, func(tx service.Tx) error {
			page, meta, err := tx.Deliveries(w.ID, f, data.PageRequest{PerPage: 15})
			if err != nil || len(page) != 15 && meta.NextCursor == nil {
				b.Fatalf("a filtered page: %d, next %v, %v", len(page), meta.NextCursor, err)
			}
			return nil
		})
	}
}
