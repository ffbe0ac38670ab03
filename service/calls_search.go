package service

import (
	"context"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/fulltext"
	"github.com/voiceapi/voiceapi/validate"
)

// indexCall hands storage the search terms of next, in the transaction that stores it,
// with those of old, the call as it was stored before (nil for a new call): the index is
// never behind the calls. Every path that stores a call's text calls it.
func indexCall(tx Tx, old, next *data.Call) error {
	var was map[string]int
	if old != nil {
		was = fulltext.CallTerms(old)
	}
	return tx.SetCallTerms(next.WorkspaceID, next.ID, was, fulltext.CallTerms(next))
}

// deleteCall deletes c with its postings, and the conversation that became c, if any,
// with what its Idempotency-Keys kept (deleteConversation): an ended conversation keeps
// no more than its call (docs/conversations.md, "After the end"). It reports whether a
// conversation went with it. Every path that deletes a call calls it (a workspace's
// delete takes its conversations with its calls).
func deleteCall(tx Tx, c *data.Call) (conversation bool, err error) {
	if err := tx.DeleteCall(c.ID, fulltext.CallTerms(c)); err != nil {
		return false, err
	}
	if c.Direction != data.DirectionWeb { // only a conversation's call is web and has one
		return false, nil
	}
	id, err := tx.ConversationOfCall(c.ID)
	if err != nil || id == "" {
		return false, err
	}
	return true, deleteConversation(tx, id)
}

// SearchCalls lists the calls holding every word of s.Terms, with the filters of
// ListCalls, each hit with its score and a snippet around the first match. Errors:
// validation_failed (q, sort, cursor and the filters' faults, gathered in the context).
func (s *CallService) SearchCalls(ctx context.Context, f data.CallFilter, q data.CallSearch, req data.PageRequest) ([]*data.CallHit, data.Page, error) {
	p, err := workspaceCaller(ctx)
	if err != nil {
		return nil, data.Page{}, err
	}
	if err := checkInput(ctx, validate.CallFilterRange(f)); err != nil {
		return nil, data.Page{PerPage: req.PerPage}, err
	}
	var hits []*data.CallHit
	var page data.Page
	err = s.store.View(ctx, func(tx Tx) error {
		var err error
		hits, page, err = tx.SearchCalls(p.WorkspaceID, visibilityOf(p).agents(f.AgentID), f, q, req)
		return err
	})
	if err != nil {
		return nil, page, err
	}
	for _, h := range hits {
		field, text, spans, ok := fulltext.Snippet(&h.Call, q.Terms)
		if ok {
			h.Search.Field, h.Search.Snippet, h.Search.Highlights = field, text, spans
		} else {
			h.Search.Highlights = []data.Span{}
		}
	}
	return hits, page, nil
}

// ExportBatch is how many calls an export reads per read transaction: the export holds
// at most one batch in memory, whatever the number of calls it streams.
const ExportBatch = 64

// ExportCalls calls emit with every call x selects, newest first, reading ExportBatch
// calls per read transaction, so memory stays bounded and writers are never held up by
// one long read. It returns the cursor that resumes after the last whole batch emitted
// (after the last call, when it stops at x.Limit) when it stops before the end (x.Limit
// reached, emit or storage failing, ctx done), nil when every call was emitted. Faults of the input come back before the first emit. Errors:
// validation_failed (the filters, q, the cursor).
func (s *CallService) ExportCalls(ctx context.Context, x data.CallExport, emit func(*data.Call) error) (*string, error) {
	p, err := workspaceCaller(ctx)
	if err != nil {
		return nil, err
	}
	if err := checkInput(ctx, validate.CallFilterRange(x.Filter)); err != nil {
		return nil, err
	}
	x.Search.Sort = data.SortCreatedAt
	agents := visibilityOf(p).agents(x.Filter.AgentID)
	var resume *string // where the calls emitted so far end
	if x.Cursor != "" {
		resume = &x.Cursor
	}
	req := data.PageRequest{Cursor: x.Cursor}
	for n := 0; ; {
		if x.Limit > 0 && n == x.Limit {
			return resume, nil
		}
		req.PerPage = ExportBatch
		if x.Limit > 0 {
			req.PerPage = min(ExportBatch, x.Limit-n) // a batch never overshoots the limit
		}
		var batch []*data.Call
		var page data.Page
		err := s.store.View(ctx, func(tx Tx) error {
			var err error
			if len(x.Search.Terms) == 0 {
				batch, page, err = tx.Calls(p.WorkspaceID, agents, x.Filter, req)
				return err
			}
			var hits []*data.CallHit
			hits, page, err = tx.SearchCalls(p.WorkspaceID, agents, x.Filter, x.Search, req)
			batch = make([]*data.Call, len(hits))
			for i, h := range hits {
				batch[i] = &h.Call
			}
			return err
		})
		if err != nil {
			return resume, err
		}
		for _, c := range batch {
			if err := emit(c); err != nil {
				return resume, err
			}
		}
		n += len(batch)
		if page.NextCursor == nil {
			return nil, nil
		}
		resume, req.Cursor = page.NextCursor, *page.NextCursor
		if err := ctx.Err(); err != nil {
			return resume, err
		}
	}
}
