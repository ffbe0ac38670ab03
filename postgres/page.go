package postgres

import (
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/pagecursor"
)

// DefaultPerPage is the page size when per_page is not given (conventions §4).
const DefaultPerPage = 15

// Cursor directions.
const (
	older = pagecursor.Older
	newer = pagecursor.Newer
)

// keyset describes a newest-first list: the rows of a table that a condition selects,
// ordered by a text key column (an id, time-ordered, with COLLATE "C" so SQL orders
// them as bytes). A page reads per_page+1 rows through an index on (scope..., key):
// O(per_page) at any depth.
type keyset struct {
	// binding names the list in its cursors (table, scope, filters), so a cursor of
	// one list is refused by another rather than silently reinterpreted.
	binding string
	// cols are the selected columns, from is "table WHERE condition" using $1.. for
	// args, and key is the key column.
	cols, from, key string
	args            []any
}

// pageRows returns one newest-first page of ks's rows, scanned by scan, and the page's
// cursors, with the bbolt engine's semantics: next_cursor past the last row when more
// rows are older; prev_cursor from the first row when the page did not start at the
// newest; a previous page read from a prev_cursor, nearest first, then flipped.
func pageRows[T any](t *tx, ks keyset, req data.PageRequest, scan func(pgx.Rows) (T, string, error)) ([]T, data.Page, error) {
	perPage := req.PerPage
	if perPage == 0 {
		perPage = DefaultPerPage
	}
	meta := data.Page{PerPage: perPage}
	dir, from, hasFrom := byte(older), "", false
	if req.Cursor != "" {
		d, id, ok := t.db.decodeCursor(req.Cursor, ks.binding)
		if !ok {
			return nil, meta, data.FieldError("cursor", "The cursor is malformed, was tampered with, or belongs to another list.")
		}
		dir, from, hasFrom = d, id, true
	}
	args := append([]any(nil), ks.args...)
	where, order := "", "DESC"
	switch {
	case dir == newer:
		args = append(args, from)
		where, order = fmt.Sprintf(" AND %s > $%d", ks.key, len(args)), "ASC"
	case hasFrom:
		args = append(args, from)
		where = fmt.Sprintf(" AND %s < $%d", ks.key, len(args))
	}
	sql := fmt.Sprintf("SELECT %s FROM %s%s ORDER BY %s %s LIMIT %d", ks.cols, ks.from, where, ks.key, order, perPage+1)
	rows, err := t.query(sql, args...)
	if err != nil {
		return nil, meta, err
	}
	var items []T
	var keys []string
	for rows.Next() {
		item, key, err := scan(rows)
		if err != nil {
			rows.Close()
			return nil, meta, err
		}
		items, keys = append(items, item), append(keys, key)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, meta, err
	}
	more := len(items) > perPage
	if more {
		items, keys = items[:perPage], keys[:perPage]
	}
	if dir == newer {
		reverse(items)
		reverse(keys)
	}
	if more {
		if dir == older {
			meta.NextCursor = t.db.encodeCursor(older, ks.binding, keys[len(keys)-1])
		} else {
			meta.PrevCursor = t.db.encodeCursor(newer, ks.binding, keys[0])
		}
	}
	switch {
	case dir == older && len(keys) > 0 && hasFrom:
		found, err := t.exists(ks, ">", keys[0])
		if err != nil {
			return nil, meta, err
		}
		if found {
			meta.PrevCursor = t.db.encodeCursor(newer, ks.binding, keys[0])
		}
	case dir == newer && len(keys) > 0:
		found, err := t.exists(ks, "<", keys[len(keys)-1])
		if err != nil {
			return nil, meta, err
		}
		if found {
			meta.NextCursor = t.db.encodeCursor(older, ks.binding, keys[len(keys)-1])
		}
	case dir == older && hasFrom:
		// Everything past the cursor was deleted: lead back to the oldest page, which a
		// "newer than the empty key" cursor reads.
		found, err := t.exists(ks, ">", "")
		if err != nil {
			return nil, meta, err
		}
		if found {
			meta.PrevCursor = t.db.encodeCursor(newer, ks.binding, "")
		}
	}
	return items, meta, nil
}

// exists reports whether ks selects a row whose key is op than key.
func (t *tx) exists(ks keyset, op, key string) (bool, error) {
	args := append(append([]any(nil), ks.args...), key)
	var found bool
	err := t.queryRow(fmt.Sprintf("SELECT EXISTS (SELECT 1 FROM %s AND %s %s $%d)", ks.from, ks.key, op, len(args)), args...).Scan(&found)
	return found, err
}

func reverse[T any](s []T) {
	for i, j := 0, len(s)-1; i < j; i, j = i+1, j-1 {
		s[i], s[j] = s[j], s[i]
	}
}

// binding joins the parts that name a list.
func binding(parts ...string) string { return strings.Join(parts, "\x00") }

// encodeCursor signs a cursor for this database (internal/pagecursor).
func (db *DB) encodeCursor(dir byte, scope, id string) *string {
	return pagecursor.Encode(db.cursorKey, dir, scope, id)
}

// decodeCursor reads a cursor this database signed for scope.
func (db *DB) decodeCursor(cursor, scope string) (byte, string, bool) {
	return pagecursor.Decode(db.cursorKey, cursor, scope)
}
