package bolt

import (
	"bytes"
	"slices"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// Event implements service.EventReadTx.
func (t tx) Event(id string) (*data.Event, error) {
	return readEvent(t.b, id)
}

// EventPage implements service.EventReadTx. Each event looked at is decoded once: the
// filter reads it and the page reuses it. An index entry without its event is passed over.
// A type or actor filter walks that facet's entries only (audit_index.go).
func (t tx) EventPage(workspaceID string, f service.EventFilter, req data.PageRequest) ([]*data.Event, data.Page, error) {
	seen := map[string]*data.Event{}
	var readErr error
	keep := func(id string) bool {
		e, err := t.Event(id)
		if err != nil {
			readErr = err
		}
		if e == nil || f.Keep != nil && !f.Keep(e) {
			return false
		}
		seen[id] = e
		return true
	}
	spec := listSpec{index: bucketEventsByWS, scope: workspaceID, filter: f.Key, keep: keep, maxScan: f.MaxScan}
	eventFacetWalk(&spec, workspaceID, f)
	if lo, hi, none := eventWindow(t.b, workspaceID, f.From, f.To); none {
		spec.lo = noEventID
	} else {
		spec.lo, spec.hi = lo, hi
	}
	ids, page, err := t.db.list(t.b, spec, req)
	if err == nil {
		err = readErr
	}
	if err != nil {
		return nil, page, err
	}
	list := make([]*data.Event, 0, len(ids))
	for _, id := range ids {
		list = append(list, seen[id])
	}
	return list, page, nil
}

// EventsNewestFirst implements service.EventReadTx. An index entry without its event is
// passed over.
func (t tx) EventsNewestFirst(workspaceID string, fn func(*data.Event) (bool, error)) error {
	prefix := indexKey(workspaceID, "")
	c := t.b.Bucket(bucketEventsByWS).Cursor()
	for k, _ := seekLastWithPrefix(c, prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Prev() {
		e, err := t.Event(string(k[len(prefix):]))
		if err != nil {
			return err
		}
		if e == nil {
			continue
		}
		if more, err := fn(e); err != nil || !more {
			return err
		}
	}
	return nil
}

// EventsBetween implements service.EventReadTx: the walk of EventsNewestFirst, between
// the ids the window's chain times bound (eventWindow).
func (t tx) EventsBetween(workspaceID string, from, to time.Time, fn func(*data.Event) (bool, error)) error {
	lo, hi, none := eventWindow(t.b, workspaceID, from, to)
	if none {
		return nil
	}
	prefix := indexKey(workspaceID, "")
	c := t.b.Bucket(bucketEventsByWS).Cursor()
	var k []byte
	if hi != "" {
		k, _ = seekBefore(c, indexKey(workspaceID, hi))
	} else {
		k, _ = seekLastWithPrefix(c, prefix)
	}
	for ; k != nil && bytes.HasPrefix(k, prefix) && string(k[len(prefix):]) >= lo; k, _ = c.Prev() {
		e, err := t.Event(string(k[len(prefix):]))
		if err != nil {
			return err
		}
		if e == nil || !from.IsZero() && e.CreatedAt.Before(from) || !to.IsZero() && !e.CreatedAt.Before(to) {
			continue
		}
		if more, err := fn(e); err != nil || !more {
			return err
		}
	}
	return nil
}

// noEventID is past every event id: a walk bounded below by it reads nothing.
const noEventID = "\xff"

// ChainWorkspaces implements service.EventReadTx.
func (t tx) ChainWorkspaces() ([]string, error) {
	scopes := map[string]bool{}
	t.b.Bucket(bucketEventHeads).ForEach(func(k, _ []byte) error { scopes[string(k)] = true; return nil })
	t.b.Bucket(bucketEventsByWS).ForEach(func(k, _ []byte) error {
		if i := bytes.IndexByte(k, 0); i > 0 {
			scopes[string(k[:i])] = true
		}
		return nil
	})
	out := make([]string, 0, len(scopes))
	for k := range scopes {
		out = append(out, k)
	}
	slices.Sort(out)
	return out, nil
}

// ChainEvents implements service.EventReadTx.
func (t tx) ChainEvents(workspaceID string, fn func(id string, e *data.Event, readErr error) error) error {
	for _, id := range scopeIDs(t.b.Bucket(bucketEventsByWS), workspaceID) {
		e, err := t.Event(id)
		if err := fn(id, e, err); err != nil {
			return err
		}
	}
	return nil
}
