package bolt

import (
	"bytes"
	"slices"

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
