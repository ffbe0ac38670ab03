package postgres

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/pagecursor"
)

// maxCallScan bounds the rows one page of calls may examine. A page that reaches it ends
// early with a next_cursor, so a rare filter combination costs bounded time per request
// (the bbolt engine's bound, with its cursor semantics).
var maxCallScan = 20000

// callQuery is one list request resolved against the indexes: the scope callWalk, newest
// first, through one index per arm (several arms, merged by id, for a caller limited to
// some agents), and the filters the scope does not answer, checked on each row callWalk.
type callQuery struct {
	arms     []string // conditions besides workspace_id = $1, one per index range callWalk
	residual []string // conditions the walk does not answer
	args     []any    // $1 is the workspace
	lo, hi   string   // id bounds: lo inclusive, hi exclusive; "" is unbounded
	binding  string
	empty    bool // nothing can match (a restriction to no agents, or one the filter leaves)
	// armCol and armParams, when armCol is set, say that arm i is armCol = armParams[i]
	// (an index on workspace_id, armCol, id): walkSQL may seek it in that index's order.
	armCol    string
	armParams []string
	// The filter the arms answer: its scopes (whose counts a search compares with its
	// rarest term's) and its condition on a row ("" without a filter).
	scopes []string
	cond   string
	// src, when set, is what the arms read instead of the calls table (a search walking
	// the postings of a term).
	src *walkSource
}

// walkSource is a relation the arms of a walk read: from is "relation WHERE condition"
// using $1 (the workspace), key the column of call ids the walk is ordered and bounded by,
// and cols the callCols as that relation names them.
type walkSource struct {
	from, key, cols string
}

// callFilter is one filter of a list: the scopes whose counts measure it, the index
// ranges that answer it, and its condition on a row.
type callFilter struct {
	scopes, arms []string
	cond         string
	// armCol and armParams are callQuery's.
	armCol    string
	armParams []string
}

// Calls implements service.CallTx.
func (t *tx) Calls(ws string, agentIDs []string, f data.CallFilter, req data.PageRequest) ([]*data.Call, data.Page, error) {
	q, err := t.newCallQuery(ws, agentIDs, f)
	if err != nil {
		return nil, data.Page{}, err
	}
	return q.page(t, req)
}

// newCallQuery picks, among the scopes the filters name, the one with the fewest calls
// (call_scope_counts), as the bbolt engine does; the other filters become conditions.
func (t *tx) newCallQuery(ws string, agentIDs []string, f data.CallFilter) (*callQuery, error) {
	q := &callQuery{args: []any{ws}}
	q.binding = pagecursor.BindAgents(binding("calls", ws, f.AgentID, f.NumberID, f.Direction, f.Status,
		strconv.FormatInt(unixMilliOrZero(f.From), 10), strconv.FormatInt(unixMilliOrZero(f.To), 10)), agentIDs)
	arg := func(v any) string { q.args = append(q.args, v); return fmt.Sprintf("$%d", len(q.args)) }
	eq := func(col, scope, v string) callFilter {
		p := arg(v)
		c := col + " = " + p
		return callFilter{scopes: []string{scope}, arms: []string{c}, cond: c, armCol: col, armParams: []string{p}}
	}
	var filters []callFilter
	limited := agentIDs != nil
	switch {
	case f.AgentID != "" && limited && !slices.Contains(agentIDs, f.AgentID), limited && len(agentIDs) == 0:
		q.empty = true
		return q, nil
	case f.AgentID != "":
		filters = append(filters, eq("agent_id", scopeAgent(f.AgentID), f.AgentID))
	case limited:
		// The condition reuses the arms' parameters: one left unused could not be typed.
		r := callFilter{armCol: "agent_id"}
		var params []string
		for _, a := range agentIDs {
			p := arg(a)
			params = append(params, p)
			r.scopes = append(r.scopes, scopeAgent(a))
			r.arms = append(r.arms, "agent_id = "+p)
		}
		r.cond = "agent_id IN (" + strings.Join(params, ", ") + ")"
		r.armParams = params
		filters = append(filters, r)
	}
	if f.NumberID != "" {
		filters = append(filters, eq("number_id", scopeNumber(f.NumberID), f.NumberID))
	}
	if f.Direction != "" {
		filters = append(filters, eq("direction", scopeDirection(f.Direction), f.Direction))
	}
	if f.Status != "" {
		filters = append(filters, eq("status", scopeStatus(f.Status), f.Status))
	}
	if !f.From.IsZero() {
		q.lo = data.IDBound(data.PrefixCall, f.From)
	}
	if !f.To.IsZero() {
		q.hi = data.IDBound(data.PrefixCall, f.To)
	}
	best, err := t.smallestScope(ws, filters)
	if err != nil {
		return nil, err
	}
	q.arms = []string{"true"}
	if best >= 0 {
		q.arms, q.scopes, q.cond = filters[best].arms, filters[best].scopes, filters[best].cond
		q.armCol, q.armParams = filters[best].armCol, filters[best].armParams
	}
	for i, fl := range filters {
		if i != best {
			q.residual = append(q.residual, fl.cond)
		}
	}
	return q, nil
}

// smallestScope returns the index of the filter whose scopes hold the fewest calls (the
// first on a tie), -1 without filters. One filter needs no count.
func (t *tx) smallestScope(ws string, filters []callFilter) (int, error) {
	if len(filters) < 2 {
		return len(filters) - 1, nil
	}
	var all []string
	for _, fl := range filters {
		all = append(all, fl.scopes...)
	}
	rows, err := t.query(`SELECT scope, calls FROM call_scope_counts WHERE workspace_id = $1 AND scope = ANY($2::text[])`, ws, all)
	if err != nil {
		return 0, err
	}
	counts := map[string]int64{}
	for rows.Next() {
		var s string
		var n int64
		if err := rows.Scan(&s, &n); err != nil {
			rows.Close()
			return 0, err
		}
		counts[s] = n
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	best, bestN := 0, int64(-1)
	for i, fl := range filters {
		var n int64
		for _, s := range fl.scopes {
			n += counts[s]
		}
		if bestN < 0 || n < bestN {
			best, bestN = i, n
		}
	}
	return best, nil
}

// walkSQL selects cols, then whether the row matches (m) and its place in the walk (n),
// for the rows of q beyond from (or at it, when inclusive; "" = from the newest or the
// oldest end), newest
// first when desc: the matching rows among the first maxCallScan callWalk, and the
// maxCallScan-th row callWalk, if there is one, so that the caller knows where a cut walk
// stopped. Without residual filters every row callWalk matches and limit bounds the walk.
func (q *callQuery) walkSQL(desc bool, from string, inclusive bool, limit int, cols string) (string, []any) {
	args := append([]any(nil), q.args...)
	arg := func(v any) string { args = append(args, v); return fmt.Sprintf("$%d", len(args)) }
	op, order := "<", "DESC"
	if !desc {
		op, order = ">", "ASC"
	}
	src := walkSource{from: "calls WHERE workspace_id = $1", key: "id", cols: callCols}
	if q.src != nil {
		src = *q.src
	}
	var rng string
	if inclusive {
		op += "="
	}
	if from != "" {
		rng += " AND " + src.key + " " + op + " " + arg(from)
	}
	if q.lo != "" {
		rng += " AND " + src.key + " >= " + arg(q.lo)
	}
	if q.hi != "" {
		rng += " AND " + src.key + " < " + arg(q.hi)
	}
	arms := make([]string, len(q.arms))
	for i, a := range q.arms {
		arms[i] = fmt.Sprintf("SELECT %s FROM %s AND %s%s", src.cols, src.from, a, rng)
	}
	walk := func(n int) string {
		if q.armCol == "" && q.src == nil {
			// No filter: the workspace's calls in calls_by_workspace's order, the workspace
			// pinned in order (pinnedInOrder), so that the generic plan does not walk
			// calls_pkey past other workspaces' calls and a time window ends the scan
			// (TestWorkspaceListPagesStopAtTheirScope).
			return fmt.Sprintf("SELECT %s FROM calls WHERE %s%s ORDER BY workspace_id %s, id %s LIMIT %d",
				src.cols, pinnedInOrder("workspace_id", "$1"), rng, order, order, n)
		}
		if q.armCol != "" && q.src == nil && len(q.residual) == 0 {
			// Each arm a range of its index, in that index's order, n rows at most: the
			// plan the server keeps for a prepared statement (generic, its values unknown)
			// could otherwise walk calls_pkey from the cursor past every call of other
			// values and other workspaces (keyset.within; TestCallPagesSeekTheirFilter).
			// Pinned (pinned), so that a time window's bound on id ends the scan, not the
			// value's end (TestCallPagesStopAtTheirWindow).
			// A walk with residual filters keeps the equalities, merged in id order as
			// they stream, its rows bounded by maxCallScan.
			for i, p := range q.armParams {
				arms[i] = fmt.Sprintf("(SELECT %s FROM %s AND %s%s ORDER BY %s %s, id %s LIMIT %d)",
					src.cols, src.from, pinned(q.armCol, p), rng, q.armCol, order, order, n)
			}
		}
		return fmt.Sprintf("SELECT * FROM (%s) u ORDER BY id %s LIMIT %d", strings.Join(arms, " UNION ALL "), order, n)
	}
	if len(q.residual) == 0 {
		return fmt.Sprintf("SELECT %s, true, 0::bigint FROM (%s) w", cols, walk(limit)), args
	}
	return fmt.Sprintf(`SELECT %s, m, n FROM (
			SELECT w.*, coalesce(%s, false) AS m, row_number() OVER (ORDER BY id %s) AS n FROM (%s) w
		) x WHERE m OR n = %d ORDER BY id %s LIMIT %d`,
		cols, "("+strings.Join(q.residual, " AND ")+")", order, walk(maxCallScan), maxCallScan, order, limit), args
}

// callWalk is what a walk found: up to want matching calls, whether more match beyond them,
// and, when the walk reached maxCallScan rows first (truncated), the last row examined.
type callWalk struct {
	calls           []*data.Call
	more, truncated bool
	last            string
}

// walk walks q from from, newest first when desc.
func (q *callQuery) walk(t *tx, desc bool, from string, want int) (callWalk, error) {
	sql, args := q.walkSQL(desc, from, false, want+2, callCols)
	rows, err := t.query(sql, args...)
	if err != nil {
		return callWalk{}, err
	}
	return readWalk(rows, want)
}

func readWalk(rows pgx.Rows, want int) (callWalk, error) {
	defer rows.Close()
	var w callWalk
	reached := false
	for rows.Next() {
		var match bool
		var n int64
		c, err := scanCall(rows, &match, &n)
		if err != nil {
			return callWalk{}, err
		}
		if match {
			if len(w.calls) == want {
				w.more = true
				break
			}
			w.calls = append(w.calls, c)
		}
		if n == int64(maxCallScan) {
			reached, w.last = true, c.ID
		}
	}
	rows.Close()
	w.truncated = reached && !w.more
	return w, rows.Err()
}

// walkOlderWithNewer is walk older from a cursor, sent in one round trip with the two
// oldest ids at or after the cursor, for a q without residual filters: every row of its
// scope matches, so none lies between the cursor and the page's first call, and a row
// newer than the page's first call (or than the cursor, when the page is empty) is among
// those two when there is one.
func (q *callQuery) walkOlderWithNewer(t *tx, from string, want int) (callWalk, []string, error) {
	var b pgx.Batch
	sql, args := q.walkSQL(true, from, false, want+2, callCols)
	b.Queue(sql, args...)
	sql, args = q.walkSQL(false, from, true, 2, "id")
	b.Queue(sql, args...)
	br, err := t.batch(&b)
	if err != nil {
		return callWalk{}, nil, err
	}
	defer br.Close()
	rows, err := br.Query()
	if err != nil {
		return callWalk{}, nil, err
	}
	w, err := readWalk(rows, want)
	if err != nil {
		return callWalk{}, nil, err
	}
	rows, err = br.Query()
	if err != nil {
		return callWalk{}, nil, err
	}
	var newer []string
	for rows.Next() {
		var id string
		var m bool
		var n int64
		if err := rows.Scan(&id, &m, &n); err != nil {
			rows.Close()
			return callWalk{}, nil, err
		}
		newer = append(newer, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return callWalk{}, nil, err
	}
	return w, newer, br.Close()
}

// beyond reports whether a walk from edge in one direction finds a matching row, or
// cannot tell within maxCallScan rows (a cursor is then offered).
func (q *callQuery) beyond(t *tx, desc bool, edge string) (bool, error) {
	sql, args := q.walkSQL(desc, edge, false, 1, "id")
	rows, err := t.query(sql, args...)
	if err != nil {
		return false, err
	}
	found := rows.Next()
	rows.Close()
	return found, rows.Err()
}

// page returns one newest-first page of q with the cursor semantics of conventions §4 and
// of the bbolt engine: a page examines at most maxCallScan rows; one that reaches the
// bound before filling ends there, and its cursor continues from the last row examined.
func (q *callQuery) page(t *tx, req data.PageRequest) ([]*data.Call, data.Page, error) {
	perPage := req.PerPage
	if perPage == 0 {
		perPage = DefaultPerPage
	}
	meta := data.Page{PerPage: perPage}
	dir, from := byte(older), ""
	if req.Cursor != "" {
		d, id, ok := t.db.decodeCursor(req.Cursor, q.binding)
		if !ok {
			return nil, meta, errBadCursor()
		}
		dir, from = d, id
	}
	if q.empty {
		return nil, meta, nil
	}
	desc := dir == older
	var w callWalk
	var newerIDs []string // prefetched: the ids a previous page would start from
	prefetched := desc && from != "" && len(q.residual) == 0
	var err error
	if prefetched {
		w, newerIDs, err = q.walkOlderWithNewer(t, from, perPage)
	} else {
		w, err = q.walk(t, desc, from, perPage)
	}
	if err != nil {
		return nil, meta, err
	}
	calls, more, truncated, last := w.calls, w.more, w.truncated, w.last
	if !desc {
		reverse(calls)
	}
	// Beyond the page in its own direction: more, or the walk stopped at the scan bound.
	ahead := func(edge string) *string {
		if truncated {
			return t.db.encodeCursor(dir, q.binding, last)
		}
		if more {
			return t.db.encodeCursor(dir, q.binding, edge)
		}
		return nil
	}
	// Behind the page: is there a matching row on the other side of its first record?
	behind := func(edge string, d byte) (*string, error) {
		if prefetched {
			if slices.ContainsFunc(newerIDs, func(id string) bool { return id > edge }) {
				return t.db.encodeCursor(d, q.binding, edge), nil
			}
			return nil, nil
		}
		found, err := q.beyond(t, d == older, edge)
		if err != nil || !found {
			return nil, err
		}
		return t.db.encodeCursor(d, q.binding, edge), nil
	}
	switch {
	case desc:
		if len(calls) > 0 {
			meta.NextCursor = ahead(calls[len(calls)-1].ID)
		} else if truncated {
			meta.NextCursor = ahead("")
		}
		if from != "" {
			edge := from
			if len(calls) > 0 {
				edge = calls[0].ID
			}
			meta.PrevCursor, err = behind(edge, newer)
		}
	case len(calls) > 0:
		meta.PrevCursor = ahead(calls[0].ID)
		meta.NextCursor, err = behind(calls[len(calls)-1].ID, older)
	default:
		meta.PrevCursor = ahead("")
		meta.NextCursor, err = behind(from, older)
	}
	return calls, meta, err
}

func unixMilliOrZero(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}
