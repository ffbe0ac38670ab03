package postgres

import (
	"github.com/jackc/pgx/v5"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// narrowedDeliveries is a page of a webhook's delivery log under a type filter: each of
// f's types walked on deliveries_by_webhook_type (migration 0042), at most per_page+1
// rows a type, and merged (keyset.walks). The deliveries of other types are never read,
// so a page costs its own rows however many hidden ones the log holds, and its shape
// (an empty page, a cursor) tells nothing of them.
func (t *tx) narrowedDeliveries(webhookID string, f service.DeliveryFilter, req data.PageRequest) ([]*data.Delivery, data.Page, error) {
	return pageRows(t, deliveryWalks(webhookID, f), req, func(rows pgx.Rows) (*data.Delivery, string, error) { return deliveryKeyed(rows) })
}

// deliveryWalks is the keyset of a narrowed page: the webhook's deliveries, one walk per
// type of f. Types hold no duplicate (carriable), so the walks' rows do not overlap.
func deliveryWalks(webhookID string, f service.DeliveryFilter) keyset {
	ks := deliveryList(webhookID, f)
	ks.within, ks.from = "", `deliveries WHERE webhook_id = $1`
	ks.walks = []walk{{col: "event_type", vals: f.Types}}
	return ks
}
