package postgres

import (
	"context"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/voiceapi/voiceapi/data"
)

// deliveryCols are the columns a delivery is read from, in scanDelivery's order.
const deliveryCols = `id, webhook_id, event_id, event_type, attempt, status, response_status, error, next_attempt_at, created_at`

func scanDelivery(row pgx.Row) (*data.Delivery, error) {
	var d data.Delivery
	var next *time.Time
	var created time.Time
	err := row.Scan(&d.ID, &d.WebhookID, &d.EventID, &d.EventType, &d.Attempt, &d.Status, &d.ResponseStatus, &d.Error, &next, &created)
	if err != nil {
		return nil, err
	}
	d.NextAttemptAt, d.CreatedAt = timePtr(next), data.NewTime(created)
	return &d, nil
}

// timePtr is a nullable timestamp as records hold it.
func timePtr(t *time.Time) *data.Time {
	if t == nil {
		return nil
	}
	v := data.NewTime(*t)
	return &v
}

// sqlTime is a nullable timestamp as a query argument.
func sqlTime(t *data.Time) any {
	if t == nil {
		return nil
	}
	return t.Time
}

// Delivery implements service.DeliveryTx.
func (t *tx) Delivery(id string) (*data.Delivery, error) {
	d, err := scanDelivery(t.queryRow(`SELECT `+deliveryCols+` FROM deliveries WHERE id = $1`, id))
	if err != nil {
		return nil, noRows(err)
	}
	return d, nil
}

// Deliveries implements service.DeliveryTx.
func (t *tx) Deliveries(webhookID string, req data.PageRequest) ([]*data.Delivery, data.Page, error) {
	ks := keyset{binding: binding("deliveries", webhookID), cols: deliveryCols, from: `deliveries WHERE webhook_id = $1`, key: "id", args: []any{webhookID}}
	return pageRows(t, ks, req, func(rows pgx.Rows) (*data.Delivery, string, error) {
		d, err := scanDelivery(rows)
		if err != nil {
			return nil, "", err
		}
		return d, d.ID, nil
	})
}

// PutDelivery implements service.DeliveryTx. The due index is the partial index on
// next_attempt_at of pending rows, kept by PostgreSQL. The workspace is the webhook's (a
// delivery of an absent webhook is refused by the foreign key).
func (t *tx) PutDelivery(d *data.Delivery) error {
	_, err := t.exec(`INSERT INTO deliveries (id, webhook_id, workspace_id, event_id, event_type, attempt, status, response_status, error, next_attempt_at, created_at)
		VALUES ($1, $2, coalesce((SELECT workspace_id FROM webhooks WHERE id = $2), ''), $3, $4, $5, $6, $7, $8, $9, $10)
		ON CONFLICT (id) DO UPDATE SET event_id = excluded.event_id, event_type = excluded.event_type, attempt = excluded.attempt,
			status = excluded.status, response_status = excluded.response_status, error = excluded.error,
			next_attempt_at = excluded.next_attempt_at, created_at = excluded.created_at`,
		d.ID, d.WebhookID, d.EventID, d.EventType, d.Attempt, d.Status, d.ResponseStatus, d.Error, sqlTime(d.NextAttemptAt), d.CreatedAt.Time)
	if err != nil {
		return err
	}
	if d.Status == data.DeliveryPending && d.NextAttemptAt != nil {
		t.st.wake = true
	}
	return nil
}

// DueDeliveries implements service.DeliveryTx: a walk of the due index in (due time, id)
// order, at millisecond precision as the bbolt engine's due keys.
func (t *tx) DueDeliveries(now time.Time, limit int, skip func(id string) bool) ([]string, time.Time, error) {
	nowMS := max(now.UnixMilli(), 0)
	var ids []string
	var lastAt time.Time
	lastID, first := "", true
	batch := limit + 16
	for {
		args := []any{}
		where := ""
		if !first {
			where, args = ` AND (next_attempt_at, id) > ($1, $2)`, []any{lastAt, lastID}
		}
		rows, err := t.query(`SELECT id, next_attempt_at FROM deliveries WHERE status = 'pending' AND next_attempt_at IS NOT NULL`+where+`
			ORDER BY next_attempt_at, id LIMIT `+strconv.Itoa(batch), args...)
		if err != nil {
			return nil, time.Time{}, err
		}
		n := 0
		var next time.Time
		stop := false
		for rows.Next() {
			var id string
			var at time.Time
			if err := rows.Scan(&id, &at); err != nil {
				rows.Close()
				return nil, time.Time{}, err
			}
			n++
			lastAt, lastID, first = at, id, false
			if skip != nil && skip(id) {
				continue
			}
			if dueMS := max(at.UnixMilli(), 0); dueMS > nowMS || len(ids) == limit {
				next, stop = time.UnixMilli(dueMS), true
				break
			}
			ids = append(ids, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, time.Time{}, err
		}
		if stop {
			return ids, next, nil
		}
		if n < batch {
			return ids, time.Time{}, nil
		}
	}
}

// Outbox implements service.DeliveryTx: oldest recorded first.
func (t *tx) Outbox(limit int) ([]string, error) {
	rows, err := t.query(`SELECT event_id FROM outbox ORDER BY seq LIMIT $1`, limit)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// RemoveFromOutbox implements service.DeliveryTx.
func (t *tx) RemoveFromOutbox(eventID string) error {
	_, err := t.exec(`DELETE FROM outbox WHERE event_id = $1`, eventID)
	return err
}

// WebhookQueueDepth counts what the dispatcher still has to do: events in the outbox not
// yet fanned out, and pending deliveries (due now or waiting for a retry). It serves
// GET /metrics.
func (db *DB) WebhookQueueDepth(ctx context.Context) (int, error) {
	var n int
	err := db.pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM outbox) + (SELECT count(*) FROM deliveries WHERE status = 'pending' AND next_attempt_at IS NOT NULL)`).Scan(&n)
	return n, err
}
