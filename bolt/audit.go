package bolt

import (
	"bytes"
	"context"
	"fmt"
	"slices"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/validate"
)

var _ data.AuditService = (*DB)(nil)

// maxAuditScan bounds the events one audit log page may read while skipping events that do
// not pass the filters: a filter matching nothing in a long log still answers promptly,
// with a next_cursor to go on from.
const maxAuditScan = 5000

// ListAuditLog implements data.AuditService. Without filters a page reads O(per_page)
// keys; with filters it reads until the page is full or maxAuditScan events were looked at.
func (db *DB) ListAuditLog(ctx context.Context, f data.AuditFilter, req data.PageRequest) ([]*data.Event, data.Page, error) {
	if err := validate.AuditFilter(f); err != nil {
		return nil, data.Page{}, err
	}
	ws, err := currentWorkspace(ctx)
	if err != nil {
		return nil, data.Page{}, err
	}
	keep := func(e *data.Event) bool {
		return (f.Type == "" || e.Type == f.Type) &&
			(f.Actor == "" || e.Actor.UserID == f.Actor) &&
			(f.From.IsZero() || !e.CreatedAt.Before(f.From.Time)) &&
			(f.To.IsZero() || e.CreatedAt.Before(f.To.Time))
	}
	// The cursor is bound to the filters as well, so one taken under other filters is
	// refused rather than silently reinterpreted.
	binding := fmt.Sprintf("%s\x00%s\x00%s\x00%s\x00%s\x00%s", bucketEventsByWS, ws, f.Type, f.Actor, f.From.Format(data.TimeLayout), f.To.Format(data.TimeLayout))
	var list []*data.Event
	var page data.Page
	err = db.view(func(tx *bbolt.Tx) error {
		var err error
		list, page, err = db.filteredPage(tx, ws, binding, req, keep)
		return err
	})
	return list, page, err
}

// filteredPage is page() over events_by_ws with a predicate: one newest-first page of the
// workspace's events that keep accepts.
func (db *DB) filteredPage(tx *bbolt.Tx, ws, binding string, req data.PageRequest, keep func(*data.Event) bool) ([]*data.Event, data.Page, error) {
	perPage := req.PerPage
	if perPage == 0 {
		perPage = DefaultPerPage
	}
	meta := data.Page{PerPage: perPage}
	prefix := indexKey(ws, "")
	dir := byte(older)
	var from []byte
	if req.Cursor != "" {
		d, id, ok := db.decodeCursor(req.Cursor, binding)
		if !ok {
			return nil, meta, data.FieldError("cursor", "The cursor is malformed, was tampered with, or belongs to another list.")
		}
		dir, from = d, indexKey(ws, id)
	}
	events := tx.Bucket(bucketEvents)
	c := tx.Bucket(bucketEventsByWS).Cursor()
	step := c.Prev
	var k []byte
	switch {
	case dir == newer:
		step = c.Next
		k, _ = c.Seek(from)
		if k != nil && bytes.Equal(k, from) {
			k, _ = c.Next()
		}
	case from == nil:
		k = seekLastWithPrefix(c, prefix)
	default:
		k = seekBefore(c, from)
	}
	var list []*data.Event
	var lastSeen string // the last id looked at, where a cut-short walk resumes
	more, scanned := false, 0
	for ; k != nil && bytes.HasPrefix(k, prefix); k, _ = step() {
		id := string(k[len(prefix):])
		if len(list) == perPage || scanned == maxAuditScan {
			more = true
			break
		}
		scanned++
		lastSeen = id
		var e data.Event
		found, err := getJSON(events, []byte(id), &e)
		if err != nil {
			return nil, meta, err
		}
		if found && keep(&e) {
			list = append(list, &e)
		}
	}
	if dir == newer {
		for i, j := 0, len(list)-1; i < j; i, j = i+1, j-1 {
			list[i], list[j] = list[j], list[i]
		}
	}
	// Cursors name the walk's edges: the far edge is the last id looked at (so a cut-short
	// scan resumes past what it skipped), the near edge is where the walk started.
	far := lastSeen
	near := ""
	if from != nil {
		near = string(from[len(prefix):])
	}
	if dir == older {
		if more && far != "" {
			meta.NextCursor = db.encodeCursor(older, binding, far)
		}
		if near != "" {
			meta.PrevCursor = db.encodeCursor(newer, binding, near)
		}
	} else {
		if more && far != "" {
			meta.PrevCursor = db.encodeCursor(newer, binding, far)
		}
		if near != "" {
			meta.NextCursor = db.encodeCursor(older, binding, near)
		}
	}
	return list, meta, nil
}

// VerifyAuditChain recomputes the hash chain of one workspace, or of every workspace when
// workspaceID is "", and returns every fault: an event whose hash does not match its
// content (an edit), an event whose prev_hash does not name its predecessor's hash (an
// edit or a removal before it), an index entry without its event (a removal), and a chain
// head that is not the newest event's hash (newest events removed). It also returns how
// many events it checked.
func (db *DB) VerifyAuditChain(ctx context.Context, workspaceID string) ([]data.ChainProblem, int, error) {
	var problems []data.ChainProblem
	checked := 0
	err := db.view(func(tx *bbolt.Tx) error {
		scopes := map[string]bool{}
		if workspaceID != "" {
			scopes[workspaceID] = true
		} else {
			// Every workspace with a chain: its head, or events still indexed under it.
			tx.Bucket(bucketEventHeads).ForEach(func(k, _ []byte) error { scopes[string(k)] = true; return nil })
			tx.Bucket(bucketEventsByWS).ForEach(func(k, _ []byte) error {
				if i := bytes.IndexByte(k, 0); i > 0 {
					scopes[string(k[:i])] = true
				}
				return nil
			})
		}
		for _, ws := range sortedKeys(scopes) {
			p, n, err := verifyChain(tx, ws)
			if err != nil {
				return err
			}
			problems = append(problems, p...)
			checked += n
		}
		return nil
	})
	return problems, checked, err
}

func verifyChain(tx *bbolt.Tx, ws string) ([]data.ChainProblem, int, error) {
	var problems []data.ChainProblem
	add := func(id, format string, args ...any) {
		problems = append(problems, data.ChainProblem{WorkspaceID: ws, EventID: id, Problem: fmt.Sprintf(format, args...)})
	}
	prevHash, prevID, n := "", "", 0
	for _, id := range scopeIDs(tx.Bucket(bucketEventsByWS), ws) {
		n++
		var e data.Event
		found, err := getJSON(tx.Bucket(bucketEvents), []byte(id), &e)
		if err != nil {
			add(id, "the stored event cannot be read (%v): it was altered", err)
			prevHash, prevID = "", id
			continue
		}
		if !found {
			add(id, "the event is listed in the workspace's index but missing: it was deleted")
			prevHash, prevID = "", id
			continue
		}
		if got := EventHash(&e); got != e.Hash {
			add(id, "its hash does not match its content: the event was edited")
		}
		if e.ID != id || e.WorkspaceID != ws {
			add(id, "it is stored under another id or workspace (%s, %s): the event was edited", e.ID, e.WorkspaceID)
		}
		if prevID != "" && prevHash != "" && e.PrevHash != prevHash {
			add(id, "its prev_hash does not match the hash of the event before it (%s): an event between them was removed or %s was edited", prevID, prevID)
		} else if prevID == "" && e.PrevHash != "" {
			add(id, "it is the oldest event but has a prev_hash: older events were removed")
		}
		prevHash, prevID = e.Hash, id
	}
	head := string(tx.Bucket(bucketEventHeads).Get([]byte(ws)))
	if head != prevHash && prevHash != "" {
		add(prevID, "the chain head does not match the hash of the newest event (%s): newer events were removed or it was edited", prevID)
	}
	if n == 0 && head != "" {
		add("", "the workspace has a chain head but no events: its events were removed")
	}
	return problems, n, nil
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
