package postgres

import (
	"time"

	"github.com/voiceapi/voiceapi/data"
)

// eventWindowSQL finds the seqs that bound a time window of a workspace's events
// (migration 0047): the first event whose chain_time reaches $2 (from), and the first
// whose chain_time reaches $3 (to) plus the workspace's lag, through events_by_chain_time.
// A NULL bound finds none. No row: the workspace has no chain.
const eventWindowSQL = `SELECT
	(SELECT seq FROM events WHERE workspace_id = $1 AND chain_time >= $2::timestamptz
		ORDER BY workspace_id, chain_time, seq LIMIT 1),
	(SELECT seq FROM events WHERE workspace_id = $1 AND chain_time >= $3::timestamptz + h.lag
		ORDER BY workspace_id, chain_time, seq LIMIT 1)
FROM event_heads h WHERE h.workspace_id = $1`

// eventWindow returns the seqs between which the workspace's events created in [from, to)
// lie (a zero bound is none): lo inclusive, hi exclusive, 0 unbounded; none reports that
// no event can be in it. An event created at or after from has a chain_time at or after
// it; one created before to has a chain_time before to plus the lag, which bounds how far
// any created_at fell behind the chain_time before it.
func (t *tx) eventWindow(ws string, from, to time.Time) (lo, hi int64, none bool, err error) {
	if from.IsZero() && to.IsZero() {
		return 0, 0, false, nil
	}
	var fromArg, toArg any
	if !from.IsZero() {
		fromArg = from
	}
	if !to.IsZero() {
		toArg = to
	}
	var loSeq, hiSeq *int64
	if err := t.queryRow(eventWindowSQL, ws, fromArg, toArg).Scan(&loSeq, &hiSeq); err != nil {
		if err = noRows(err); err == nil {
			return 0, 0, true, nil // no chain: no event
		}
		return 0, 0, false, err
	}
	if !from.IsZero() {
		if loSeq == nil {
			return 0, 0, true, nil
		}
		lo = *loSeq
	}
	if hiSeq != nil {
		hi = *hiSeq
	}
	return lo, hi, hi != 0 && lo >= hi, nil
}

// windowed narrows a walk's facet to the window's seqs; none makes it read nothing.
func (f *eventFacet) windowed(lo, hi int64, none bool) {
	f.lo, f.hi = lo, hi
	if none {
		f.lo = maxSeq
	}
}

// EventsBetween implements service.EventReadTx: the walk of EventsNewestFirst between the
// window's seqs (eventWindow).
func (t *tx) EventsBetween(workspaceID string, from, to time.Time, fn func(e *data.Event) (bool, error)) error {
	lo, hi, none, err := t.eventWindow(workspaceID, from, to)
	if err != nil || none {
		return err
	}
	w := eventWalk{t: t, workspaceID: workspaceID, from: maxSeq, batch: 256}
	w.facet.windowed(lo, hi, false)
	for {
		e, ok, err := w.next()
		if err != nil || !ok {
			return err
		}
		if !from.IsZero() && e.CreatedAt.Before(from) || !to.IsZero() && !e.CreatedAt.Before(to) {
			continue
		}
		if more, err := fn(e); err != nil || !more {
			return err
		}
	}
}
