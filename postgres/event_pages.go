package postgres

import (
	"fmt"
	"math"
	"strconv"

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
	buf         []walked
	done        bool
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
	if len(w.buf) == 0 && !w.done {
		if err := w.fill(); err != nil {
			return nil, 0, false, err
		}
	}
	if len(w.buf) == 0 {
		return nil, 0, false, nil
	}
	r := w.buf[0]
	w.buf = w.buf[1:]
	return r.e, r.seq, true, nil
}

// eventWalkSQL reads n events of a workspace ($1) past seq $2, forward or backward, in
// the order of events_by_workspace, the workspace compared as a range (keyset.within): a
// generic plan otherwise walked the seq's own index past other workspaces' events
// (TestScopedListsSeekTheScope).
func eventWalkSQL(forward bool, n int) string {
	op, order := "<", "DESC"
	if forward {
		op, order = ">", "ASC"
	}
	return fmt.Sprintf(`SELECT %[1]s FROM events WHERE workspace_id >= $1 AND workspace_id <= $1 AND seq %[2]s $2
		ORDER BY workspace_id %[3]s, seq %[3]s LIMIT %[4]d`, eventCols, op, order, n)
}

func (w *eventWalk) fill() error {
	n := w.batch
	if n <= 0 {
		n = 64
	}
	rows, err := w.t.query(eventWalkSQL(w.forward, n), w.workspaceID, w.from)
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
	w := eventWalk{t: t, workspaceID: workspaceID, forward: from.dir == newer, from: from.seq, batch: eventPageBatch(f, perPage)}
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
	if err := t.setBackCursor(&meta, workspaceID, bind, from, seqs, cut, keep, f.MaxScan); err != nil {
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
// keeps every event, else 256, no more than the scan bound needs.
func eventPageBatch(f service.EventFilter, perPage int) int {
	batch := perPage + 1
	if f.Keep != nil {
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
func (t *tx) setBackCursor(meta *data.Page, workspaceID, bind string, from eventPageFrom, seqs []int64, cut bool, keep func(*data.Event) bool, maxScan int) error {
	var err error
	var found bool
	switch {
	case from.dir == older && len(seqs) > 0:
		if from.hasFrom {
			if found, err = t.eventNeighbour(workspaceID, seqs[0], true, keep, maxScan); found {
				meta.PrevCursor = t.db.encodeCursor(newer, bind, seqKey(seqs[0]))
			}
		}
	case from.dir == newer && len(seqs) > 0:
		if found, err = t.eventNeighbour(workspaceID, seqs[len(seqs)-1], false, keep, maxScan); found {
			meta.NextCursor = t.db.encodeCursor(older, bind, seqKey(seqs[len(seqs)-1]))
		}
	case cut && from.dir == older:
		meta.PrevCursor = t.db.encodeCursor(newer, bind, from.key)
	case cut && from.dir == newer && from.key != "":
		// A walk from "" began at the oldest event: nothing is older, and an older
		// cursor without a seq is refused (decodeEventCursor).
		meta.NextCursor = t.db.encodeCursor(older, bind, from.key)
	case from.dir == older && from.hasFrom:
		// Everything past the cursor was deleted: lead back to the oldest page, which a
		// "newer than the empty key" cursor reads.
		if found, err = t.eventNeighbour(workspaceID, maxSeq, false, nil, 0); found {
			meta.PrevCursor = t.db.encodeCursor(newer, bind, "")
		}
	}
	return err
}

// eventNeighbour reports whether the workspace holds a kept event after (newer) or before
// seq, as a page walking that way would find it: true too past the scan bound, where that
// page ends empty with a cursor on (bolt's hasNeighbour); not at exactly the bound, where
// it would end empty with neither cursor.
func (t *tx) eventNeighbour(workspaceID string, seq int64, after bool, keep func(*data.Event) bool, maxScan int) (bool, error) {
	batch := 1
	if keep != nil {
		batch = 64
	}
	w := eventWalk{t: t, workspaceID: workspaceID, forward: after, from: seq, batch: batch}
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
