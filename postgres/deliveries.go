package postgres

import (
	"context"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
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

// Delivery implements service.DeliveryTx. In a write transaction the row is locked: a
// write that begins with it is a dispatcher finishing an attempt it leased (queue work,
// claimQueue), and of two replicas finishing one attempt (a lease that ran out
// mid-post) the second waits and then reads it finished, instead of queueing a second
// retry.
func (t *tx) Delivery(id string) (*data.Delivery, error) {
	sql := `SELECT ` + deliveryCols + ` FROM deliveries WHERE id = $1`
	if !t.ro {
		t.claimQueue()
		sql += ` FOR UPDATE`
	}
	d, err := scanDelivery(t.queryRow(sql, id))
	if err != nil {
		return nil, noRows(err)
	}
	return d, nil
}

// Deliveries implements service.DeliveryTx. Under a type filter the page walks each
// kept type's deliveries alone (narrowedDeliveries), never the others.
func (t *tx) Deliveries(webhookID string, f service.DeliveryFilter, req data.PageRequest) ([]*data.Delivery, data.Page, error) {
	if f.Types != nil {
		return t.narrowedDeliveries(webhookID, f, req)
	}
	return pageRows(t, deliveryList(webhookID, f), req, func(rows pgx.Rows) (*data.Delivery, string, error) { return deliveryKeyed(rows) })
}

// deliveryKeyed scans a page's delivery and its key.
func deliveryKeyed(row pgx.Row) (*data.Delivery, string, error) {
	d, err := scanDelivery(row)
	if err != nil {
		return nil, "", err
	}
	return d, d.ID, nil
}

// deliveryList is the keyset of a webhook's deliveries, in the order of
// deliveries_by_webhook, the webhook compared as a range (keyset.within): a generic plan
// otherwise walked the primary key past other webhooks' deliveries
// (TestScopedListsSeekTheScope).
func deliveryList(webhookID string, f service.DeliveryFilter) keyset {
	return keyset{binding: binding("deliveries", webhookID, f.Key()), cols: deliveryCols, key: "id", within: "webhook_id",
		from: `deliveries WHERE webhook_id >= $1 AND webhook_id <= $1`, args: []any{webhookID}}
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
// order, at millisecond precision as the bbolt engine's due keys. In a write transaction
// (a claim) the due rows are read FOR UPDATE SKIP LOCKED: rows another replica is
// claiming are passed over rather than waited for, and the rows returned stay locked
// until this transaction ends. The next due time is read without locks, so rows not
// yet due are never locked (another replica's claim must see when they fall due).
func (t *tx) DueDeliveries(now time.Time, limit int, skip func(id string) bool) ([]string, time.Time, error) {
	cut := time.UnixMilli(max(now.UnixMilli(), 0) + 1) // due: next_attempt_at < cut
	lock := ""
	if !t.ro {
		t.claimQueue()
		lock = " FOR UPDATE SKIP LOCKED"
	}
	var ids []string
	var from *dueKey
	if limit > 0 {
		err := t.walkDue(nil, &cut, lock, limit, func(k dueKey) bool {
			from = &k
			if skip == nil || !skip(k.id) {
				ids = append(ids, k.id)
			}
			return len(ids) < limit
		})
		if err != nil {
			return nil, time.Time{}, err
		}
	}
	var next time.Time
	err := t.walkDue(from, nil, "", 16, func(k dueKey) bool {
		if skip != nil && skip(k.id) {
			return true
		}
		next = time.UnixMilli(max(k.at.UnixMilli(), 0))
		return false
	})
	return ids, next, err
}

// dueKey is a pending delivery's place in the due index.
type dueKey struct {
	at time.Time
	id string
}

// walkDue calls fn with the pending deliveries after from (from the first when nil) and
// due before until (no bound when nil), in due order, fetching batch rows a query with
// the row lock clause lock, until fn returns false.
func (t *tx) walkDue(from *dueKey, until *time.Time, lock string, batch int, fn func(dueKey) bool) error {
	for {
		where, args := "", []any{}
		if from != nil {
			args = append(args, from.at, from.id)
			where += ` AND (next_attempt_at, id) > ($1, $2)`
		}
		if until != nil {
			args = append(args, *until)
			where += ` AND next_attempt_at < $` + strconv.Itoa(len(args))
		}
		rows, err := t.query(`SELECT next_attempt_at, id FROM deliveries WHERE status = 'pending' AND next_attempt_at IS NOT NULL`+where+`
			ORDER BY next_attempt_at, id LIMIT `+strconv.Itoa(batch)+lock, args...)
		if err != nil {
			return err
		}
		var keys []dueKey
		for rows.Next() {
			var k dueKey
			if err := rows.Scan(&k.at, &k.id); err != nil {
				rows.Close()
				return err
			}
			keys = append(keys, k)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, k := range keys {
			if !fn(k) {
				return nil
			}
			from = &k
		}
		if len(keys) < batch {
			return nil
		}
	}
}

// Outbox implements service.DeliveryTx: oldest recorded first. In a write transaction
// (a fan-out) the rows are claimed FOR UPDATE SKIP LOCKED: each replica's dispatcher
// takes the oldest rows no other is fanning out and holds them until its transaction
// ends, when it has deleted them; the row lock is the lease, so a dispatcher that dies
// mid-fan-out gives its rows back with its session. Before, every dispatcher read the
// same oldest rows, and all but one failed to serialize on their deletes.
func (t *tx) Outbox(limit int) ([]string, error) {
	sql := `SELECT event_id FROM outbox ORDER BY seq LIMIT $1`
	if !t.ro {
		t.claimQueue()
		sql += ` FOR UPDATE SKIP LOCKED`
	}
	rows, err := t.query(sql, limit)
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

// PruneDeliveries implements service.DeliveryTx: the oldest finished rows by id (a range
// of the primary key up to before's first id), limit at a time.
func (t *tx) PruneDeliveries(before time.Time, limit int) (int, error) {
	tag, err := t.exec(`DELETE FROM deliveries WHERE id IN (
		SELECT id FROM deliveries WHERE id < $1 AND status <> 'pending' AND created_at < $2 ORDER BY id LIMIT $3)`,
		data.IDFloor(data.PrefixDelivery, before), before, limit)
	if err != nil {
		return 0, err
	}
	return int(tag.RowsAffected()), nil
}
