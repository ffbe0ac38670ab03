package service

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/validate"
)

// DeliveryService implements data.DeliveryQueue, the webhook dispatcher's view of the
// durable outbox and the pending deliveries. The rules of delivery live here: which
// webhooks an event goes to, what a job carries, what a finished attempt records and when
// the next one is queued. The backoff schedule is the dispatcher's (package webhook).
type DeliveryService struct{ *base }

var _ data.DeliveryQueue = (*DeliveryService)(nil)

// MaxReplayEvents bounds one replay, so that one request cannot queue an unbounded backlog
// in a single transaction.
const MaxReplayEvents = 10000

// fanOutBatch bounds the events one FanOut transaction moves, so a backlog is drained in
// transactions of bounded size.
const fanOutBatch = 256

// newPending stores a pending attempt of event eventID (of type eventType) to webhook w,
// due at due.
func (b *base) newPending(tx Tx, w *data.WebhookRecord, eventID, eventType string, attempt int, due time.Time) (*data.Delivery, error) {
	next := data.NewTime(due)
	d := &data.Delivery{
		ID: b.ids.New(data.PrefixDelivery), WebhookID: w.ID, EventID: eventID, EventType: eventType,
		Attempt: attempt, Status: data.DeliveryPending, NextAttemptAt: &next, CreatedAt: b.timeNow(),
	}
	return d, tx.PutDelivery(d)
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

// delivers reports whether event e goes to webhook w: an enabled webhook whose filter
// matches, or the one webhook a webhook.test event names, enabled or not. An event about
// a webhook (created, updated, deleted, secret rotated) is not sent to that webhook
// itself: it would reach a receiver that may not hold the new secret yet.
//
// A webhook gets the events that happen from its creation on: an event still in the
// outbox when a webhook is created is not sent to it (replay sends older events on
// purpose).
func delivers(w *data.WebhookRecord, e *data.Event, target string) bool {
	if e.Type != data.EventWebhookTest && data.MadeBefore(e.ID, w.ID) {
		return false // by id, not time: both may fall in one millisecond
	}
	return (w.Enabled || e.Type == data.EventWebhookTest) && w.Matches(e, target) && aboutWebhook(e) != w.ID
}

// webhookEvents are the events whose data is a webhook record.
var webhookEvents = map[string]bool{
	data.EventWebhookCreated: true, data.EventWebhookUpdated: true,
	data.EventWebhookDeleted: true, data.EventWebhookSecretRotated: true,
}

// aboutWebhook returns the id of the webhook a webhook.* event is about ("" otherwise).
func aboutWebhook(e *data.Event) string {
	if !webhookEvents[e.Type] {
		return ""
	}
	var d struct {
		ID string `json:"id"`
	}
	if json.Unmarshal(e.Data, &d) != nil {
		return ""
	}
	return d.ID
}

// FanOut implements data.DeliveryQueue.
func (s *DeliveryService) FanOut(ctx context.Context, limit int) (int, error) {
	if limit <= 0 || limit > fanOutBatch {
		limit = fanOutBatch
	}
	moved := 0
	err := s.store.Update(ctx, func(tx Tx) error {
		moved = 0
		ids, err := tx.Outbox(limit)
		if err != nil {
			return err
		}
		hooks := map[string][]*data.WebhookRecord{} // per workspace, read once per transaction
		now := s.now()
		for _, id := range ids {
			e, list, err := fanOutEvent(tx, id, hooks)
			if err != nil {
				return err
			}
			if e != nil {
				target := testTarget(e)
				for _, w := range list {
					if !delivers(w, e, target) {
						continue
					}
					if _, err := s.newPending(tx, w, e.ID, e.Type, 1, now); err != nil {
						return err
					}
				}
			}
			if err := tx.RemoveFromOutbox(id); err != nil {
				return err
			}
			moved++
		}
		return nil
	})
	return moved, err
}

// fanOutEvent returns the outbox's event id and its workspace's webhooks (read once per
// workspace into hooks), or a nil event when it is gone or when that workspace has no
// webhook: then an engine that can tell the workspace alone (EventWorkspaceTx) never
// decodes the payload.
func fanOutEvent(tx Tx, id string, hooks map[string][]*data.WebhookRecord) (*data.Event, []*data.WebhookRecord, error) {
	webhooks := func(ws string) ([]*data.WebhookRecord, error) {
		list, ok := hooks[ws]
		if !ok {
			var err error
			if list, err = tx.WorkspaceWebhooks(ws); err != nil {
				return nil, err
			}
			hooks[ws] = list
		}
		return list, nil
	}
	if wt, ok := tx.(EventWorkspaceTx); ok {
		ws, err := wt.EventWorkspace(id)
		if err != nil || ws == "" {
			return nil, nil, err
		}
		if list, err := webhooks(ws); err != nil || len(list) == 0 {
			return nil, nil, err
		}
	}
	e, err := tx.Event(id)
	if err != nil || e == nil {
		return nil, nil, err
	}
	list, err := webhooks(e.WorkspaceID)
	return e, list, err
}

// ClaimDueDeliveries implements data.DeliveryQueue. On a shared store (LeaseDeliveries)
// the lease is the delivery's own next_attempt_at, moved forward in the claiming write:
// PostgreSQL's SERIALIZABLE writes, with the due rows read FOR UPDATE SKIP LOCKED, let
// one claimer alone move it, so each attempt is posted by one replica. A store one
// process owns needs no lease: the dispatcher's in-flight set (skip) is the claim.
func (s *DeliveryService) ClaimDueDeliveries(ctx context.Context, now time.Time, limit int, lease time.Duration, skip func(string) bool) ([]*data.DeliveryJob, time.Time, error) {
	var jobs []*data.DeliveryJob
	var next time.Time
	// claim reads the due deliveries and, on a store several processes share, leases
	// each pending one by moving its next attempt to the lease's end.
	claim := func(tx Tx, leased bool) error {
		jobs, next = nil, time.Time{}
		ids, nxt, err := tx.DueDeliveries(now, limit, skip)
		if err != nil {
			return err
		}
		next = nxt
		leaseEnd := data.NewTime(now.Add(lease))
		for _, id := range ids {
			if leased {
				d, err := tx.Delivery(id)
				if err != nil {
					return err
				}
				if d == nil || d.Status != data.DeliveryPending {
					continue
				}
				d.NextAttemptAt = &leaseEnd
				if err := tx.PutDelivery(d); err != nil {
					return err
				}
			}
			job, err := s.loadJob(tx, id)
			if err != nil {
				return err
			}
			jobs = append(jobs, job)
		}
		return nil
	}
	var err error
	if s.opts.LeaseDeliveries {
		err = s.store.Update(ctx, func(tx Tx) error { return claim(tx, true) })
	} else {
		// One process owns the store: the dispatcher's skip (its in-flight set and what
		// it recorded since this claim began) is the whole claim, and nothing needs writing.
		err = s.store.View(ctx, func(tx Tx) error { return claim(tx, false) })
	}
	if err != nil {
		// The jobs are those of an attempt that did not commit: their leases were never
		// taken, so another replica may be posting them already.
		return nil, time.Time{}, err
	}
	return jobs, next, nil
}

// loadJob copies out everything needed to post delivery id, the secret opened.
func (s *DeliveryService) loadJob(tx Tx, id string) (*data.DeliveryJob, error) {
	d, err := tx.Delivery(id)
	if err == nil && d == nil {
		err = data.NotFound("Delivery")
	}
	if err != nil {
		return nil, fmt.Errorf("pending delivery %s: %w", id, err)
	}
	job := &data.DeliveryJob{DeliveryID: id, WebhookID: d.WebhookID, EventID: d.EventID, Attempt: d.Attempt}
	w, err := tx.Webhook(d.WebhookID)
	if err == nil && w == nil {
		err = data.NotFound("Webhook")
	}
	if err != nil {
		return nil, fmt.Errorf("webhook of pending delivery %s: %w", id, err)
	}
	e, err := tx.Event(d.EventID)
	switch {
	case err != nil:
		return nil, err
	case e == nil:
		job.Skip = "the event no longer exists"
		return job, nil
	case !w.Enabled && e.Type != data.EventWebhookTest:
		job.Skip = "the webhook is disabled"
		return job, nil
	}
	if job.Secret, err = s.sealer.Open(w.SealedSecret); err != nil {
		return nil, fmt.Errorf("secret of webhook %s: %w", w.ID, err)
	}
	job.URL = w.URL
	job.Body, err = e.Envelope() // the body of a delivery (conventions §11)
	return job, err
}

// FinishAttempt implements data.DeliveryQueue: the attempt's record keeps its outcome
// (succeeded, failed for good, or retrying with the next attempt's time), and a retry is
// a new pending record for the next attempt.
func (s *DeliveryService) FinishAttempt(ctx context.Context, id string, out data.AttemptOutcome) error {
	return s.store.Update(ctx, func(tx Tx) error {
		d, err := tx.Delivery(id)
		if err != nil {
			return err
		}
		if d == nil || d.Status != data.DeliveryPending {
			return nil // its webhook was deleted meanwhile, or it was already finished
		}
		d.NextAttemptAt = nil
		if out.ResponseStatus != 0 {
			status := out.ResponseStatus
			d.ResponseStatus = &status
		}
		if out.Error != "" {
			msg := out.Error
			d.Error = &msg
		}
		switch {
		case out.Succeeded:
			d.Status = data.DeliverySucceeded
		case out.RetryAt.IsZero():
			d.Status = data.DeliveryFailed
		default:
			d.Status = data.DeliveryRetrying
			next := data.NewTime(out.RetryAt)
			d.NextAttemptAt = &next
		}
		if err := tx.PutDelivery(d); err != nil {
			return err
		}
		if d.Status != data.DeliveryRetrying {
			return nil
		}
		w, err := tx.Webhook(d.WebhookID)
		if err != nil || w == nil {
			return err // a webhook deleted in between took its deliveries along
		}
		_, err = s.newPending(tx, w, d.EventID, d.EventType, d.Attempt+1, out.RetryAt)
		return err
	})
}

// ListDeliveries implements data.WebhookService. The caller must read every event the
// webhook carries now (mayCarry over its types and webhook.test, all named by the
// webhook's own record, so a 403 naming them tells nothing the record does not); the
// deliveries of types it carried before and the caller may not read are passed over
// (readableDeliveries), as every list passes over what its caller may not read: naming
// them, even in a 403, would tell which events of those types happened.
func (s *WebhookService) ListDeliveries(ctx context.Context, webhookID string, req data.PageRequest) ([]*data.Delivery, data.Page, error) {
	ws, err := currentWorkspace(ctx)
	if err != nil {
		return nil, data.Page{}, err
	}
	var list []*data.Delivery
	var page data.Page
	err = s.store.View(ctx, func(tx Tx) error {
		w, err := loadWebhook(tx, ws, webhookID)
		if err != nil {
			return err
		}
		if err := s.mayCarry(ctx, withTestEvents(&w.Webhook)); err != nil {
			return err
		}
		list, page, err = tx.Deliveries(webhookID, s.readableDeliveries(ctx), req)
		return err
	})
	if err != nil {
		return nil, data.Page{}, err
	}
	return list, page, nil
}

// withTestEvents is w's types and webhook.test (sent to a webhook whatever its types):
// what its delivery log holds of its present filter.
func withTestEvents(w *data.Webhook) *data.Webhook {
	return &data.Webhook{Events: append(append([]string{}, w.Events...), data.EventWebhookTest)}
}

// readableDeliveries is the part of a webhook's delivery log the caller reads: the
// deliveries of the event types it reads every event of (carriable, the rule mayCarry
// applies). A delivery shows its event's id, type and time and the receiver's answer.
func (b *base) readableDeliveries(ctx context.Context) DeliveryFilter {
	c := carriable(b.eventVisibility(data.PrincipalFrom(ctx)))
	if len(c.Withheld) == 0 {
		return DeliveryFilter{}
	}
	return DeliveryFilter{Types: c.Types}
}

// RetryDelivery implements data.WebhookService. The retry starts a new series of attempts
// (attempt 1, due now) that follows the backoff schedule like any other.
func (s *WebhookService) RetryDelivery(ctx context.Context, webhookID, deliveryID string) (*data.Delivery, error) {
	ws, err := currentWorkspace(ctx)
	if err != nil {
		return nil, err
	}
	var out *data.Delivery
	err = s.store.Update(ctx, func(tx Tx) error {
		w, err := loadWebhook(tx, ws, webhookID)
		if err != nil {
			return err
		}
		if !data.ValidID(data.PrefixDelivery, deliveryID) {
			return data.NotFound("Delivery")
		}
		d, err := tx.Delivery(deliveryID)
		if err != nil {
			return err
		}
		if d == nil || d.WebhookID != webhookID {
			return data.NotFound("Delivery")
		}
		// Limited to some agents: refused as every webhook route refuses it. A delivery
		// of a type the caller may not read is not found, as it is not listed.
		if err := s.mayCarry(ctx, &data.Webhook{}); err != nil {
			return err
		}
		if !s.readableDeliveries(ctx).Keeps(d.EventType) {
			return data.NotFound("Delivery")
		}
		if d.Status == data.DeliveryPending {
			return data.Errorf(data.ECONFLICT, "The delivery is still pending; it will be attempted at its next_attempt_at.")
		}
		if e, err := tx.Event(d.EventID); err != nil || e == nil {
			if err == nil {
				err = data.Errorf(data.ECONFLICT, "The event of this delivery no longer exists.")
			}
			return err
		}
		if out, err = s.newPending(tx, w, d.EventID, d.EventType, 1, s.now()); err != nil {
			return err
		}
		answerClaimAction(ctx, out)
		return nil
	})
	return out, err
}

// ReplayEvents implements data.WebhookService. It walks the workspace's events of the
// range, newest first (EventsBetween: every one of them, a clock that stepped back
// within it too), and queues the webhook's that the caller may read,
// oldest first. mayCarry holds the caller to every event of the webhook's types; a
// webhook.test event goes to the webhook it names whatever its types, and a caller who may
// not read it (a security event) neither re-sends it nor has it counted. Events from before
// the webhook's creation are replayed on purpose (docs/webhooks.md, "Retry and replay").
func (s *WebhookService) ReplayEvents(ctx context.Context, webhookID string, in data.WebhookReplay) (int, error) {
	if err := checkInput(ctx, validate.WebhookReplay(in)); err != nil {
		return 0, err
	}
	ws, err := currentWorkspace(ctx)
	if err != nil {
		return 0, err
	}
	count := 0
	err = s.store.Update(ctx, func(tx Tx) error {
		count = 0
		w, err := loadWebhook(tx, ws, webhookID)
		if err != nil {
			return err
		}
		if err := s.mayCarry(ctx, &w.Webhook); err != nil {
			return err
		}
		v := s.eventVisibility(data.PrincipalFrom(ctx))
		var matched []*data.Event
		err = tx.EventsBetween(ws, in.From.Time, in.To.Time, func(e *data.Event) (bool, error) {
			switch {
			case !w.Matches(e, testTarget(e)) || aboutWebhook(e) == w.ID || !v.event(e):
				return true, nil
			case len(matched) == MaxReplayEvents:
				return false, data.FieldError("from", fmt.Sprintf("The range holds more than %d events for this webhook; replay a shorter range.", MaxReplayEvents))
			}
			matched = append(matched, e)
			return true, nil
		})
		if err != nil {
			return err
		}
		now := s.now()
		// Oldest first, so the receiver hears them in the order they happened.
		for i := len(matched) - 1; i >= 0; i-- {
			if _, err := s.newPending(tx, w, matched[i].ID, matched[i].Type, 1, now); err != nil {
				return err
			}
			count++
		}
		answerClaimAction(ctx, data.WebhookReplayed{Count: count, From: in.From, To: in.To})
		return nil
	})
	return count, err
}
