package postgres

import (
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/pagecursor"
)

// DefaultPerPage is the page size when per_page is not given (conventions §4).
const DefaultPerPage = data.DefaultPerPage

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
	// within, when set, is a column the condition holds to one value, compared as a
	// range (col >= $n AND col <= $n) and sorted before key: the order then is that of
	// an index on (scope, within, key) alone, so the planner reads that index rather
	// than walk the key's order and pass over the rows of other values. With an
	// equality the planner drops the sorted column (it is constant) and may take the
	// key's own index, guessing the matching rows spread evenly, which they often are
	// not (a campaign's completed recipients are its oldest).
	within string
	// union, when set, are keysets whose rows together are this one's, each read through
	// its own index: the cursors' checks ask each (a page of them is read apart and
	// merged by its caller, as recipientsMerged does).
	union []keyset
	// walks, when set, select ks's rows as the union of index walks read apart: for each
	// walk, one per value of an index on (scope, walk.col, key), at most per_page+1 rows
	// each, merged by the statement (a LATERAL join), so that a page costs its values'
	// first rows whatever their rows number. "col = ANY(…)" reads every row of the values
	// and sorts them (narrowByAgent), or passes over the rows of the other values (jobList).
	// The walks' rows must not overlap.
	walks []walk
}

// pageRows returns one newest-first page of ks's rows, scanned by scan, and the page's
// cursors, with the bbolt engine's semantics: next_cursor past the last row when more
// rows are older; prev_cursor from the first row when the page did not start at the
// newest; a previous page read from a prev_cursor, nearest first, then flipped.
//
// The read loop stays here, with scan and the item type; the steps around it, which
// depend on neither, are named (as in EventPage).
func pageRows[T any](t *tx, ks keyset, req data.PageRequest, scan func(pgx.Rows) (T, string, error)) ([]T, data.Page, error) {
	q, err := t.pageQuery(ks, req)
	meta := data.Page{PerPage: q.perPage}
	if err != nil {
		return nil, meta, err
	}
	rows, err := t.query(q.sql, q.args...)
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
	more := len(items) > q.perPage
	if more {
		items, keys = items[:q.perPage], keys[:q.perPage]
	}
	if q.dir == newer {
		reverse(items)
		reverse(keys)
	}
	if err := t.pageCursors(ks, q, more, keys, &meta); err != nil {
		return nil, meta, err
	}
	return items, meta, nil
}

// keysetQuery is the statement that reads one page of a keyset, per_page+1 rows from
// where its cursor points, and that cursor's direction.
type keysetQuery struct {
	perPage int
	dir     byte   // older, or newer for a prev_cursor
	hasFrom bool   // a cursor gave the key the page starts past
	from    string // that key
	sql     string
	args    []any
}

// pageQuery reads req's page size and cursor and builds the page's statement; on a bad
// cursor the query still carries the page size, for the response's page object.
func (t *tx) pageQuery(ks keyset, req data.PageRequest) (keysetQuery, error) {
	q := keysetQuery{perPage: req.PerPage, dir: older}
	if q.perPage == 0 {
		q.perPage = DefaultPerPage
	}
	from := ""
	if req.Cursor != "" {
		d, id, ok := t.db.decodeCursor(req.Cursor, ks.binding)
		if !ok {
			return q, errBadCursor()
		}
		q.dir, from, q.hasFrom, q.from = d, id, true, id
	}
	args := append([]any(nil), ks.args...)
	where, order := "", "DESC"
	switch {
	case q.dir == newer:
		args = append(args, from)
		where, order = fmt.Sprintf(" AND %s > $%d", ks.key, len(args)), "ASC"
	case q.hasFrom:
		args = append(args, from)
		where = fmt.Sprintf(" AND %s < $%d", ks.key, len(args))
	}
	q.sql = fmt.Sprintf("SELECT %s FROM %s%s ORDER BY %s LIMIT %d", ks.cols, ks.from, where, ks.orderBy(order), q.perPage+1)
	if ks.walks != nil {
		// The page's keys, from each value's walk, then their rows: only the page's rows
		// are read whole.
		var keys []string
		for _, w := range ks.walks {
			args = append(args, w.vals)
			keys = append(keys, fmt.Sprintf("SELECT walk.%s FROM unnest($%d::text[]) AS vals(v) CROSS JOIN LATERAL (SELECT %s FROM %s AND %s%s ORDER BY %s LIMIT %d) walk",
				ks.key, len(args), ks.key, ks.from, w.within(), where, w.orderBy(ks.key, order), q.perPage+1))
		}
		q.sql = fmt.Sprintf("SELECT %s FROM %s AND %s IN (%s ORDER BY %s %s LIMIT %d) ORDER BY %s",
			ks.cols, ks.from, ks.key, strings.Join(keys, " UNION ALL "), ks.key, order, q.perPage+1, ks.orderBy(order))
	}
	q.args = args
	return q, nil
}

// pageCursors sets meta's cursors for a page of keys, newest first, that q read; more
// says rows were left past the page in q's direction. A cursor the other way is set only
// when a row is there, which costs one EXISTS query.
func (t *tx) pageCursors(ks keyset, q keysetQuery, more bool, keys []string, meta *data.Page) error {
	if more {
		if q.dir == older {
			meta.NextCursor = t.db.encodeCursor(older, ks.binding, keys[len(keys)-1])
		} else {
			meta.PrevCursor = t.db.encodeCursor(newer, ks.binding, keys[0])
		}
	}
	switch {
	case q.dir == older && len(keys) > 0 && q.hasFrom:
		found, err := t.exists(ks, ">", keys[0])
		if err != nil {
			return err
		}
		if found {
			meta.PrevCursor = t.db.encodeCursor(newer, ks.binding, keys[0])
		}
	case q.dir == newer && len(keys) > 0:
		found, err := t.exists(ks, "<", keys[len(keys)-1])
		if err != nil {
			return err
		}
		if found {
			meta.NextCursor = t.db.encodeCursor(older, ks.binding, keys[len(keys)-1])
		}
	case q.dir == older && q.hasFrom:
		// Everything past the cursor was deleted: lead back to the oldest page, which a
		// "newer than the empty key" cursor reads.
		found, err := t.exists(ks, ">", "")
		if err != nil {
			return err
		}
		if found {
			meta.PrevCursor = t.db.encodeCursor(newer, ks.binding, "")
		}
	}
	return nil
}

// exists reports whether ks selects a row whose key is op than key.
func (t *tx) exists(ks keyset, op, key string) (bool, error) {
	if ks.union != nil {
		for _, u := range ks.union {
			if found, err := t.exists(u, op, key); err != nil || found {
				return found, err
			}
		}
		return false, nil
	}
	sql, args := existsQuery(ks, op, key)
	var found bool
	err := t.queryRow(sql, args...).Scan(&found)
	return found, err
}

// existsQuery is the statement of exists and its arguments.
func existsQuery(ks keyset, op, key string) (string, []any) {
	args := append(append([]any(nil), ks.args...), key)
	dir := "ASC" // from the end op points to (keyset.within)
	if op == ">" {
		dir = "DESC"
	}
	if ks.walks != nil { // each value's walk from that end: its first row
		keyArg := len(args)
		var firsts []string
		for _, w := range ks.walks {
			args = append(args, w.vals)
			firsts = append(firsts, fmt.Sprintf("SELECT 1 FROM unnest($%d::text[]) AS vals(v) CROSS JOIN LATERAL (SELECT 1 FROM %s AND %s AND %s %s $%d ORDER BY %s LIMIT 1) walk",
				len(args), ks.from, w.within(), ks.key, op, keyArg, w.orderBy(ks.key, dir)))
		}
		return fmt.Sprintf("SELECT EXISTS (%s)", strings.Join(firsts, " UNION ALL ")), args
	}
	if ks.within == "" {
		return fmt.Sprintf("SELECT EXISTS (SELECT 1 FROM %s AND %s %s $%d)", ks.from, ks.key, op, len(args)), args
	}
	// In the index's order (keyset.within), from the end op points to: the newest row is
	// newer than key if any is, the oldest older, so one entry is read. The first row is
	// a subquery of its own: the planner drops an EXISTS's own ORDER BY and LIMIT, and
	// would then pass over the other values' rows as a page would (keyset.within).
	return fmt.Sprintf("SELECT EXISTS (SELECT 1 FROM (SELECT 1 FROM %s AND %s %s $%d ORDER BY %s LIMIT 1) edge)",
		ks.from, ks.key, op, len(args), ks.orderBy(dir)), args
}

// walk is a family of index walks of a keyset (keyset.walks): one per value of vals, of
// the rows whose col is that value and where also, if set, holds too.
type walk struct {
	col, also string
	vals      []string
}

// within holds a walk to its value, vals.v, pinned (pinned): as a range for the reason
// keyset.within is one (with an equality alone the planner may walk the key's own index),
// and as an equality so that a bound on the key (a job list's time window) ends the scan
// (TestJobListPagesStopAtTheirWindow). also is written as a
// CASE, whose share of the rows the planner does not estimate and guesses at half: its
// statistics are of the whole table, and a condition's share there is not its share of
// one value's rows (the agent kinds among all jobs, not among one agent's: all of them).
// Taking the table's, rare, it expected a walk to pass over most of its rows, and read
// them all by bitmap and sorted them (TestLimitedJobListWalksEachAgent).
func (w walk) within() string {
	s := pinned(w.col, "vals.v")
	if w.also != "" {
		s += " AND CASE WHEN " + w.also + " THEN true ELSE false END"
	}
	return s
}

// orderBy is the ORDER BY of a walk in dir: its index's.
func (w walk) orderBy(key, dir string) string {
	return fmt.Sprintf("%s %s, %s %s", w.col, dir, key, dir)
}

// inWorkspace is the keyset of a table's rows of one workspace, by id, in the order of
// the table's index on (workspace_id, id) (keyset.within, the workspace compared as a
// range): the plan the server keeps for a prepared statement, not knowing the workspace,
// walked the table's primary key from a cursor past every other workspace's rows
// (TestWorkspaceListsSeekTheWorkspace).
func inWorkspace(table, cols, ws string) keyset {
	return keyset{binding: binding(table, ws), cols: cols, key: "id", within: "workspace_id",
		from: table + ` WHERE workspace_id >= $1 AND workspace_id <= $1`, args: []any{ws}}
}

// orderBy is the ORDER BY of ks's rows in dir (ASC, DESC).
func (ks keyset) orderBy(dir string) string {
	if ks.within != "" {
		return fmt.Sprintf("%s %s, %s %s", ks.within, dir, ks.key, dir)
	}
	return ks.key + " " + dir
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

// errBadCursor refuses a cursor this database did not sign for the list read, in the one
// wording every list and the server's form check use.
func errBadCursor() error { return data.FieldError("cursor", pagecursor.Refused) }

// maxAgentWalks bounds the agents a page walks apart (keyset.walks): as many as a
// member's or key's agent_ids may name (validate.MaxIDListItems), measured in
// docs/performance.md ("The conversation list"); past it, agent_id = ANY(…).
const maxAgentWalks = 1000

// narrowByAgent narrows a workspace's rows of table (campaigns, conversations: columns
// workspace_id, agent_id and status, an index on workspace_id, id and one on
// workspace_id, agent_id, id), ks's args holding the workspace ($1), to a list's
// agent_id and status filters, "" for none, and to the caller's agents: agentIDs nil for
// every agent, empty for none (service: a caller limited to agents it cannot see any more
// sees nothing). The agent or agents are walked apart (keyset.walks), but for a status
// among open: a workspace holds few rows of those (conversations' active, campaigns' not
// final: both bounded) and a partial index of them, which the planner may read, where a
// walk of an agent's rows would pass over every row of the other statuses. Every agent's
// rows but of an open status are the workspace's index's, walked as inWorkspace's
// (TestScopedListsSeekTheScope); campaigns of a final status have an index of their own
// (campaignPageList).
func (ks *keyset) narrowByAgent(table, agentID, status string, agentIDs []string, open ...string) {
	ks.from = table + ` WHERE workspace_id = $1`
	if agentID == "" && agentIDs == nil && !slices.Contains(open, status) {
		ks.from, ks.within = table+` WHERE workspace_id >= $1 AND workspace_id <= $1`, "workspace_id"
	}
	switch {
	case slices.Contains(open, status):
		// Written out, from the caller's constant, so that a plan the server keeps for the
		// statement still proves the predicate of the open rows' partial index.
		ks.from += ` AND status = '` + open[slices.Index(open, status)] + `'`
	case status != "":
		ks.args = append(ks.args, status)
		ks.from += fmt.Sprintf(` AND status = $%d`, len(ks.args))
	}
	agents := agentIDs
	if agentID != "" {
		agents = []string{agentID}
		if agentIDs != nil && !slices.Contains(agentIDs, agentID) {
			agents = []string{} // an agent the caller may not see: nothing
		}
	}
	switch {
	case agents == nil: // every agent's: the workspace's rows
	case slices.Contains(open, status) && len(agents) == 1:
		ks.args = append(ks.args, agents[0])
		ks.from += fmt.Sprintf(` AND agent_id = $%d`, len(ks.args))
	case slices.Contains(open, status) || len(agents) > maxAgentWalks:
		ks.args = append(ks.args, agents)
		ks.from += fmt.Sprintf(` AND agent_id = ANY($%d)`, len(ks.args))
	case len(agents) == 1: // its walk alone, without the merge's statement around it
		ks.args = append(ks.args, agents[0])
		ks.from += fmt.Sprintf(` AND agent_id >= $%d AND agent_id <= $%d`, len(ks.args), len(ks.args))
		ks.within = "agent_id"
	default:
		ks.walks = []walk{{col: "agent_id", vals: agents}}
	}
}
