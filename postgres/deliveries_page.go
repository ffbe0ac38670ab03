package postgres

import (
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// narrowedDeliveries is a page of a webhook's delivery log under a type filter, with the
// bbolt engine's walk (scanPage): the deliveries of other types passed over, no more than
// f.MaxScan looked at a page (0: no bound), so a page costs O(MaxScan) rows however many
// hidden ones the log holds.
func (t *tx) narrowedDeliveries(webhookID string, f service.DeliveryFilter, req data.PageRequest) ([]*data.Delivery, data.Page, error) {
	return scanPage(t, deliveryWalk(webhookID, f), req, deliveryKeyed)
}

// deliveryWalk is a narrowed page's walk of one webhook's deliveries (deliveryList's
// order), keeping f's types ($2).
func deliveryWalk(webhookID string, f service.DeliveryFilter) scanWalk {
	ks := deliveryList(webhookID, f)
	ks.args = append(ks.args, f.Types)
	return scanWalk{ks: ks, table: "deliveries", keep: "event_type = ANY($2)", maxScan: f.MaxScan}
}
