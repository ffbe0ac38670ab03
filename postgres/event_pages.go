package postgres

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// maxSeq is past every event's seq: a backward walk from it starts at the newest.
const maxSeq = math.MaxInt64

// eventWalk reads a workspace's events in chain order (seq), from a bound excluded, in
// batches: backward (newest first) or forward.
type eventWalk struct {
	t           *tx
	workspaceID string
	forward     bool
	from        int64 // exclusive: the walk starts past it
	batch       int   // rows per query; 64 when 0
	facet       eventFacet
	buf         []walked
	done        bool
	bounded     bool // from was moved within facet's seqs
}

// eventFacet narrows a walk to the events holding value in col (type, actor_user_id),
// which their indexes (events_by_type, events_by_actor: migration 0039) serve in seq
// order; a zero facet walks every event. where repeats events_by_actor's predicate,
// which a generic plan, not knowing the value, could not otherwise prove.
// agents and types, when not nil, are instead the (agent, type) pairs walked, merged in
// seq order (service.EventFilter.Scopes): each pair's events through events_by_agent
// (migration 0043), so that another agent's events are never read; a pair whose anyAgent
// is true is its type's events through events_by_type (a caller who sees every agent but
// not every type), so that the types it may not read are never read.
// A pair's kind (service.EventScope.Kind) narrows it to that kind's events, "" to the
// events without one: events_by_agent_kind (migration 0044, which took the place of
// events_by_agent) and for any agent events_by_type_kind, so that a job.failed of a job
// kind the caller may not read is never read.
//
// lo (inclusive) and hi (exclusive), when not 0, bound the seqs walked: a time window's
// (events_window.go). The walk starts within them and ends at their edge.
type eventFacet struct {
	col, value, where    string
	agents, types, kinds []string
	anyAgent             []bool
	lo, hi               int64
}

// facetOf is the facet a filtered page walks: its (agent, type) scopes when it has some,
// else the actor's events when f names one (a person's events are few beside a common
// type's), else the type's.
func facetOf(f service.EventFilter) eventFacet {
	switch {
	case f.Scopes != nil:
		ef := eventFacet{agents: []string{}, types: []string{}, kinds: []string{}, anyAgent: []bool{}}
		for _, s := range f.Scopes {
			ef.agents, ef.types, ef.anyAgent = append(ef.agents, s.Agent), append(ef.types, s.Type), append(ef.anyAgent, s.AnyAgent)
			ef.kinds = append(ef.kinds, s.Kind)
		}
		return ef
	case f.Actor != "":
		return eventFacet{col: "actor_user_id", value: f.Actor, where: " AND actor_user_id <> ''"}
	case f.Type != "":
		return eventFacet{col: "type", value: f.Type}
	}
	return eventFacet{}
}

type walked struct {
	e   *data.Event
	seq int64
}

// next returns the walk's next event and its seq; ok is false at the end.
func (w *eventWalk) next() (*data.Event, bool, error) {
	e, _, ok, err := w.nextSeq()
	return e, ok, err
}

func (w *eventWalk) nextSeq() (*data.Event, int64, bool, error) {
	if !w.bounded {
		w.bounded = true
		switch lo, hi := w.facet.lo, w.facet.hi; {
		case w.forward && lo > 0 && w.from < lo-1:
			w.from = lo - 1
		case !w.forward && hi > 0 && w.from > hi:
			w.from = hi
		}
	}
	if len(w.buf) == 0 && !w.done {
		if err := w.fill(); err != nil {
			return nil, 0, false, err
		}
	}
	if len(w.buf) == 0 {
		return nil, 0, false, nil
	}
	r := w.buf[0]
	if w.facet.lo > 0 && r.seq < w.facet.lo || w.facet.hi > 0 && r.seq >= w.facet.hi {
		w.buf, w.done = nil, true // past the window: so is every event after it
		return nil, 0, false, nil
	}
	w.buf = w.buf[1:]
	return r.e, r.seq, true, nil
}

func (w *eventWalk) fill() error {
	n := w.batch
	if n <= 0 {
		n = 64
	}
	sql, args := w.query(n)
	rows, err := w.t.query(sql, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		e, seq, err := scanEvent(rows)
		if err != nil {
			return err
		}
		w.buf = append(w.buf, walked{e, seq})
		w.from = seq
	}
	if err := rows.Err(); err != nil {
		return err
	}
	w.done = len(w.buf) < n
	return nil
}

// query is the statement of the walk's next n events and its arguments.
func (w *eventWalk) query(n int) (string, []any) {
	op, order := "<", "DESC"
	if w.forward {
		op, order = ">", "ASC"
	}
	if w.facet.agents != nil {
		return w.scopesQuery(n, op, order)
	}
	// The scope's columns compared as ranges and named in the order, as keyset.within
	// does: the generic plan the server keeps for a prepared statement otherwise walked
	// events_seq_key past every other workspace's and facet's events
	// (TestEventPagesSeekTheirFacet). Under a facet the workspace is pinned, so that the
	// scan ends where the facet's value's events do, not at the workspace's end
	// (TestEventPagesOfAFacetStopAtIt); alone it stays a range, which the walk of every
	// event needs (pinned, the planner took events_seq_key for it) and which ends its
	// scan as well.
	where, args := "workspace_id >= $1 AND workspace_id <= $1 AND seq "+op+" $2", []any{w.workspaceID, w.from}
	orderBy := "workspace_id " + order
	if w.facet.col != "" {
		where = workspacePinned + " AND seq " + op + " $2"
		where += fmt.Sprintf(" AND %[1]s >= $3 AND %[1]s <= $3%[2]s", w.facet.col, w.facet.where)
		orderBy += ", " + w.facet.col + " " + order
		args = append(args, w.facet.value)
	}
	return fmt.Sprintf(`SELECT %s FROM events WHERE %s ORDER BY %s, seq %s LIMIT %d`, eventCols, where, orderBy, order, n), args
}

// scopesQuery is query for a walk of (agent, type, kind) pairs: a lateral join over the
// pairs' arrays reads each pair's next n events from events_by_agent_kind by a seek,
// merged and cut to the next n. A pair's rows beyond its first n are never read, and no
// other pair's at all; one statement whatever the number of pairs (an arm a pair planned
// 0.3 ms each). The pair's columns before the last are pinned (pinned) and the last is
// compared as a range, and all are named in the order, which events_by_agent_kind alone
// serves without a sort (the collation, "C", named so that the index applies): as
// equalities alone the planner, not knowing the pair, walked events_seq_key past other
// agents' events (TestEventPagesOfSomeAgentsSeekTheirPairs) or read a kind's events by a
// bitmap and sorted them (TestEventPagesOfSomeKindsSeekTheirKinds); as ranges alone the
// scan, bounded only by the first, read on through the agent's or type's other kinds
// when the pair had fewer events than the batch (TestEventPagesOfSomeKindsStopAtTheirScope).
// A pair of any agent takes the second arm, its type's events from events_by_type
// (TestEventPagesOfSomeTypesSeekTheirTypes), or with a kind the third, its kind's from
// events_by_type_kind, whose predicate (a kind not empty) it names. Each arm's condition
// on the pair is a one-time filter, so a pair runs one arm's seek and never another's.
func (w *eventWalk) scopesQuery(n int, op, order string) (string, []any) {
	return fmt.Sprintf(`SELECT %[1]s FROM unnest($3::text[], $4::text[], $5::bool[], $6::text[]) AS s(a, t, any_agent, k) CROSS JOIN LATERAL (
		(SELECT %[2]s FROM events WHERE NOT s.any_agent AND workspace_id = $1 AND %[6]s AND %[7]s
			AND kind >= s.k COLLATE "C" AND kind <= s.k COLLATE "C" AND seq %[3]s $2 ORDER BY agent_id %[4]s, type %[4]s, kind %[4]s, seq %[4]s LIMIT %[5]d)
		UNION ALL
		(SELECT %[2]s FROM events WHERE s.any_agent AND s.k = '' AND workspace_id = $1 AND type >= s.t AND type <= s.t
			AND seq %[3]s $2 ORDER BY type %[4]s, seq %[4]s LIMIT %[5]d)
		UNION ALL
		(SELECT %[2]s FROM events WHERE s.any_agent AND s.k <> '' AND workspace_id = $1 AND %[7]s
			AND kind >= s.k COLLATE "C" AND kind <= s.k COLLATE "C" AND kind <> ''
			AND seq %[3]s $2 ORDER BY type %[4]s, kind %[4]s, seq %[4]s LIMIT %[5]d)) e
		ORDER BY e.seq %[4]s LIMIT %[5]d`, eventColsOf("e"), eventCols, op, order, n, pairAgentPinned, pairTypePinned),
		[]any{w.workspaceID, w.from, w.facet.agents, w.facet.types, w.facet.anyAgent, w.facet.kinds}
}

// pinned is the condition that col holds value: an equality, so that an index scan ends
// where col's value does (PostgreSQL bounds a scan only by the columns after equalities
// on every column before them), and the same as a range, so that the planner, not knowing
// the value, estimates as few rows as it did of the range alone and keeps its ordered
// index scan (an equality alone it took for half a table of few types, and read it by a
// bitmap and a sort). The scan drops the range, which the equality implies.
func pinned(col, value string) string {
	return fmt.Sprintf("%[1]s = %[2]s AND %[1]s >= %[2]s AND %[1]s <= %[2]s", col, value)
}

// pinnedInOrder is pinned for a column a list orders by that no other pinned column
// follows in its index (a job list's workspace, before id): the equality written as
// = ANY of a one-value array, which the index scan takes for an equality, so that a bound
// on the next column ends it, but the planner does not, so that the order keeps the
// column and only the index that leads with it serves the order. With an equality the
// planner drops the column from the order as constant and walked the key's own index,
// jobs_pkey, past the other workspaces' jobs (TestJobListPagesSeekTheirFilter).
func pinnedInOrder(col, value string) string {
	return fmt.Sprintf("%[1]s = ANY(ARRAY[%[2]s]) AND %[1]s >= %[2]s AND %[1]s <= %[2]s", col, value)
}

// The pinned columns of the walks' statements, written once.
var (
	workspacePinned = pinned("workspace_id", "$1")
	pairAgentPinned = pinned("agent_id", `s.a COLLATE "C"`)
	pairTypePinned  = pinned("type", "s.t")
)

// eventColsOf is eventCols qualified by the relation alias.
func eventColsOf(alias string) string {
	cols := strings.Split(eventCols, ", ")
	for i, c := range cols {
		cols[i] = alias + "." + c
	}
	return strings.Join(cols, ", ")
}

// seqKey is a seq as a cursor carries it.
func seqKey(seq int64) string { return strconv.FormatInt(seq, 10) }

// EventPage implements service.EventReadTx with the bbolt engine's list semantics (keys
// are seqs here): the walk keeps what f.Keep accepts, looks at no more than f.MaxScan
// events, and a page cut by that bound still carries a cursor past what it looked at.
func (t *tx) EventPage(workspaceID string, f service.EventFilter, req data.PageRequest) ([]*data.Event, data.Page, error) {
	bind := binding("events", workspaceID, f.Key)
	perPage := req.PerPage
	if perPage == 0 {
		perPage = DefaultPerPage
	}
	meta := data.Page{PerPage: perPage}
	keep := func(e *data.Event) bool { return f.Keep == nil || f.Keep(e) }

	from, err := t.decodeEventCursor(req.Cursor, bind)
	if err != nil {
		return nil, meta, err
	}
	facet := facetOf(f)
	lo, hi, none, err := t.eventWindow(workspaceID, f.From, f.To)
	if err != nil {
		return nil, meta, err
	}
	facet.windowed(lo, hi, none)
	w := eventWalk{t: t, workspaceID: workspaceID, forward: from.dir == newer, from: from.seq, batch: eventPageBatch(f, perPage), facet: facet}
	var list []*data.Event
	var seqs []int64
	lastSeen := int64(-1) // the last seq looked at: where the next walk this way resumes
	more, cut, scanned := false, false, 0
	for {
		e, seq, ok, err := w.nextSeq()
		if err != nil {
			return nil, meta, err
		}
		if !ok {
			break
		}
		if f.MaxScan > 0 && scanned == f.MaxScan {
			more, cut = true, true
			break
		}
		if !keep(e) {
			scanned++
			lastSeen = seq
			continue
		}
		if len(list) == perPage {
			more = true
			break
		}
		scanned++
		lastSeen = seq
		list, seqs = append(list, e), append(seqs, seq)
	}
	if from.dir == newer {
		reverse(list)
		reverse(seqs)
	}
	if more && lastSeen >= 0 {
		t.setOnwardCursor(&meta, bind, from.dir, lastSeen)
	}
	if err := t.setBackCursor(&meta, workspaceID, bind, from, seqs, cut, keep, f.MaxScan, facet); err != nil {
		return nil, meta, err
	}
	return list, meta, nil
}

// eventPageFrom is where a page's walk starts: its direction, and the seq it starts past
// as the cursor carried it (key); hasFrom is false on a first page.
type eventPageFrom struct {
	dir     byte
	seq     int64
	hasFrom bool
	key     string
}

// decodeEventCursor reads a page's cursor; without one the walk starts at the newest.
func (t *tx) decodeEventCursor(cursor, bind string) (eventPageFrom, error) {
	if cursor == "" {
		return eventPageFrom{dir: older, seq: maxSeq}, nil
	}
	d, key, ok := t.db.decodeCursor(cursor, bind)
	seq, err := strconv.ParseInt(key, 10, 64)
	switch {
	case ok && key == "" && d == newer:
		seq = 0
	case !ok || err != nil || seq <= 0 || seqKey(seq) != key:
		return eventPageFrom{}, errBadCursor()
	}
	return eventPageFrom{dir: d, seq: seq, hasFrom: true, key: key}, nil
}

// eventPageBatch is the rows a page's walk reads a query: one more than the page when it
// keeps every event, else 256, no more than the scan bound needs. A walk of pairs reads
// up to a batch of each pair a query (scopesQuery), so one more than the page: what Keep
// refuses there is the caller's own events that from, to or actor pass over.
func eventPageBatch(f service.EventFilter, perPage int) int {
	batch := perPage + 1
	if f.Keep != nil && f.Scopes == nil {
		batch = 256
		if f.MaxScan > 0 {
			batch = min(batch, f.MaxScan+1)
		}
	}
	return batch
}

// setOnwardCursor sets the cursor in the walk's direction (dir), which resumes past the
// last event looked at.
func (t *tx) setOnwardCursor(meta *data.Page, bind string, dir byte, lastSeen int64) {
	if dir == older {
		meta.NextCursor = t.db.encodeCursor(older, bind, seqKey(lastSeen))
	} else {
		meta.PrevCursor = t.db.encodeCursor(newer, bind, seqKey(lastSeen))
	}
}

// setBackCursor sets the cursor back, toward where the walk started: from the page's edge
// event (seqs are the page's, newest first), so that following next_cursor then
// prev_cursor returns the same page; from where the walk started when the scan bound cut
// it (cut) before it found any.
func (t *tx) setBackCursor(meta *data.Page, workspaceID, bind string, from eventPageFrom, seqs []int64, cut bool, keep func(*data.Event) bool, maxScan int, facet eventFacet) error {
	var err error
	var found bool
	switch {
	case from.dir == older && len(seqs) > 0:
		if from.hasFrom {
			if found, err = t.eventNeighbour(workspaceID, seqs[0], true, keep, maxScan, facet); found {
				meta.PrevCursor = t.db.encodeCursor(newer, bind, seqKey(seqs[0]))
			}
		}
	case from.dir == newer && len(seqs) > 0:
		if found, err = t.eventNeighbour(workspaceID, seqs[len(seqs)-1], false, keep, maxScan, facet); found {
			meta.NextCursor = t.db.encodeCursor(older, bind, seqKey(seqs[len(seqs)-1]))
		}
	case cut && from.dir == older && from.hasFrom: // a first page has nothing newer
		meta.PrevCursor = t.db.encodeCursor(newer, bind, from.key)
	case cut && from.dir == newer && from.key != "":
		// A walk from "" began at the oldest event: nothing is older, and an older
		// cursor without a seq is refused (decodeEventCursor).
		meta.NextCursor = t.db.encodeCursor(older, bind, from.key)
	case from.dir == older && from.hasFrom:
		// Everything past the cursor was deleted: lead back to the oldest page, which a
		// "newer than the empty key" cursor reads.
		if found, err = t.eventNeighbour(workspaceID, maxSeq, false, nil, 0, facet); found {
			meta.PrevCursor = t.db.encodeCursor(newer, bind, "")
		}
	}
	return err
}

// eventNeighbour reports whether the workspace holds a kept event after (newer) or before
// seq, as a page walking that way would find it: true too past the scan bound, where that
// page ends empty with a cursor on (bolt's hasNeighbour); not at exactly the bound, where
// it would end empty with neither cursor.
func (t *tx) eventNeighbour(workspaceID string, seq int64, after bool, keep func(*data.Event) bool, maxScan int, facet eventFacet) (bool, error) {
	batch := 1
	if keep != nil {
		batch = 64
		if facet.agents != nil {
			batch = 16 // a batch of each pair (scopesQuery)
		}
	}
	w := eventWalk{t: t, workspaceID: workspaceID, forward: after, from: seq, batch: batch, facet: facet}
	for n := 0; ; {
		e, ok, err := w.next()
		if err != nil || !ok {
			return false, err
		}
		if keep == nil || keep(e) {
			return true, nil
		}
		if n++; maxScan > 0 && n > maxScan {
			return true, nil
		}
	}
}
