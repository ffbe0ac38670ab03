package bolt

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"time"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// dueKey orders pending deliveries by due time, then by id, so the dispatcher finds the
// due ones with one seek.
func dueKey(at time.Time, id string) []byte {
	k := make([]byte, 8, 8+len(id))
	binary.BigEndian.PutUint64(k, uint64(max(at.UnixMilli(), 0)))
	return append(k, id...)
}

// dueState is the part of a stored delivery that places it in the due index.
type dueState struct {
	EventType     string     `json:"event_type"` // its scope in deliveries_by_type
	Status        string     `json:"status"`
	NextAttemptAt *data.Time `json:"next_attempt_at"`
}

// dueIndexKey is the delivery's key in the due index, nil when it is not listed there.
func (s dueState) dueIndexKey(id string) []byte {
	if s.Status != data.DeliveryPending || s.NextAttemptAt == nil {
		return nil
	}
	return dueKey(s.NextAttemptAt.Time, id)
}

// Delivery implements service.DeliveryTx.
func (t tx) Delivery(id string) (*data.Delivery, error) {
	var d data.Delivery
	found, err := getJSON(t.b.Bucket(bucketDeliveries), []byte(id), &d)
	if err != nil || !found {
		return nil, err
	}
	return &d, nil
}

// Deliveries implements service.DeliveryTx. Under a filter the page walks its types'
// scopes of deliveries_by_type merged, and no other delivery: its cursors are those of
// the whole log's (delivery ids, under the list's name).
func (t tx) Deliveries(webhookID string, f service.DeliveryFilter, req data.PageRequest) ([]*data.Delivery, data.Page, error) {
	spec := listSpec{index: bucketDeliveriesByWebhook, scope: webhookID, filter: f.Key()}
	if f.Types != nil {
		spec.walked, spec.scopes = bucketDeliveriesByType, make([]string, 0, len(f.Types))
		for _, typ := range f.Types {
			spec.scopes = append(spec.scopes, deliveryTypeScope(webhookID, typ))
		}
	}
	ids, page, err := t.db.list(t.b, spec, req)
	if err != nil {
		return nil, page, err
	}
	list := make([]*data.Delivery, 0, len(ids))
	for _, id := range ids {
		d, err := t.Delivery(id)
		if err != nil {
			return nil, page, err
		}
		if d == nil {
			return nil, page, data.NotFound("Delivery")
		}
		list = append(list, d)
	}
	return list, page, nil
}

// PutDelivery implements service.DeliveryTx.
func (t tx) PutDelivery(d *data.Delivery) error {
	b, due := t.b.Bucket(bucketDeliveries), t.b.Bucket(bucketDeliveriesDue)
	if old := b.Get([]byte(d.ID)); old != nil {
		var s dueState
		if err := jsonUnmarshal(old, &s); err != nil {
			return err
		}
		if k := s.dueIndexKey(d.ID); k != nil {
			if err := due.Delete(k); err != nil {
				return err
			}
		}
		if s.EventType != d.EventType { // a record changed in place moves scope
			if err := t.moveDeliveryType(d, s.EventType); err != nil {
				return err
			}
		}
	} else {
		if err := indexPut(t.b.Bucket(bucketDeliveriesByWebhook), d.WebhookID, d.ID); err != nil {
			return err
		}
		if err := indexPut(t.b.Bucket(bucketDeliveriesByType), deliveryTypeScope(d.WebhookID, d.EventType), d.ID); err != nil {
			return err
		}
	}
	if err := putJSON(b, []byte(d.ID), d); err != nil {
		return err
	}
	if k := (dueState{Status: d.Status, NextAttemptAt: d.NextAttemptAt}).dueIndexKey(d.ID); k != nil {
		if err := due.Put(k, nil); err != nil {
			return err
		}
		// Wake the dispatcher: the hook is how it hears of new work.
		t.b.OnCommit(t.db.fireEventHook)
	}
	return nil
}

// DueDeliveries implements service.DeliveryTx.
func (t tx) DueDeliveries(now time.Time, limit int, skip func(string) bool) ([]string, time.Time, error) {
	var ids []string
	nowKey := uint64(max(now.UnixMilli(), 0))
	c := t.b.Bucket(bucketDeliveriesDue).Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		id := string(k[8:])
		if skip != nil && skip(id) {
			continue
		}
		dueMS := binary.BigEndian.Uint64(k[:8])
		if dueMS > nowKey || len(ids) == limit {
			return ids, time.UnixMilli(int64(dueMS)), nil
		}
		ids = append(ids, id)
	}
	return ids, time.Time{}, nil
}

// Outbox implements service.DeliveryTx.
func (t tx) Outbox(limit int) ([]string, error) {
	var ids []string
	c := t.b.Bucket(bucketOutbox).Cursor()
	for k, _ := c.First(); k != nil && len(ids) < limit; k, _ = c.Next() {
		ids = append(ids, string(k))
	}
	return ids, nil
}

// RemoveFromOutbox implements service.DeliveryTx.
func (t tx) RemoveFromOutbox(eventID string) error {
	return t.b.Bucket(bucketOutbox).Delete([]byte(eventID))
}

// deleteWebhookDeliveries removes every delivery of a webhook, pending ones from the queue.
func deleteWebhookDeliveries(tx *bbolt.Tx, webhookID string) error {
	idx := tx.Bucket(bucketDeliveriesByWebhook)
	for _, id := range scopeIDs(idx, webhookID) {
		if raw := tx.Bucket(bucketDeliveries).Get([]byte(id)); raw != nil {
			var s dueState
			if err := jsonUnmarshal(raw, &s); err != nil {
				return err
			}
			if k := s.dueIndexKey(id); k != nil {
				if err := tx.Bucket(bucketDeliveriesDue).Delete(k); err != nil {
					return err
				}
			}
		}
		if err := tx.Bucket(bucketDeliveries).Delete([]byte(id)); err != nil {
			return err
		}
		if err := indexDelete(idx, webhookID, id); err != nil {
			return err
		}
	}
	return deleteWebhookDeliveryTypes(tx, webhookID)
}

// WebhookQueueDepth counts what the dispatcher still has to do: events in the outbox not
// yet fanned out, and pending deliveries (due now or waiting for a retry). It walks both
// buckets, which stay small while delivery keeps up; it serves GET /metrics.
func (db *DB) WebhookQueueDepth(ctx context.Context) (int, error) {
	n := 0
	err := db.view(func(tx *bbolt.Tx) error {
		for _, name := range [][]byte{bucketOutbox, bucketDeliveriesDue} {
			c := tx.Bucket(name).Cursor()
			for k, _ := c.First(); k != nil; k, _ = c.Next() {
				n++
			}
		}
		return nil
	})
	return n, err
}

// PruneDeliveries implements service.DeliveryTx: a walk of the deliveries bucket, whose
// keys are the time-ordered ids, from the oldest up to before's first id.
func (t tx) PruneDeliveries(before time.Time, limit int) (int, error) {
	b := t.b.Bucket(bucketDeliveries)
	end := []byte(data.IDFloor(data.PrefixDelivery, before))
	var old []data.Delivery
	c := b.Cursor()
	for k, v := c.First(); k != nil && bytes.Compare(k, end) < 0 && len(old) < limit; k, v = c.Next() {
		var d data.Delivery
		if err := jsonUnmarshal(v, &d); err != nil {
			return 0, fmt.Errorf("delivery %s: %w", k, err)
		}
		if d.Status != data.DeliveryPending && d.CreatedAt.Before(before) {
			old = append(old, d)
		}
	}
	// Deleted after the walk: a bbolt cursor may skip a key after a delete under it.
	idx, byType := t.b.Bucket(bucketDeliveriesByWebhook), t.b.Bucket(bucketDeliveriesByType)
	for _, d := range old {
		if err := b.Delete([]byte(d.ID)); err != nil {
			return 0, err
		}
		if err := indexDelete(idx, d.WebhookID, d.ID); err != nil {
			return 0, err
		}
		if err := indexDelete(byType, deliveryTypeScope(d.WebhookID, d.EventType), d.ID); err != nil {
			return 0, err
		}
	}
	return len(old), nil
}
