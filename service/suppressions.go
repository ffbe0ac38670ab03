package service

import (
	"context"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/validate"
)

// SuppressionService implements data.SuppressionService: the workspace's do-not-call
// list (conventions §25). Claims read it for every task they hand out, so a number added
// at any time is never dialed again; numbers are stored in E.164, as campaigns' are.
// National numbers are read in the region of none: a list is the workspace's, not a
// caller id's, so they must carry their country code.
type SuppressionService struct{ *base }

var _ data.SuppressionService = (*SuppressionService)(nil)

// AddSuppression implements data.SuppressionService; added is false when the number was
// listed already (the entry returned is the one stored).
func (s *SuppressionService) AddSuppression(ctx context.Context, in data.SuppressionCreate) (*data.Suppression, bool, error) {
	p, err := workspaceCaller(ctx)
	if err != nil {
		return nil, false, err
	}
	numbers, err := validate.Suppressions([]data.SuppressionCreate{in}, "", true)
	if err := checkInput(ctx, err); err != nil {
		return nil, false, err
	}
	var out *data.Suppression
	var added bool
	err = s.store.Update(ctx, func(tx Tx) error {
		e := s.entry(p.WorkspaceID, numbers[0], in.Reason)
		res, err := addSuppressions(tx, []*data.Suppression{e}, "phone_number", s.suppressionBound())
		if err != nil {
			return err
		}
		if added = res.Added == 1; added {
			out = e
			return nil
		}
		out, err = tx.SuppressionByPhone(p.WorkspaceID, numbers[0])
		return err
	})
	return out, added, err
}

func (s *SuppressionService) entry(ws, phone string, reason *string) *data.Suppression {
	return &data.Suppression{ID: s.ids.New(data.PrefixSuppression), WorkspaceID: ws, PhoneNumber: phone, Reason: reason, CreatedAt: s.timeNow()}
}

// ImportSuppressions implements data.SuppressionService: every row or none.
func (s *SuppressionService) ImportSuppressions(ctx context.Context, rows []data.SuppressionCreate) (*data.SuppressionImport, error) {
	p, err := workspaceCaller(ctx)
	if err != nil {
		return nil, err
	}
	numbers, err := validate.Suppressions(rows, "", false)
	if err := checkInput(ctx, err); err != nil {
		return nil, err
	}
	entries := make([]*data.Suppression, len(rows))
	for i, r := range rows {
		entries[i] = s.entry(p.WorkspaceID, numbers[i], r.Reason)
	}
	var out *data.SuppressionImport
	err = s.store.Update(ctx, func(tx Tx) error {
		out, err = addSuppressions(tx, entries, "rows", s.suppressionBound())
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// suppressionBatch bounds the entries one InsertSuppressions is given: a workspace import
// may add MaxSuppressions numbers, and PostgreSQL takes each batch as one statement.
const suppressionBatch = 10_000

// suppressionBound is the most numbers a workspace's list may hold.
func (b *base) suppressionBound() int {
	if n := b.suppressionMax.Load(); n > 0 {
		return int(n)
	}
	return validate.MaxSuppressions
}

// LowerSuppressionBound makes n the suppression list's bound for every service of svc,
// instead of validate.MaxSuppressions, so that a test crosses it without half a million
// rows. Production never calls it.
func (svc *Services) LowerSuppressionBound(n int) { svc.Suppressions.suppressionMax.Store(int64(n)) }

// addSuppressions puts entries (all of one workspace) on its list in tx, the first of
// each number only: a number given again, or listed already, counts as a duplicate and
// the stored entry stays as it was. The list holds at most max numbers: an addition that
// would pass it is refused as a fault of path before anything is written (the count and
// the numbers are read in tx, which concurrent writers of the list cannot change under
// it). Every way into the list (an add, an import of the list, a workspace import) goes
// through here.
func addSuppressions(tx Tx, entries []*data.Suppression, path string, max int) (*data.SuppressionImport, error) {
	out := &data.SuppressionImport{Rows: int64(len(entries))}
	if len(entries) == 0 {
		return out, nil
	}
	list := make([]*data.Suppression, 0, len(entries))
	seen := make(map[string]bool, len(entries))
	for _, e := range entries {
		if !seen[e.PhoneNumber] {
			seen[e.PhoneNumber] = true
			list = append(list, e)
		}
	}
	ws := entries[0].WorkspaceID
	listed, err := tx.CountSuppressions(ws)
	if err != nil {
		return nil, err
	}
	// Only a list that might not fit reads which numbers are new: a refusal writes nothing.
	if listed+len(list) > max {
		fresh, err := unlisted(tx, ws, list)
		if err != nil {
			return nil, err
		}
		if err := validate.SuppressionRoom(path, listed, fresh, max); err != nil {
			return nil, err
		}
	}
	for start := 0; start < len(list); start += suppressionBatch {
		done, err := tx.InsertSuppressions(list[start:min(start+suppressionBatch, len(list))])
		if err != nil {
			return nil, err
		}
		for _, d := range done {
			if d {
				out.Added++
			}
		}
	}
	out.Duplicates = out.Rows - out.Added
	return out, nil
}

// unlisted counts the numbers of list (one entry per number) that ws does not list yet,
// in batches of suppressionBatch.
func unlisted(tx Tx, ws string, list []*data.Suppression) (int, error) {
	n := 0
	phones := make([]string, 0, min(len(list), suppressionBatch))
	for start := 0; start < len(list); start += suppressionBatch {
		phones = phones[:0]
		for _, e := range list[start:min(start+suppressionBatch, len(list))] {
			phones = append(phones, e.PhoneNumber)
		}
		listed, err := tx.SuppressedAmong(ws, phones)
		if err != nil {
			return 0, err
		}
		n += len(phones) - len(listed)
	}
	return n, nil
}

// Suppressions implements data.SuppressionService.
func (s *SuppressionService) Suppressions(ctx context.Context, req data.PageRequest) ([]*data.Suppression, data.Page, error) {
	p, err := workspaceCaller(ctx)
	if err != nil {
		return nil, data.Page{}, err
	}
	var list []*data.Suppression
	var page data.Page
	err = s.store.View(ctx, func(tx Tx) error {
		list, page, err = tx.Suppressions(p.WorkspaceID, req)
		return err
	})
	return list, page, err
}

// DeleteSuppression implements data.SuppressionService, If-Match honoured as by every
// DELETE.
func (s *SuppressionService) DeleteSuppression(ctx context.Context, id string) error {
	p, err := workspaceCaller(ctx)
	if err != nil {
		return err
	}
	if !visibilityOf(p).allAgents() {
		return data.Errorf(data.EFORBIDDEN, "Removing a number from the suppression list lets every agent call it again: a caller limited to some agents may not.")
	}
	return s.store.Update(ctx, func(tx Tx) error {
		e, err := tx.Suppression(id)
		if err != nil {
			return err
		}
		if e == nil || e.WorkspaceID != p.WorkspaceID || !data.ValidID(data.PrefixSuppression, id) {
			return data.NotFound("Suppression")
		}
		if err := data.CheckIfMatch(data.IfMatch(ctx), e); err != nil {
			return err
		}
		return tx.DeleteSuppression(e)
	})
}
