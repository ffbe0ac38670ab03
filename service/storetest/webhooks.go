package storetest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// ids makes time-ordered ids of one prefix, as the services do.
var ids = data.NewIDGen()

func webhookRecord(ws string) *data.WebhookRecord {
	now := data.NewTime(time.Now())
	return &data.WebhookRecord{Webhook: data.Webhook{ID: ids.New(data.PrefixWebhook), WorkspaceID: ws, URL: "https://example.com/h",
		Events: []string{"*"}, Enabled: true, CreatedAt: now, UpdatedAt: now}, SealedSecret: "sealed-as-given"}
}

func pendingDelivery(webhookID string, due time.Time) *data.Delivery {
	next := data.NewTime(due)
	return &data.Delivery{ID: ids.New(data.PrefixDelivery), WebhookID: webhookID, EventID: "evt_x", EventType: data.EventAgentCreated,
		Attempt: 1, Status: data.DeliveryPending, NextAttemptAt: &next, CreatedAt: data.NewTime(time.Now())}
}

func testWebhooks(t *testing.T, open Opener) {
	s := open(t)
	a, b, other := webhookRecord("ws_1"), webhookRecord("ws_1"), webhookRecord("ws_2")
	view(t, s, func(tx service.Tx) error {
		w, err := tx.Webhook(a.ID)
		if w != nil {
			t.Errorf("absent webhook = %+v, want nil", w)
		}
		return err
	})
	update(t, s, func(tx service.Tx) error {
		for _, w := range []*data.WebhookRecord{a, b, other} {
			if err := tx.PutWebhook(w); err != nil {
				return err
			}
		}
		return nil
	})
	view(t, s, func(tx service.Tx) error {
		w, err := tx.Webhook(a.ID)
		if err != nil || w == nil || w.SealedSecret != "sealed-as-given" || w.URL != a.URL || w.WorkspaceID != "ws_1" {
			t.Errorf("stored webhook = %+v, %v; want it as given, secret included", w, err)
		}
		page, _, err := tx.Webhooks("ws_1", data.PageRequest{PerPage: 10})
		if err != nil || len(page) != 2 || page[0].ID != b.ID || page[1].ID != a.ID {
			t.Errorf("page of ws_1 = %v, %v; want b then a (newest first), not ws_2's", webhookIDs(page), err)
		}
		all, err := tx.WorkspaceWebhooks("ws_2")
		if err != nil || len(all) != 1 || all[0].ID != other.ID {
			t.Errorf("ws_2's webhooks = %v, %v", webhookIDs(all), err)
		}
		return nil
	})
	// Changing a webhook keeps one index entry.
	a.Enabled = false
	update(t, s, func(tx service.Tx) error { return tx.PutWebhook(a) })
	view(t, s, func(tx service.Tx) error {
		all, err := tx.WorkspaceWebhooks("ws_1")
		if len(all) != 2 {
			t.Errorf("after a change ws_1 has %v", webhookIDs(all))
		}
		return err
	})

	// Deleting cascades to the deliveries, pending ones leaving the due index.
	now := time.Now()
	da, db := pendingDelivery(a.ID, now.Add(-time.Second)), pendingDelivery(b.ID, now.Add(-time.Second))
	update(t, s, func(tx service.Tx) error {
		if err := tx.PutDelivery(da); err != nil {
			return err
		}
		return tx.PutDelivery(db)
	})
	update(t, s, func(tx service.Tx) error {
		if err := tx.DeleteWebhook(a.ID); err != nil {
			return err
		}
		return tx.DeleteWebhook("wh_absent") // nothing to do
	})
	view(t, s, func(tx service.Tx) error {
		w, _ := tx.Webhook(a.ID)
		d, _ := tx.Delivery(da.ID)
		due, _, err := tx.DueDeliveries(now, 10, nil)
		all, _ := tx.WorkspaceWebhooks("ws_1")
		if w != nil || d != nil || !slices.Equal(due, []string{db.ID}) || len(all) != 1 {
			t.Errorf("after delete: webhook %v, delivery %v, due %v, ws_1 %v; want only b's", w, d, due, webhookIDs(all))
		}
		return err
	})
}

func webhookIDs(list []*data.WebhookRecord) []string {
	var out []string
	for _, w := range list {
		out = append(out, w.ID)
	}
	return out
}

func testDeliveries(t *testing.T, open Opener) {
	s := open(t)
	w := webhookRecord("ws_1")
	now := time.Now()
	early, late, later := pendingDelivery(w.ID, now.Add(-2*time.Second)), pendingDelivery(w.ID, now.Add(-time.Second)), pendingDelivery(w.ID, now.Add(time.Hour))
	update(t, s, func(tx service.Tx) error {
		if err := tx.PutWebhook(w); err != nil {
			return err
		}
		for _, d := range []*data.Delivery{later, late, early} {
			if err := tx.PutDelivery(d); err != nil {
				return err
			}
		}
		return nil
	})
	view(t, s, func(tx service.Tx) error {
		due, next, err := tx.DueDeliveries(now, 10, nil)
		if err != nil || !slices.Equal(due, []string{early.ID, late.ID}) || !next.Equal(later.NextAttemptAt.Time) {
			t.Errorf("due = %v, next %v, %v; want early, late (oldest due first) and the later one's time", due, next, err)
		}
		due, next, _ = tx.DueDeliveries(now, 1, nil)
		if !slices.Equal(due, []string{early.ID}) || !next.Equal(late.NextAttemptAt.Time) {
			t.Errorf("due with limit 1 = %v, next %v; want early and late's time", due, next)
		}
		due, _, _ = tx.DueDeliveries(now, 10, func(id string) bool { return id == early.ID })
		if !slices.Equal(due, []string{late.ID}) {
			t.Errorf("due skipping early = %v", due)
		}
		got, err := tx.Delivery(late.ID)
		if err != nil || got == nil || got.Status != data.DeliveryPending || got.Attempt != 1 || got.WebhookID != w.ID {
			t.Errorf("stored delivery = %+v, %v", got, err)
		}
		page, _, err := tx.Deliveries(w.ID, service.DeliveryFilter{}, data.PageRequest{PerPage: 2})
		if err != nil || len(page) != 2 || page[0].ID != later.ID || page[1].ID != late.ID {
			t.Errorf("first page of deliveries: %d, %v; want the two newest", len(page), err)
		}
		return nil
	})
	// A delivery that stops being pending leaves the due index; its record stays.
	early.Status, early.NextAttemptAt = data.DeliverySucceeded, nil
	code := 200
	early.ResponseStatus = &code
	update(t, s, func(tx service.Tx) error { return tx.PutDelivery(early) })
	view(t, s, func(tx service.Tx) error {
		due, _, err := tx.DueDeliveries(now, 10, nil)
		got, _ := tx.Delivery(early.ID)
		if !slices.Equal(due, []string{late.ID}) || got == nil || got.Status != data.DeliverySucceeded || *got.ResponseStatus != 200 {
			t.Errorf("after success: due %v, record %+v", due, got)
		}
		return err
	})
}

func testOutbox(t *testing.T, open Opener) {
	s := open(t)
	var events []*data.Event
	for i := range 3 {
		e := &data.Event{ID: ids.New(data.PrefixEvent), Type: data.EventAgentCreated, WorkspaceID: "ws_1", Data: []byte(`{}`), Hash: fmt.Sprint("h", i)}
		events = append(events, e)
		update(t, s, func(tx service.Tx) error { return tx.AppendEvent(e) })
	}
	view(t, s, func(tx service.Tx) error {
		got, err := tx.Outbox(2)
		if err != nil || !slices.Equal(got, []string{events[0].ID, events[1].ID}) {
			t.Errorf("outbox(2) = %v, %v; want the two oldest", got, err)
		}
		e, err := tx.Event(events[1].ID)
		if err != nil || e == nil || e.Hash != "h1" {
			t.Errorf("event = %+v, %v", e, err)
		}
		return nil
	})
	update(t, s, func(tx service.Tx) error { return tx.RemoveFromOutbox(events[0].ID) })
	view(t, s, func(tx service.Tx) error {
		got, err := tx.Outbox(10)
		e, _ := tx.Event(events[0].ID)
		if !slices.Equal(got, []string{events[1].ID, events[2].ID}) || e == nil {
			t.Errorf("after removal: outbox %v, event kept %v", got, e != nil)
		}
		return err
	})
}

func testEventReads(t *testing.T, open Opener) {
	s := open(t)
	var all []string
	for i := range 6 {
		ws := "ws_1"
		if i == 5 {
			ws = "ws_2"
		}
		e := &data.Event{ID: ids.New(data.PrefixEvent), Type: data.EventAgentCreated, WorkspaceID: ws, Data: []byte(`{}`), Hash: fmt.Sprint("h", i)}
		if i%2 == 1 {
			e.Type = data.EventAgentDeleted
		}
		all = append(all, e.ID)
		update(t, s, func(tx service.Tx) error { return tx.AppendEvent(e) })
	}
	deleted := func(e *data.Event) bool { return e.Type == data.EventAgentDeleted }
	view(t, s, func(tx service.Tx) error {
		page, _, err := tx.EventPage("ws_1", service.EventFilter{}, data.PageRequest{PerPage: 10})
		if err != nil || !slices.Equal(eventIDs(page), []string{all[4], all[3], all[2], all[1], all[0]}) {
			t.Errorf("unfiltered page = %v, %v; want ws_1's, newest first", eventIDs(page), err)
		}
		page, pg, err := tx.EventPage("ws_1", service.EventFilter{Key: "deleted", Keep: deleted}, data.PageRequest{PerPage: 10})
		if err != nil || !slices.Equal(eventIDs(page), []string{all[3], all[1]}) || pg.NextCursor != nil {
			t.Errorf("filtered page = %v, %+v, %v", eventIDs(page), pg, err)
		}
		// The scan bound: two looked at, one kept, and a cursor to go on from.
		page, pg, err = tx.EventPage("ws_1", service.EventFilter{Key: "deleted", Keep: deleted, MaxScan: 2}, data.PageRequest{PerPage: 10})
		if err != nil || !slices.Equal(eventIDs(page), []string{all[3]}) || pg.NextCursor == nil {
			t.Fatalf("bounded page = %v, %+v, %v; want one event and a next cursor", eventIDs(page), pg, err)
		}
		rest, _, err := tx.EventPage("ws_1", service.EventFilter{Key: "deleted", Keep: deleted, MaxScan: 2}, data.PageRequest{PerPage: 10, Cursor: *pg.NextCursor})
		if err != nil || !slices.Equal(eventIDs(rest), []string{all[1]}) {
			t.Errorf("next bounded page = %v, %v", eventIDs(rest), err)
		}
		if _, _, err := tx.EventPage("ws_1", service.EventFilter{Key: "other"}, data.PageRequest{Cursor: *pg.NextCursor}); data.ErrorCode(err) != data.EINVALID {
			t.Errorf("a cursor under another filter key: %v, want validation_failed", err)
		}

		var seen []string
		err = tx.EventsNewestFirst("ws_1", func(e *data.Event) (bool, error) {
			seen = append(seen, e.ID)
			return len(seen) < 3, nil
		})
		if err != nil || !slices.Equal(seen, []string{all[4], all[3], all[2]}) {
			t.Errorf("newest first, stopping after 3 = %v, %v", seen, err)
		}

		wss, err := tx.ChainWorkspaces()
		if err != nil || !slices.Equal(wss, []string{"ws_1", "ws_2"}) {
			t.Errorf("chain workspaces = %v, %v", wss, err)
		}
		seen = nil
		err = tx.ChainEvents("ws_1", func(id string, e *data.Event, readErr error) error {
			if e == nil || readErr != nil || e.ID != id {
				t.Errorf("chain entry %s: %+v, %v", id, e, readErr)
			}
			seen = append(seen, id)
			return nil
		})
		if err != nil || !slices.Equal(seen, all[:5]) {
			t.Errorf("chain events = %v, %v; want ws_1's oldest first", seen, err)
		}
		return nil
	})
}

func eventIDs(list []*data.Event) []string {
	var out []string
	for _, e := range list {
		out = append(out, e.ID)
	}
	return out
}

// testDueSkips: the due walk passes over any number of skipped deliveries (the in-flight
// ones) and still finds the due ones behind them, in order.
func testDueSkips(t *testing.T, open Opener) {
	s := open(t)
	w := webhookRecord("ws_1")
	now := time.Now()
	var all []string
	update(t, s, func(tx service.Tx) error {
		if err := tx.PutWebhook(w); err != nil {
			return err
		}
		for i := range 60 {
			d := pendingDelivery(w.ID, now.Add(time.Duration(i-50)*time.Second))
			all = append(all, d.ID)
			if err := tx.PutDelivery(d); err != nil {
				return err
			}
		}
		return nil
	})
	inFlight := func(id string) bool { return slices.Index(all, id) < 40 }
	view(t, s, func(tx service.Tx) error {
		due, next, err := tx.DueDeliveries(now, 5, inFlight)
		if err != nil || !slices.Equal(due, all[40:45]) || !next.Equal(now.Add(-5*time.Second).Truncate(time.Millisecond)) {
			t.Errorf("due past 40 skipped = %v, next %v, %v; want the 41st to 45th and the 46th's time", due, next, err)
		}
		due, next, _ = tx.DueDeliveries(now, 50, inFlight)
		if !slices.Equal(due, all[40:51]) || !next.Equal(now.Add(time.Second).Truncate(time.Millisecond)) {
			t.Errorf("every due one past the skipped = %v (%d), next %v; want the 41st to 51st and the first not due", due, len(due), next)
		}
		return nil
	})
}
