package postgres

import (
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// narrowedDeliveries is a page of a webhook's delivery log under a type filter, with the
// bbolt engine's walk (bolt/index.go, list): the deliveries are looked at in the cursor's
// direction, those of other types passed over, no more than f.MaxScan a page (0: no
// bound). A page the bound cuts ends short, even empty, with a cursor that resumes past
// the last delivery looked at, not the last returned; so both engines give the same pages
// and cursors, and a page costs O(MaxScan) rows however many hidden ones the log holds.
func (t *tx) narrowedDeliveries(webhookID string, f service.DeliveryFilter, req data.PageRequest) ([]*data.Delivery, data.Page, error) {
	ks := keyset{binding: binding("deliveries", webhookID, f.Key())}
	q, err := t.pageQuery(ks, req) // the page size and the cursor; its statement is not used
	meta := data.Page{PerPage: q.perPage}
	if err != nil {
		return nil, meta, err
	}
	w := deliveryWalk{webhookID: webhookID, types: f.Types, maxScan: f.MaxScan}
	var list []*data.Delivery
	var ids []string
	lastSeen := "" // the last id looked at: where the next walk this way resumes
	more, cut := false, false
	err = t.walkQuery(w.pageSQL(q.dir, q.hasFrom, q.perPage), w.args(q.from, q.hasFrom), func(rows pgx.Rows) error {
		for rows.Next() {
			var n int
			var prev string
			d, err := scanDelivery(rowWith{rows, []any{&n, &prev}})
			if err != nil {
				return err
			}
			if w.maxScan > 0 && n > w.maxScan { // the bound's sentinel: looked at no more
				more, cut, lastSeen = true, true, prev
				return nil
			}
			if len(list) == q.perPage {
				more, lastSeen = true, prev
				return nil
			}
			list, ids, lastSeen = append(list, d), append(ids, d.ID), d.ID
		}
		return nil
	})
	if err != nil {
		return nil, meta, err
	}
	if q.dir == newer {
		reverse(list)
		reverse(ids)
	}
	if more && lastSeen != "" {
		if q.dir == older {
			meta.NextCursor = t.db.encodeCursor(older, ks.binding, lastSeen)
		} else {
			meta.PrevCursor = t.db.encodeCursor(newer, ks.binding, lastSeen)
		}
	}
	if err := t.narrowedBackCursor(&meta, ks.binding, w, q.dir, q.hasFrom, q.from, ids, cut); err != nil {
		return nil, meta, err
	}
	return list, meta, nil
}

// walkPlansOn makes the planner walk an index in its order, as the walk's bound needs: on
// a table whose statistics undercount a webhook's deliveries (fresh, or grown since
// autovacuum's last ANALYZE) it would read them all by a bitmap scan and sort them for
// the inner LIMIT, the cost the bound is there to avoid (docs/performance.md). Plans
// change, results do not. walkPlansOff puts back the session's settings, for the
// statements of the transaction after the walk's.
const (
	walkPlansOn  = `SELECT set_config('enable_bitmapscan', 'off', true), set_config('enable_sort', 'off', true)`
	walkPlansOff = `SELECT set_config(name, reset_val, true) FROM pg_settings WHERE name IN ('enable_bitmapscan', 'enable_sort')`
)

// walkQuery runs sql under walkPlansOn and calls fn with its rows, in one round trip with
// the settings put back after it; fn may stop reading early.
func (t *tx) walkQuery(sql string, args []any, fn func(pgx.Rows) error) error {
	b := &pgx.Batch{}
	b.Queue(walkPlansOn)
	b.Queue(sql, args...)
	b.Queue(walkPlansOff)
	br, err := t.batch(b)
	if err != nil {
		return err
	}
	if _, err = br.Exec(); err == nil {
		var rows pgx.Rows
		if rows, err = br.Query(); err == nil {
			err = fn(rows)
			rows.Close()
			if err == nil {
				err = rows.Err()
			}
		}
		if err == nil {
			_, err = br.Exec()
		}
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return err
}

// narrowedBackCursor sets the cursor back, toward where the walk started, as bolt's
// setBackCursor does: from the page's edge delivery when one of the filter's lies past
// it; from where the walk started when the bound cut it before it found any; to the
// oldest page when everything past the cursor was deleted and that page holds one.
func (t *tx) narrowedBackCursor(meta *data.Page, bind string, w deliveryWalk, dir byte, hasFrom bool, from string, ids []string, cut bool) error {
	var found bool
	var err error
	switch {
	case dir == older && len(ids) > 0:
		if hasFrom {
			if found, err = t.deliveryNeighbour(w, ids[0], true); found {
				meta.PrevCursor = t.db.encodeCursor(newer, bind, ids[0])
			}
		}
	case dir == newer && len(ids) > 0:
		if found, err = t.deliveryNeighbour(w, ids[len(ids)-1], false); found {
			meta.NextCursor = t.db.encodeCursor(older, bind, ids[len(ids)-1])
		}
	case cut && dir == older && hasFrom: // a first page has nothing newer
		meta.PrevCursor = t.db.encodeCursor(newer, bind, from)
	case cut && dir == newer && from != "":
		// A walk from "" began at the oldest delivery: nothing is older, and pagecursor
		// refuses an older cursor without an id.
		meta.NextCursor = t.db.encodeCursor(older, bind, from)
	case dir == older && hasFrom:
		if found, err = t.deliveryNeighbour(w, "", true); found {
			meta.PrevCursor = t.db.encodeCursor(newer, bind, "")
		}
	}
	return err
}

// deliveryNeighbour reports whether the filter keeps a delivery after (newer) or before
// id, as a page walking that way would find it: true too when more than MaxScan
// deliveries lie that way, where that page ends at the bound with a cursor on (bolt's
// hasNeighbour); not for exactly MaxScan, where it would end empty with no cursor.
func (t *tx) deliveryNeighbour(w deliveryWalk, id string, after bool) (bool, error) {
	var found bool
	err := t.walkQuery(w.neighbourSQL(after), w.args(id, true), func(rows pgx.Rows) error {
		if rows.Next() {
			return rows.Scan(&found)
		}
		return nil
	})
	return found, err
}

// neighbourSQL is deliveryNeighbour's statement, after or before $3.
func (w deliveryWalk) neighbourSQL(after bool) string {
	op, order := "<", "DESC"
	if after {
		op, order = ">", "ASC"
	}
	if w.maxScan > 0 {
		return fmt.Sprintf(`SELECT EXISTS (SELECT 1 FROM (
			SELECT event_type, row_number() OVER (ORDER BY webhook_id %[2]s, id %[2]s) AS n FROM (
				SELECT webhook_id, id, event_type FROM deliveries WHERE %[5]s AND id %[1]s $3 ORDER BY webhook_id %[2]s, id %[2]s LIMIT %[3]d) s) w
			WHERE event_type = ANY($2) OR n > %[4]d)`, op, order, w.maxScan+1, w.maxScan, webhookRange)
	}
	// The nearest kept delivery, in a subquery of its own (as existsQuery's edge).
	return fmt.Sprintf(`SELECT EXISTS (SELECT 1 FROM (SELECT 1 FROM deliveries WHERE %[3]s AND event_type = ANY($2) AND id %[1]s $3
		ORDER BY webhook_id %[2]s, id %[2]s LIMIT 1) edge)`, op, order, webhookRange)
}

// webhookRange holds a walk to the webhook ($1) as a range, and the walks order by
// webhook_id before id, for the reason keyset.within does (deliveryList): a generic plan
// otherwise walked the primary key past other webhooks' deliveries
// (TestScopedListsSeekTheScope).
const webhookRange = `webhook_id >= $1 AND webhook_id <= $1`

// deliveryWalk is a narrowed page's walk of one webhook's deliveries.
type deliveryWalk struct {
	webhookID string
	types     []string
	maxScan   int
}

// args are the walk's statement arguments: the webhook ($1), the kept types ($2) and,
// when it has one, the id the walk starts past ($3).
func (w deliveryWalk) args(from string, hasFrom bool) []any {
	if !hasFrom {
		return []any{w.webhookID, w.types}
	}
	return []any{w.webhookID, w.types, from}
}

// rowWith scans a row into a delivery's columns (scanDelivery) and the extra columns
// after them.
type rowWith struct {
	pgx.Rows
	extra []any
}

func (r rowWith) Scan(dest ...any) error { return r.Rows.Scan(append(dest, r.extra...)...) }

// pageSQL reads a page: the deliveries looked at, numbered in walk order (n) with the id
// looked at before each (prev), are the first MaxScan+1 past the cursor (an inner LIMIT:
// the hidden ones past the bound are never read); of them it returns those the filter
// keeps, up to per_page+1, and the one past the bound (n = MaxScan+1) whatever its type,
// which tells the page the bound cut it and where it stopped. Rows are pulled in the
// index's order and the outer LIMIT stops the walk at the first row past the page. The
// walk carries ids and types alone; a returned row's columns are read by a LATERAL
// lookup that LIMIT keeps apart from the walk (as calls_search.go's postingsSource), so
// it stays a lazy nested loop rather than a join of every delivery.
func (w deliveryWalk) pageSQL(dir byte, hasFrom bool, perPage int) string {
	op, order := "<", "DESC"
	if dir == newer {
		op, order = ">", "ASC"
	}
	cond, bound, sentinel := "", "", ""
	if hasFrom {
		cond = " AND id " + op + " $3"
	}
	if w.maxScan > 0 {
		bound = " LIMIT " + strconv.Itoa(w.maxScan+1)
		sentinel = " OR w.n > " + strconv.Itoa(w.maxScan)
	}
	return fmt.Sprintf(`SELECT %[1]s, w.n, coalesce(w.prev, '') FROM (
			SELECT webhook_id, id, event_type, row_number() OVER w AS n, lag(id) OVER w AS prev FROM (
				SELECT webhook_id, id, event_type FROM deliveries WHERE %[8]s%[2]s ORDER BY webhook_id %[3]s, id %[3]s%[4]s) s
			WINDOW w AS (ORDER BY webhook_id %[3]s, id %[3]s)) w
		CROSS JOIN LATERAL (SELECT %[7]s FROM deliveries WHERE id = w.id LIMIT 1) d
		WHERE w.event_type = ANY($2)%[5]s ORDER BY w.webhook_id %[3]s, w.id %[3]s LIMIT %[6]d`, qualified(deliveryCols, "d"), cond, order, bound, sentinel, perPage+1, deliveryCols, webhookRange)
}
