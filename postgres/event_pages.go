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

func (w *eventWalk) fill() error {
	n := w.batch
	if n <= 0 {
		n = 64
	}
	op, order := "<", "DESC"
	if w.forward {
		op, order = ">", "ASC"
	}
	rows, err := w.t.query(fmt.Sprintf(`SELECT %s FROM events WHERE workspace_id = $1 AND seq %s $2 ORDER BY seq %s LIMIT %d`,
		eventCols, op, order, n), w.workspaceID, w.from)
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

	dir, from, hasFrom, fromKey := byte(older), int64(maxSeq), false, ""
	if req.Cursor != "" {
		d, key, ok := t.db.decodeCursor(req.Cursor, bind)
		seq, err := strconv.ParseInt(key, 10, 64)
		switch {
		case ok && key == "" && d == newer:
			seq = 0
		case !ok || err != nil || seq <= 0 || seqKey(seq) != key:
			return nil, meta, data.FieldError("cursor", "The cursor is malformed, was tampered with, or belongs to another list.")
		}
		dir, from, hasFrom, fromKey = d, seq, true, key
	}
	batch := perPage + 1
	if f.Keep != nil {
		batch = 256
		if f.MaxScan > 0 {
			batch = min(batch, f.MaxScan+1)
		}
	}
	w := eventWalk{t: t, workspaceID: workspaceID, forward: dir == newer, from: from, batch: batch}
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
	if dir == newer {
		reverse(list)
		reverse(seqs)
	}
	// Onward, in the walk's direction: resume past the last event looked at.
	if more && lastSeen >= 0 {
		if dir == older {
			meta.NextCursor = t.db.encodeCursor(older, bind, seqKey(lastSeen))
		} else {
			meta.PrevCursor = t.db.encodeCursor(newer, bind, seqKey(lastSeen))
		}
	}
	// Back, toward where the walk started: from the page's edge event, so that following
	// next_cursor then prev_cursor returns the same page.
	var err error
	var found bool
	switch {
	case dir == older && len(list) > 0:
		if hasFrom {
			if found, err = t.eventNeighbour(workspaceID, seqs[0], true, keep, f.MaxScan); found {
				meta.PrevCursor = t.db.encodeCursor(newer, bind, seqKey(seqs[0]))
			}
		}
	case dir == newer && len(list) > 0:
		if found, err = t.eventNeighbour(workspaceID, seqs[len(seqs)-1], false, keep, f.MaxScan); found {
			meta.NextCursor = t.db.encodeCursor(older, bind, seqKey(seqs[len(seqs)-1]))
		}
	case cut && dir == older:
		meta.PrevCursor = t.db.encodeCursor(newer, bind, fromKey)
	case cut && dir == newer:
		meta.NextCursor = t.db.encodeCursor(older, bind, fromKey)
	case dir == older && hasFrom:
		// Everything past the cursor was deleted: lead back to the oldest page, which a
		// "newer than the empty key" cursor reads.
		if found, err = t.eventNeighbour(workspaceID, maxSeq, false, nil, 0); found {
			meta.PrevCursor = t.db.encodeCursor(newer, bind, "")
		}
	}
	if err != nil {
		return nil, meta, err
	}
	return list, meta, nil
}

// eventNeighbour reports whether the workspace holds a kept event after (newer) or before
// seq. With a scan bound it answers true once the bound is reached: a cursor that may lead
// to an empty page is better than one missing.
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
		if n++; maxScan > 0 && n >= maxScan {
			return true, nil
		}
	}
}
