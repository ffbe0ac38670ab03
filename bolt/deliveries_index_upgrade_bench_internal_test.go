package bolt

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// BenchmarkUpgradeListsDeliveryTypes times the schema 27 → 28 fill
// (listDeliveryTypesOfStore) over n deliveries of 20 webhooks and 10 event types, stored
// through the engine (one in ten a failure with its error): it runs at open, in the
// migration's one transaction (docs/performance.md, "Schema 28's fill at open").
func BenchmarkUpgradeListsDeliveryTypes(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			db, err := Open(b.TempDir(), Options{NoSync: true, SecretKey: make([]byte, 32)})
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			g := data.NewIDGen()
			at := data.NewTime(time.Now())
			status, failure := 200, "connection refused: the receiver at https://hooks.example.com/voice did not answer"
			for i := 0; i < n; i += 1000 {
				if err := db.Update(context.Background(), func(tx service.Tx) error {
					for j := i; j < min(i+1000, n); j++ {
						d := &data.Delivery{ID: g.New(data.PrefixDelivery), WebhookID: fmt.Sprintf("wh_01JD60000000000000000%05d", j%20),
							EventID: "evt_x", EventType: data.EventTypes[j%10], Attempt: 1, Status: data.DeliverySucceeded,
							ResponseStatus: &status, CreatedAt: at}
						if j%10 == 0 {
							d.Status, d.ResponseStatus, d.Error = data.DeliveryFailed, nil, &failure
						}
						if err := tx.PutDelivery(d); err != nil {
							return err
						}
					}
					return nil
				}); err != nil {
					b.Fatal(err)
				}
			}
			benchFill(b, db, bucketDeliveriesByType, listDeliveryTypesOfStore) // as a schema 27 file
		})
	}
}
