package bolt

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"time"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/validate"
)

var _ data.DeliveryQueue = (*DB)(nil)

// deliveryRow is a delivery as stored.
type deliveryRow struct {
	data.Delivery
	WorkspaceID string `json:"workspace_id"`
}

// dueKey orders pending deliveries by due time, then by id, so the dispatcher finds the
// due ones with one seek.
func dueKey(at time.Time, id string) []byte {
	k := make([]byte, 8, 8+len(id))
	binary.BigEndian.PutUint64(k, uint64(max(at.UnixMilli(), 0)))
	return append(k, id...)
}

// insertPending queues an attempt of event e to webhook w, due at due.
func (db *DB) insertPending(tx *bbolt.Tx, w *data.Webhook, eventID, eventType string, attempt int, due time.Time) (*data.Delivery, error) {
	next := data.NewTime(due)
	row := deliveryRow{Delivery: data.Delivery{
		ID: db.ids.New(data.PrefixDelivery), WebhookID: w.ID, EventID: eventID, EventType: eventType,
		Attempt: attempt, Status: data.DeliveryPending, NextAttemptAt: &next, CreatedAt: db.timeNow(),
	}, WorkspaceID: w.WorkspaceID}
	if err := putJSON(tx.Bucket(bucketDeliveries), []byte(row.ID), row); err != nil {
		return nil, err
	}
	if err := indexPut(tx.Bucket(bucketDeliveriesByWebhook), w.ID, row.ID); err != nil {
		return nil, err
	}
	if err := tx.Bucket(bucketDeliveriesDue).Put(dueKey(next.Time, row.ID), nil); err != nil {
		return nil, err
	}
	// Wake the dispatcher: the hook is how it hears of new work.
	tx.OnCommit(db.fireEventHook)
	d := row.Delivery
	return &d, nil
}

func loadDelivery(tx *bbolt.Tx, id string) (*deliveryRow, error) {
	var row deliveryRow
	found, err := getJSON(tx.Bucket(bucketDeliveries), []byte(id), &row)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, data.NotFound("Delivery")
	}
	return &row, nil
}

// deleteWebhookDeliveries removes every delivery of a webhook, pending ones from the queue.
func deleteWebhookDeliveries(tx *bbolt.Tx, webhookID string) error {
	idx := tx.Bucket(bucketDeliveriesByWebhook)
	for _, id := range scopeIDs(idx, webhookID) {
		row, err := loadDelivery(tx, id)
		if err != nil && data.ErrorCode(err) != data.ENOTFOUND {
			return err
		}
		if row != nil && row.Status == data.DeliveryPending && row.NextAttemptAt != nil {
			if err := tx.Bucket(bucketDeliveriesDue).Delete(dueKey(row.NextAttemptAt.Time, id)); err != nil {
				return err
			}
		}
		if err := tx.Bucket(bucketDeliveries).Delete([]byte(id)); err != nil {
			return err
		}
		if err := indexDelete(idx, webhookID, id); err != nil {
			return err
		}
	}
	return nil
}

// fanOutBatch bounds the events one FanOut transaction moves, so a backlog is drained in
// transactions of bounded size.
const fanOutBatch = 256

// FanOut implements data.DeliveryQueue.
func (db *DB) FanOut(ctx context.Context, limit int) (int, error) {
	if limit <= 0 || limit > fanOutBatch {
		limit = fanOutBatch
	}
	moved := 0
	err := db.update(func(tx *bbolt.Tx) error {
		moved = 0
		outbox := tx.Bucket(bucketOutbox)
		var ids [][]byte
		c := outbox.Cursor()
		for k, _ := c.First(); k != nil && len(ids) < limit; k, _ = c.Next() {
			ids = append(ids, append([]byte(nil), k...))
		}
		hooks := map[string][]*data.Webhook{} // per workspace, loaded once per transaction
		now := db.now()
		for _, id := range ids {
			var e data.Event
			found, err := getJSON(tx.Bucket(bucketEvents), id, &e)
			if err != nil {
				return err
			}
			if found {
				list, ok := hooks[e.WorkspaceID]
				if !ok {
					if list, err = workspaceWebhooks(tx, e.WorkspaceID); err != nil {
						return err
					}
					hooks[e.WorkspaceID] = list
				}
				target := testTarget(&e)
				for _, w := range list {
					if (w.Enabled || e.Type == data.EventWebhookTest) && w.Matches(&e, target) {
						if _, err := db.insertPending(tx, w, e.ID, e.Type, 1, now); err != nil {
							return err
						}
					}
				}
			}
			if err := outbox.Delete(id); err != nil {
				return err
			}
			moved++
		}
		return nil
	})
	return moved, err
}

// testTarget returns the webhook a webhook.test event was sent to ("" for other events).
func testTarget(e *data.Event) string {
	if e.Type != data.EventWebhookTest {
		return ""
	}
	var d testEventData
	if json.Unmarshal(e.Data, &d) != nil {
		return ""
	}
	return d.WebhookID
}

func workspaceWebhooks(tx *bbolt.Tx, workspaceID string) ([]*data.Webhook, error) {
	var list []*data.Webhook
	for _, id := range scopeIDs(tx.Bucket(bucketWebhooksByWS), workspaceID) {
		row, err := loadWebhook(tx, workspaceID, id)
		if err != nil {
			return nil, err
		}
		w := row.Webhook
		list = append(list, &w)
	}
	return list, nil
}

// envelope is the body of a delivery (conventions §11).
type envelope struct {
	ID          string          `json:"id"`
	Type        string          `json:"type"`
	CreatedAt   data.Time       `json:"created_at"`
	WorkspaceID string          `json:"workspace_id"`
	Actor       data.Actor      `json:"actor"`
	Data        json.RawMessage `json:"data"`
}

// DueDeliveries implements data.DeliveryQueue.
func (db *DB) DueDeliveries(ctx context.Context, now time.Time, limit int, skip func(string) bool) ([]*data.DeliveryJob, time.Time, error) {
	var jobs []*data.DeliveryJob
	var next time.Time
	nowKey := uint64(max(now.UnixMilli(), 0))
	err := db.view(func(tx *bbolt.Tx) error {
		c := tx.Bucket(bucketDeliveriesDue).Cursor()
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			id := string(k[8:])
			if skip != nil && skip(id) {
				continue
			}
			dueMS := binary.BigEndian.Uint64(k[:8])
			if dueMS > nowKey || len(jobs) == limit {
				next = time.UnixMilli(int64(dueMS))
				return nil
			}
			job, err := db.loadJob(tx, id)
			if err != nil {
				return err
			}
			jobs = append(jobs, job)
		}
		return nil
	})
	return jobs, next, err
}

// loadJob copies out everything needed to post delivery id.
func (db *DB) loadJob(tx *bbolt.Tx, id string) (*data.DeliveryJob, error) {
	d, err := loadDelivery(tx, id)
	if err != nil {
		return nil, fmt.Errorf("pending delivery %s: %w", id, err)
	}
	job := &data.DeliveryJob{DeliveryID: id, WebhookID: d.WebhookID, EventID: d.EventID, Attempt: d.Attempt}
	w, err := loadWebhook(tx, d.WorkspaceID, d.WebhookID)
	if err != nil {
		return nil, fmt.Errorf("webhook of pending delivery %s: %w", id, err)
	}
	var e data.Event
	found, err := getJSON(tx.Bucket(bucketEvents), []byte(d.EventID), &e)
	if err != nil {
		return nil, err
	}
	switch {
	case !found:
		job.Skip = "the event no longer exists"
		return job, nil
	case !w.Enabled && e.Type != data.EventWebhookTest:
		job.Skip = "the webhook is disabled"
		return job, nil
	}
	if job.Secret, err = db.Unseal(w.Secret); err != nil {
		return nil, fmt.Errorf("secret of webhook %s: %w", w.ID, err)
	}
	job.URL = w.URL
	job.Body, err = json.Marshal(envelope{e.ID, e.Type, e.CreatedAt, e.WorkspaceID, e.Actor, e.Data})
	return job, err
}

// FinishAttempt implements data.DeliveryQueue.
func (db *DB) FinishAttempt(ctx context.Context, id string, out data.AttemptOutcome) error {
	return db.update(func(tx *bbolt.Tx) error {
		row, err := loadDelivery(tx, id)
		if data.ErrorCode(err) == data.ENOTFOUND {
			return nil // the webhook was deleted meanwhile
		}
		if err != nil {
			return err
		}
		if row.Status != data.DeliveryPending {
			return nil // already finished (cannot happen with one dispatcher; harmless)
		}
		if row.NextAttemptAt != nil {
			if err := tx.Bucket(bucketDeliveriesDue).Delete(dueKey(row.NextAttemptAt.Time, id)); err != nil {
				return err
			}
		}
		row.NextAttemptAt = nil
		if out.ResponseStatus != 0 {
			s := out.ResponseStatus
			row.ResponseStatus = &s
		}
		if out.Error != "" {
			msg := out.Error
			row.Error = &msg
		}
		switch {
		case out.Succeeded:
			row.Status = data.DeliverySucceeded
		case out.RetryAt.IsZero():
			row.Status = data.DeliveryFailed
		default:
			row.Status = data.DeliveryRetrying
			next := data.NewTime(out.RetryAt)
			row.NextAttemptAt = &next
		}
		if err := putJSON(tx.Bucket(bucketDeliveries), []byte(id), row); err != nil {
			return err
		}
		if row.Status != data.DeliveryRetrying {
			return nil
		}
		w, err := loadWebhook(tx, row.WorkspaceID, row.WebhookID)
		if err != nil {
			return err
		}
		_, err = db.insertPending(tx, &w.Webhook, row.EventID, row.EventType, row.Attempt+1, out.RetryAt)
		return err
	})
}

// ListDeliveries implements data.WebhookService.
func (db *DB) ListDeliveries(ctx context.Context, webhookID string, req data.PageRequest) ([]*data.Delivery, data.Page, error) {
	ws, err := currentWorkspace(ctx)
	if err != nil {
		return nil, data.Page{}, err
	}
	var list []*data.Delivery
	var page data.Page
	err = db.view(func(tx *bbolt.Tx) error {
		if _, err := loadWebhook(tx, ws, webhookID); err != nil {
			return err
		}
		ids, pg, err := db.page(tx, bucketDeliveriesByWebhook, webhookID, req)
		if err != nil {
			return err
		}
		page = pg
		list = make([]*data.Delivery, 0, len(ids))
		for _, id := range ids {
			row, err := loadDelivery(tx, id)
			if err != nil {
				return err
			}
			d := row.Delivery
			list = append(list, &d)
		}
		return nil
	})
	return list, page, err
}

// RetryDelivery implements data.WebhookService. The retry starts a new series of attempts
// (attempt 1, due now) that follows the backoff schedule like any other.
func (db *DB) RetryDelivery(ctx context.Context, webhookID, deliveryID string) (*data.Delivery, error) {
	ws, err := currentWorkspace(ctx)
	if err != nil {
		return nil, err
	}
	var out *data.Delivery
	err = db.update(func(tx *bbolt.Tx) error {
		w, err := loadWebhook(tx, ws, webhookID)
		if err != nil {
			return err
		}
		if !data.ValidID(data.PrefixDelivery, deliveryID) {
			return data.NotFound("Delivery")
		}
		row, err := loadDelivery(tx, deliveryID)
		if err != nil {
			return err
		}
		if row.WebhookID != webhookID {
			return data.NotFound("Delivery")
		}
		if row.Status == data.DeliveryPending {
			return data.Errorf(data.ECONFLICT, "The delivery is still pending; it will be attempted at its next_attempt_at.")
		}
		if tx.Bucket(bucketEvents).Get([]byte(row.EventID)) == nil {
			return data.Errorf(data.ECONFLICT, "The event of this delivery no longer exists.")
		}
		out, err = db.insertPending(tx, &w.Webhook, row.EventID, row.EventType, 1, db.now())
		return err
	})
	return out, err
}

// MaxReplayEvents bounds one replay, so that one request cannot queue an unbounded backlog
// in a single transaction.
const MaxReplayEvents = 10000

// ReplayEvents implements data.WebhookService. It walks the workspace's events from the
// newest back to the start of the range.
func (db *DB) ReplayEvents(ctx context.Context, webhookID string, in data.WebhookReplay) (int, error) {
	if err := validate.WebhookReplay(in); err != nil {
		return 0, err
	}
	ws, err := currentWorkspace(ctx)
	if err != nil {
		return 0, err
	}
	count := 0
	err = db.update(func(tx *bbolt.Tx) error {
		count = 0
		w, err := loadWebhook(tx, ws, webhookID)
		if err != nil {
			return err
		}
		var matched []*data.Event
		prefix := indexKey(ws, "")
		c := tx.Bucket(bucketEventsByWS).Cursor()
		for k := seekLastWithPrefix(c, prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Prev() {
			var e data.Event
			found, err := getJSON(tx.Bucket(bucketEvents), k[len(prefix):], &e)
			if err != nil {
				return err
			}
			if !found || !e.CreatedAt.Before(in.To.Time) {
				continue
			}
			if e.CreatedAt.Before(in.From.Time) {
				break
			}
			if !w.Matches(&e, testTarget(&e)) {
				continue
			}
			if len(matched) == MaxReplayEvents {
				return data.FieldError("from", fmt.Sprintf("The range holds more than %d events for this webhook; replay a shorter range.", MaxReplayEvents))
			}
			matched = append(matched, &e)
		}
		now := db.now()
		// Oldest first, so the receiver hears them in the order they happened.
		for i := len(matched) - 1; i >= 0; i-- {
			if _, err := db.insertPending(tx, &w.Webhook, matched[i].ID, matched[i].Type, 1, now); err != nil {
				return err
			}
			count++
		}
		return nil
	})
	return count, err
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
