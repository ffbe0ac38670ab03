package bolt

import (
	"bytes"
	"fmt"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
)

// bucketDeliveriesByType lists each webhook's deliveries by their event's type,
// "<webhook id>\x00<type>\x00<delivery id>" (schema 28): a page for a caller that reads
// some types only walks those types' scopes merged (Deliveries), so the deliveries of
// the others are neither walked nor counted, where it looked at up to 2,000 of every
// type a page and came back empty, with a cursor, behind more hidden ones. Webhook ids
// and types hold no NUL, so one scope is never the prefix of another's.
var bucketDeliveriesByType = []byte("deliveries_by_type")

func init() { allBuckets = append(allBuckets, bucketDeliveriesByType) }

func deliveryTypeScope(webhookID, eventType string) string {
	return webhookID + "\x00" + eventType
}

// moveDeliveryType moves d's entry from the scope of its stored type, was, to its own.
func (t tx) moveDeliveryType(d *data.Delivery, was string) error {
	b := t.b.Bucket(bucketDeliveriesByType)
	if err := indexDelete(b, deliveryTypeScope(d.WebhookID, was), d.ID); err != nil {
		return err
	}
	return indexPut(b, deliveryTypeScope(d.WebhookID, d.EventType), d.ID)
}

// deleteWebhookDeliveryTypes removes a deleted webhook's entries.
func deleteWebhookDeliveryTypes(tx *bbolt.Tx, webhookID string) error {
	return deletePrefix(tx.Bucket(bucketDeliveriesByType), []byte(webhookID+"\x00"))
}

// listDeliveryTypesOfStore fills the type index from the stored deliveries (the schema
// 27 → 28 migration, in the transaction that raises the version, so a crash leaves
// schema 27 to fill it again), each delivery's type read alone, the entries put in key
// order (putSorted). An index entry without its delivery lists nothing.
func listDeliveryTypesOfStore(tx *bbolt.Tx) error {
	var entries []indexEntry
	records := tx.Bucket(bucketDeliveries)
	c := tx.Bucket(bucketDeliveriesByWebhook).Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		i := bytes.IndexByte(k, 0)
		if i < 0 {
			continue
		}
		webhookID, id := string(k[:i]), string(k[i+1:])
		v := records.Get([]byte(id))
		if v == nil {
			continue
		}
		var s dueState
		if err := jsonUnmarshal(v, &s); err != nil {
			return fmt.Errorf("delivery %s: %w", id, err)
		}
		entries = append(entries, indexEntry{indexKey(deliveryTypeScope(webhookID, s.EventType), id), nil})
	}
	return putSorted(tx.Bucket(bucketDeliveriesByType), entries)
}
