package postgres

import (
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"

	"github.com/voiceapi/voiceapi/data"
)

// scanWalk is a keyset's walk whose rows a condition keeps, with a bound on the rows one
// page looks at: the bbolt engine's listSpec keep and maxScan (bolt/index.go, list).
type scanWalk struct {
	// ks are the rows walked, in its order (keyset.within, key): its condition selects
	// the rows a page looks at (their scope), its cols are the page's columns, its
	// binding names the list in its cursors, and its args are those of keep too.
	ks keyset
	// table holds ks's rows, read by key for a kept row's columns.
	table string
	// keep is the condition, over ks.args, a row looked at is kept by.
	keep string
	// maxScan bounds the rows one page looks at (0: no bound).
	maxScan int
	// few marks a walk whose condition names its rows (a limited caller's agents, id =
	// ANY): planned freely, read by their key and sorted, rather than by walkPlansOn's
	// walk of the scope's index past every row it does not name.
	few bool
}

// query runs one of the walk's statements and calls fn with its rows: under
// walkPlansOn unless the walk names few rows.
func (w scanWalk) query(t *tx, sql string, args []any, fn func(pgx.Rows) error) error {
	if !w.few {
		return t.walkQuery(sql, args, fn)
	}
	rows, err := t.query(sql, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	if err := fn(rows); err != nil {
		return err
	}
	rows.Close()
	return rows.Err()
}

// scanPage is a page of w's kept rows, scanned by scan, with the bbolt engine's walk: the
// rows are looked at in the cursor's direction, those keep passes over counted, no more
// than w.maxScan a page. A page the bound cuts ends short, even empty, with a cursor that
// resumes past the last row looked at, not the last returned; so both engines give the
// same pages and cursors, and a page costs O(maxScan) rows however many the filter
// passes over.
func scanPage[T any](t *tx, w scanWalk, req data.PageRequest, scan func(pgx.Row) (T, string, error)) ([]T, data.Page, error) {
	q, err := t.pageQuery(w.ks, req) // the page size and the cursor; its statement is not used
	meta := data.Page{PerPage: q.perPage}
	if err != nil {
		return nil, meta, err
	}
	var list []T
	var keys []string
	lastSeen := "" // the last key looked at: where the next walk this way resumes
	more, cut := false, false
	err = w.query(t, w.pageSQL(q.dir, q.hasFrom, q.perPage), w.args(q.from, q.hasFrom), func(rows pgx.Rows) error {
		for rows.Next() {
			var n int
			var prev string
			item, key, err := scan(rowWith{rows, []any{&n, &prev}})
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
			list, keys, lastSeen = append(list, item), append(keys, key), key
		}
		return nil
	})
	if err != nil {
		return nil, meta, err
	}
	if q.dir == newer {
		reverse(list)
		reverse(keys)
	}
	if more && lastSeen != "" {
		if q.dir == older {
			meta.NextCursor = t.db.encodeCursor(older, w.ks.binding, lastSeen)
		} else {
			meta.PrevCursor = t.db.encodeCursor(newer, w.ks.binding, lastSeen)
		}
	}
	if err := t.scanBackCursor(&meta, w, q.dir, q.hasFrom, q.from, keys, cut); err != nil {
		return nil, meta, err
	}
	return list, meta, nil
}

// walkPlansOn makes the planner walk an index in its order, as the walk's bound needs: on
// a table whose statistics undercount a scope's rows (fresh, or grown since autovacuum's
// last ANALYZE) it would read them all by a bitmap scan and sort them for the inner
// LIMIT, the cost the bound is there to avoid (docs/performance.md). Plans change,
// results do not. walkPlansOff puts back the session's settings, for the statements of
// the transaction after the walk's.
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

// scanBackCursor sets the cursor back, toward where the walk started, as bolt's
// setBackCursor does: from the page's edge row when a kept one lies past it; from where
// the walk started when the bound cut it before it found any; to the oldest page when
// everything past the cursor was deleted and that page holds one.
func (t *tx) scanBackCursor(meta *data.Page, w scanWalk, dir byte, hasFrom bool, from string, keys []string, cut bool) error {
	bind := w.ks.binding
	var found bool
	var err error
	switch {
	case dir == older && len(keys) > 0:
		if hasFrom {
			if found, err = t.scanNeighbour(w, keys[0], true); found {
				meta.PrevCursor = t.db.encodeCursor(newer, bind, keys[0])
			}
		}
	case dir == newer && len(keys) > 0:
		if found, err = t.scanNeighbour(w, keys[len(keys)-1], false); found {
			meta.NextCursor = t.db.encodeCursor(older, bind, keys[len(keys)-1])
		}
	case cut && dir == older && hasFrom: // a first page has nothing newer
		meta.PrevCursor = t.db.encodeCursor(newer, bind, from)
	case cut && dir == newer && from != "":
		// A walk from "" began at the oldest row: nothing is older, and pagecursor
		// refuses an older cursor without a key.
		meta.NextCursor = t.db.encodeCursor(older, bind, from)
	case dir == older && hasFrom:
		if found, err = t.scanNeighbour(w, "", true); found {
			meta.PrevCursor = t.db.encodeCursor(newer, bind, "")
		}
	}
	return err
}

// scanNeighbour reports whether w keeps a row after (newer) or before key, as a page
// walking that way would find it: true too when more than maxScan rows lie that way,
// where that page ends at the bound with a cursor on (bolt's hasNeighbour); not for
// exactly maxScan, where it would end empty with no cursor.
func (t *tx) scanNeighbour(w scanWalk, key string, after bool) (bool, error) {
	var found bool
	err := w.query(t, w.neighbourSQL(after), w.args(key, true), func(rows pgx.Rows) error {
		if rows.Next() {
			return rows.Scan(&found)
		}
		return nil
	})
	return found, err
}

// neighbourSQL is scanNeighbour's statement, after or before the last argument.
func (w scanWalk) neighbourSQL(after bool) string {
	op, order := "<", "DESC"
	if after {
		op, order = ">", "ASC"
	}
	from := fmt.Sprintf("%s AND %s %s $%d", w.ks.from, w.ks.key, op, len(w.ks.args)+1)
	if w.maxScan > 0 {
		return fmt.Sprintf(`SELECT EXISTS (SELECT 1 FROM (
			SELECT kept, row_number() OVER (ORDER BY %[2]s) AS n FROM (
				SELECT %[3]s, coalesce(%[4]s, false) AS kept FROM %[1]s ORDER BY %[2]s LIMIT %[5]d) s) w
			WHERE kept OR n > %[6]d)`, from, w.ks.orderBy(order), w.walkCols(), w.keep, w.maxScan+1, w.maxScan)
	}
	// The nearest kept row, in a subquery of its own (as existsQuery's edge).
	return fmt.Sprintf(`SELECT EXISTS (SELECT 1 FROM (SELECT 1 FROM %s AND (%s) ORDER BY %s LIMIT 1) edge)`, from, w.keep, w.ks.orderBy(order))
}

// walkCols are the columns of the walk's order (keyset.orderBy).
func (w scanWalk) walkCols() string {
	if w.ks.within != "" {
		return w.ks.within + ", " + w.ks.key
	}
	return w.ks.key
}

// args are the walk's statement arguments: ks's and, when it has one, the key the walk
// starts past.
func (w scanWalk) args(from string, hasFrom bool) []any {
	args := append([]any(nil), w.ks.args...)
	if hasFrom {
		args = append(args, from)
	}
	return args
}

// rowWith scans a row into a page's columns and the extra columns after them.
type rowWith struct {
	pgx.Rows
	extra []any
}

func (r rowWith) Scan(dest ...any) error { return r.Rows.Scan(append(dest, r.extra...)...) }

// pageSQL reads a page: the rows looked at, numbered in walk order (n) with the key
// looked at before each (prev), are the first maxScan+1 past the cursor (an inner LIMIT:
// the rows past the bound are never read); of them it returns those keep keeps, up to
// per_page+1, and the one past the bound (n = maxScan+1) whether kept or not, which tells
// the page the bound cut it and where it stopped. Rows are pulled in the index's order
// and the outer LIMIT stops the walk at the first row past the page. The walk carries
// keys and the kept flag alone; a returned row's columns are read by a LATERAL lookup
// that LIMIT keeps apart from the walk (as calls_search.go's postingsSource), so it stays
// a lazy nested loop rather than a join of every row.
func (w scanWalk) pageSQL(dir byte, hasFrom bool, perPage int) string {
	op, order := "<", "DESC"
	if dir == newer {
		op, order = ">", "ASC"
	}
	from, bound, sentinel := w.ks.from, "", ""
	if hasFrom {
		from += fmt.Sprintf(" AND %s %s $%d", w.ks.key, op, len(w.ks.args)+1)
	}
	if w.maxScan > 0 {
		bound = " LIMIT " + strconv.Itoa(w.maxScan+1)
		sentinel = " OR w.n > " + strconv.Itoa(w.maxScan)
	}
	return fmt.Sprintf(`SELECT %[1]s, w.n, coalesce(w.prev, '') FROM (
			SELECT %[2]s, kept, row_number() OVER w AS n, lag(%[3]s) OVER w AS prev FROM (
				SELECT %[2]s, coalesce(%[4]s, false) AS kept FROM %[5]s ORDER BY %[6]s%[7]s) s
			WINDOW w AS (ORDER BY %[6]s)) w
		CROSS JOIN LATERAL (SELECT %[8]s FROM %[9]s WHERE %[3]s = w.%[3]s LIMIT 1) d
		WHERE w.kept%[10]s ORDER BY %[11]s LIMIT %[12]d`,
		qualified(w.ks.cols, "d"), w.walkCols(), w.ks.key, w.keep, from, w.ks.orderBy(order), bound,
		w.ks.cols, w.table, sentinel, qualified(w.ks.orderBy(order), "w"), perPage+1)
}
