package bolt

import (
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
	g := data.NewIDGen()
	at := data.NewTime(time.Now())
	status, failure := 200, "connection refused: the receiver at https://hooks.example.com/voice did not answer"
	benchUpgrade(b, []int{10_000, 100_000}, bucketDeliveriesByType, listDeliveryTypesOfStore, func(tx service.Tx, j int) error { // as a schema 27 file
		d := &data.Delivery{ID: g.New(data.PrefixDelivery), WebhookID: fmt.Sprintf("wh_01JD60000000000000000%05d", j%20),
			EventID: "evt_x", EventType: data.EventTypes[j%10], Attempt: 1, Status: data.DeliverySucceeded,
			ResponseStatus: &status, CreatedAt: at}
		if j%10 == 0 {
			d.Status, d.ResponseStatus, d.Error = data.DeliveryFailed, nil, &failure
		}
		return tx.PutDelivery(d)
	})
}
