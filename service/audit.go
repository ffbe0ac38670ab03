package service

import (
	"cmp"
	"context"
	"fmt"
	"strings"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/validate"
)

// AuditService implements data.AuditService, the workspace's audit log (conventions
// §17), and verifies the audit chain.
type AuditService struct{ *base }

var _ data.AuditService = (*AuditService)(nil)

// MaxAuditScan bounds the events one filtered audit log page may read while skipping
// events that do not pass the filters: a filter matching nothing in a long log still
// answers promptly, with a next_cursor to go on from.
const MaxAuditScan = 5000

// auditMatch is the filter's meaning: an event of the type, caused by the user, created in
// [From, To); a zero field does not filter.
func auditMatch(f data.AuditFilter) func(e *data.Event) bool {
	return func(e *data.Event) bool {
		return (f.Type == "" || e.Type == f.Type) &&
			(f.Actor == "" || e.Actor.UserID == f.Actor) &&
			(f.From.IsZero() || !e.CreatedAt.Before(f.From.Time)) &&
			(f.To.IsZero() || e.CreatedAt.Before(f.To.Time))
	}
}

// ListAuditLog implements data.AuditService: the events the caller may see
// (visibility.go). Without filters, for a caller who sees everything, a page reads
// O(per_page) events; otherwise it reads until the page is full or MaxAuditScan events
// were looked at: with a type or actor filter, events of that type or actor only (their
// indexes), and only the time range and what the caller may see are passed over. A
// caller who may not read every event reads only what eventScopes names: limited to some
// agents, its agents' events and those about no agent of the types it may read; seeing
// every agent, the events of the types it may read. The events of other agents and of
// types it may not read are never looked at, so their number shapes none of its pages.
func (s *AuditService) ListAuditLog(ctx context.Context, f data.AuditFilter, req data.PageRequest) ([]*data.Event, data.Page, error) {
	if err := checkInput(ctx, validate.AuditFilter(f)); err != nil {
		return nil, data.Page{}, err
	}
	ws, err := currentWorkspace(ctx)
	if err != nil {
		return nil, data.Page{}, err
	}
	// The filters, and what the caller may see (visibility.go): a caller who sees
	// everything and filters nothing reads O(per_page) events.
	var filter EventFilter
	v := s.eventVisibility(data.PrincipalFrom(ctx))
	if f.Type != "" && v.noEventOf(f.Type) {
		// Nothing to walk: an empty last page, as a type of no event gives. The walk of
		// that type's events would pass over them all, counted, and past MaxAuditScan
		// answer with a next_cursor: how many there are, told to who may read none. No
		// cursor was ever handed out under this filter (its key holds the visibility that
		// makes it empty), so any cursor is refused, as the walk would refuse it.
		if req.Cursor != "" {
			return nil, data.Page{}, validate.PageCursorRefused()
		}
		return nil, data.Page{PerPage: cmp.Or(req.PerPage, data.DefaultPerPage)}, nil
	}
	if f != (data.AuditFilter{}) || !v.everything() {
		match := auditMatch(f)
		filter = EventFilter{
			Key:     fmt.Sprintf("%s\x00%s\x00%s\x00%s\x00%s", f.Type, f.Actor, f.From.Format(data.TimeLayout), f.To.Format(data.TimeLayout), v.key()),
			Keep:    func(e *data.Event) bool { return match(e) && v.event(e) },
			MaxScan: MaxAuditScan,
			Type:    f.Type,
			Actor:   f.Actor,
			Scopes:  v.eventScopes(f.Type),
			From:    f.From.Time,
			To:      f.To.Time,
		}
	}
	var list []*data.Event
	var page data.Page
	err = s.store.View(ctx, func(tx Tx) error {
		list, page, err = tx.EventPage(ws, filter, req)
		return err
	})
	return v.eventsShown(list), page, err
}

// HashMismatch begins the problem of an event whose hash does not match its content:
// `audit verify` counts them (every event's points at the key, not at edits).
const HashMismatch = "its hash does not match its content"

// VerifyAuditChain recomputes the hash chain of one workspace, or of every workspace when
// workspaceID is "", and returns every fault: an event whose hash does not match its
// content (an edit), an event whose prev_hash does not name its predecessor's hash (an
// edit or a removal before it), an index entry without its event (a removal), and a chain
// head that is not the newest event's hash (newest events removed). It also returns how
// many events it checked.
func (s *AuditService) VerifyAuditChain(ctx context.Context, workspaceID string) ([]data.ChainProblem, int, error) {
	var problems []data.ChainProblem
	checked := 0
	err := s.store.View(ctx, func(tx Tx) error {
		problems, checked = nil, 0
		scopes := []string{workspaceID}
		if workspaceID == "" {
			var err error
			if scopes, err = tx.ChainWorkspaces(); err != nil {
				return err
			}
		}
		for _, ws := range scopes {
			p, n, err := s.verifyChain(tx, ws)
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

// verifyChain walks one workspace's events oldest first, checking each link.
func (s *AuditService) verifyChain(tx Tx, ws string) ([]data.ChainProblem, int, error) {
	var problems []data.ChainProblem
	add := func(id, format string, args ...any) {
		problems = append(problems, data.ChainProblem{WorkspaceID: ws, EventID: id, Problem: fmt.Sprintf(format, args...)})
	}
	prevHash, prevID, n := "", "", 0
	err := tx.ChainEvents(ws, func(id string, e *data.Event, readErr error) error {
		n++
		if readErr != nil {
			add(id, "the stored event cannot be read (%v): it was altered", readErr)
			prevHash, prevID = "", id
			return nil
		}
		if e == nil {
			add(id, "the event is listed in the workspace's index but missing: it was deleted")
			prevHash, prevID = "", id
			return nil
		}
		if !s.linkHolds(e) {
			add(id, HashMismatch+": the event was edited")
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
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	head, err := tx.EventHead(ws)
	if err != nil {
		return nil, 0, err
	}
	if head != prevHash && prevHash != "" {
		add(prevID, "the chain head does not match the hash of the newest event (%s): newer events were removed or it was edited", prevID)
	}
	if n == 0 && head != "" {
		add("", "the workspace has a chain head but no events: its events were removed")
	}
	return problems, n, nil
}

// chainReader refuses a caller who may not read every event of the workspace
// (data.NeedAuditChain): the chain's head and its verification tell how many events there
// are, the newest one's id, hash and time, and which events are faulty, whatever their
// module or agent. Its workspace is the caller's current one.
func chainReader(ctx context.Context) (string, error) {
	ws, err := currentWorkspace(ctx)
	if err != nil {
		return "", err
	}
	if p := data.PrincipalFrom(ctx); p != nil {
		if err := p.Allows(data.NeedAuditChain()); err != nil {
			return "", err
		}
	}
	return ws, nil
}

// AuditHead implements data.AuditService, for a caller who may read every event.
func (s *AuditService) AuditHead(ctx context.Context) (*data.AuditHead, error) {
	ws, err := chainReader(ctx)
	if err != nil {
		return nil, err
	}
	head := &data.AuditHead{WorkspaceID: ws}
	err = s.store.View(ctx, func(tx Tx) error {
		var err error
		if head.Hash, err = tx.EventHead(ws); err != nil {
			return err
		}
		return tx.EventsNewestFirst(ws, func(e *data.Event) (bool, error) {
			head.EventID, head.CreatedAt = e.ID, &e.CreatedAt
			return false, nil
		})
	})
	return head, err
}

// RekeyChains relinks, under the instance's key, the chains of workspaces that hold links
// written before the chain was keyed (plain SHA-256): every workspace, or one. A chain
// whose links do not all hold, in the form they were written in, is refused rather than
// laundered. It returns how many events it relinked. Run once after upgrading, on a
// stopped server (voiceapi audit rekey).
func (s *AuditService) RekeyChains(ctx context.Context, workspaceID string) (int, error) {
	relinked := 0
	err := s.store.Update(ctx, func(tx Tx) error {
		relinked = 0
		scopes := []string{workspaceID}
		if workspaceID == "" {
			var err error
			if scopes, err = tx.ChainWorkspaces(); err != nil {
				return err
			}
		}
		for _, ws := range scopes {
			n, err := s.rekeyChain(tx, ws)
			if err != nil {
				return err
			}
			relinked += n
		}
		return nil
	})
	return relinked, err
}

// rekeyChain relinks one workspace's chain if it holds any unkeyed link.
func (s *AuditService) rekeyChain(tx Tx, ws string) (int, error) {
	var chain []*data.Event
	legacy, prevHash := false, ""
	err := tx.ChainEvents(ws, func(id string, e *data.Event, readErr error) error {
		if readErr != nil || e == nil || e.PrevHash != prevHash {
			return fmt.Errorf("workspace %s: event %s: the chain is broken there; run voiceapi audit verify", ws, id)
		}
		keyed := strings.HasPrefix(e.Hash, keyedHashPrefix)
		if keyed && !s.linkHolds(e) || !keyed && e.Hash != LegacyEventHash(e) {
			return fmt.Errorf("workspace %s: event %s: %s; run voiceapi audit verify", ws, id, HashMismatch)
		}
		legacy = legacy || !keyed
		prevHash = e.Hash
		chain = append(chain, e)
		return nil
	})
	if err != nil || !legacy {
		return 0, err
	}
	prev := ""
	for _, e := range chain {
		e.PrevHash = prev
		e.Hash = s.chainHash(e)
		if err := tx.RelinkEvent(e.ID, e.PrevHash, e.Hash); err != nil {
			return 0, err
		}
		prev = e.Hash
	}
	return len(chain), tx.SetEventHead(ws, prev)
}

// VerifyAuditLog implements data.AuditService: VerifyAuditChain for the caller's workspace,
// for a caller who may read every event.
func (s *AuditService) VerifyAuditLog(ctx context.Context) (*data.AuditVerification, error) {
	ws, err := chainReader(ctx)
	if err != nil {
		return nil, err
	}
	problems, checked, err := s.VerifyAuditChain(ctx, ws)
	if err != nil {
		return nil, err
	}
	if problems == nil {
		problems = []data.ChainProblem{}
	}
	return &data.AuditVerification{WorkspaceID: ws, Checked: checked, Intact: len(problems) == 0, Problems: problems}, nil
}
