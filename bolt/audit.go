package bolt

import (
	"bytes"
	"context"
	"fmt"
	"slices"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
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
	match := func(e *data.Event) bool {
		return (f.Type == "" || e.Type == f.Type) &&
			(f.Actor == "" || e.Actor.UserID == f.Actor) &&
			(f.From.IsZero() || !e.CreatedAt.Before(f.From.Time)) &&
			(f.To.IsZero() || e.CreatedAt.Before(f.To.Time))
	}
	filter := fmt.Sprintf("%s\x00%s\x00%s\x00%s", f.Type, f.Actor, f.From.Format(data.TimeLayout), f.To.Format(data.TimeLayout))
	var list []*data.Event
	var page data.Page
	err = db.view(func(tx *bbolt.Tx) error {
		events := tx.Bucket(bucketEvents)
		seen := map[string]*data.Event{} // decoded while filtering, reused for the page
		var decodeErr error
		keep := func(id string) bool {
			var e data.Event
			found, err := getJSON(events, []byte(id), &e)
			if err != nil {
				decodeErr = err
			}
			if !found || err != nil || !match(&e) {
				return false
			}
			seen[id] = &e
			return true
		}
		ids, pg, err := db.list(tx, listSpec{index: bucketEventsByWS, scope: ws, filter: filter, keep: keep, maxScan: maxAuditScan}, req)
		if err != nil {
			return err
		}
		if decodeErr != nil {
			return decodeErr
		}
		page = pg
		list = make([]*data.Event, 0, len(ids))
		for _, id := range ids {
			list = append(list, seen[id])
		}
		return nil
	})
	return list, page, err
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
		if got := service.EventHash(&e); got != e.Hash {
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
