package service

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/voiceapi/voiceapi/data"
)

// createdEvents are the events whose data is the record a create answers with: a create
// that records one keeps its whole response with its claim, so a retry after a crash is
// answered as the first request would have been.
var createdEvents = map[string]bool{
	data.EventAgentCreated:         true,
	data.EventKnowledgeBaseCreated: true,
	data.EventNumberCreated:        true,
	data.EventCallRegistered:       true,
	data.EventWorkspaceUserAdded:   true,
}

// claimingStore writes a request's Idempotency-Key claim in the same transaction as the
// request's first change (see data.IdempotencyClaim). The server overwrites the claim with
// the full response once the request succeeds; only a crash in between leaves the claim.
type claimingStore struct {
	Store
	b *base
}

// Update implements Store. It is also where every write of a request re-checks the
// caller's access, first, so that a refused write commits nothing (access_recheck.go),
// and where an update that found nothing to write (errNothingToWrite) is rolled back
// rather than committed, and answered as a success.
func (s claimingStore) Update(ctx context.Context, fn func(tx Tx) error) error {
	if err := s.update(ctx, fn); !errors.Is(err, errNothingToWrite) {
		return err
	}
	return nil
}

// update is Update but for errNothingToWrite, which it returns as fn did.
func (s claimingStore) update(ctx context.Context, fn func(tx Tx) error) error {
	p := accessToRecheck(ctx)
	c := data.IdempotencyClaimFrom(ctx)
	if p == nil && c == nil {
		return s.Store.Update(ctx, fn)
	}
	return s.Store.Update(ctx, func(tx Tx) error {
		if p != nil {
			if err := s.b.recheckAccess(tx, p); err != nil {
				return err
			}
		}
		if c == nil {
			return fn(tx)
		}
		prev, err := tx.IdempotentResponse(c.TokenID, c.Key)
		if err != nil {
			return err
		}
		if prev != nil && prev.ClaimID != c.ID {
			// Another request with this key (sent to another replica at the same time)
			// committed first: this one's change must not happen too.
			return data.Errorf(data.ECONFLICT, "Another request with this Idempotency-Key was carried out at the same time; this one changed nothing. Retry it to get that request's response.")
		}
		w := &eventWatcher{Tx: tx}
		if err := fn(w); err != nil {
			return err
		}
		if prev != nil && (prev.Status != 0 || c.Answer() == nil) {
			return nil // an earlier change of this request holds the claim already
		}
		now, err := tx.IdempotentResponse(c.TokenID, c.Key)
		if err != nil || now != nil && (prev == nil || now.Status != 0) {
			return err // fn kept the full response itself
		}
		// The first change, or a later one that knows the answer the claim lacked.
		r := s.b.claimResponse(c, w.created)
		r.WorkspaceID = actingWorkspace(ctx)
		return tx.PutIdempotentResponse(c.TokenID, c.Key, r)
	})
}

// actingWorkspace is the workspace ctx's request acts in, kept with its answer
// (data.IdempotentResponse.WorkspaceID); "" without a caller.
func actingWorkspace(ctx context.Context) string {
	if p := data.PrincipalFrom(ctx); p != nil {
		return p.WorkspaceID
	}
	return ""
}

// answerClaim keeps what a create (or an action answering a record, as adding sources
// does) answers with its Idempotency-Key's claim, when the request has one: called in the
// write transaction, so a retry after a lost answer is answered in full, the token or
// secret shown once included (sealed at rest, as every kept body).
func answerClaim(ctx context.Context, record any, extra map[string]any) {
	if c := data.IdempotencyClaimFrom(ctx); c != nil {
		c.SetAnswer(record, extra)
	}
}

// answerClaimAction is answerClaim for an answer {"data": v} that is not one record and
// carries no ETag (a webhook test, replay or delivery retry: 202; a call's start: 201).
func answerClaimAction(ctx context.Context, v any) {
	if c := data.IdempotencyClaimFrom(ctx); c != nil {
		c.SetActionAnswer(v)
	}
}

// claimResponse is what a claim keeps: the response of a request whose answer is known
// (status, ETag and the body the server writes, sealed as every kept body), from the
// answer the create set (answerClaim) or else from the created record's event; otherwise
// only the request's hash with status 0, which a retry reports as carried out
// (server/middleware_idempotency.go). Either carries the agent the request acted on, so a
// retry after a crash is checked as a replay of the full response is.
func (b *base) claimResponse(c *data.IdempotencyClaim, created *data.Event) *data.IdempotentResponse {
	r := &data.IdempotentResponse{RequestHash: c.RequestHash, CreatedAt: b.timeNow(), ClaimID: c.ID, AgentID: c.AgentID(),
		ConversationID: c.ConversationID(), StartedConversationID: c.StartedConversationID()}
	if c.Status == 0 {
		return r
	}
	var raw []byte
	var extra map[string]any
	etag := true
	switch a := c.Answer(); {
	case a != nil:
		var err error
		if raw, err = json.Marshal(a.Record); err != nil {
			return r
		}
		extra, etag = a.Extra, !a.NoETag
	case created != nil:
		raw = created.Data
	default:
		return r
	}
	body, header, err := b.keptBody(raw, extra, etag)
	if err != nil {
		return r // keep the claim without the body rather than fail the change
	}
	r.Status, r.Body, r.Header = c.Status, body, header
	return r
}

// keptBody is what a kept response holds of an answer whose record is raw: the body the
// server writes ({"data": raw} and extra's members), sealed as every kept body is, and
// its headers (with raw's ETag when etag).
func (b *base) keptBody(raw []byte, extra map[string]any, etag bool) ([]byte, map[string]string, error) {
	body, err := data.RecordBody(raw, extra)
	if err != nil {
		return nil, nil, err
	}
	sealed, err := b.sealer.Seal(string(body))
	if err != nil {
		return nil, nil, err
	}
	header := map[string]string{"Content-Type": "application/json"}
	if etag {
		header["ETag"] = data.ETagOfBytes(raw)
	}
	return []byte(sealed), header, nil
}

// eventWatcher is a transaction that notes the first created-record event appended in it.
type eventWatcher struct {
	Tx
	created *data.Event
}

// AppendEvent implements EventTx.
func (w *eventWatcher) AppendEvent(e *data.Event) error {
	if w.created == nil && createdEvents[e.Type] {
		w.created = e
	}
	return w.Tx.AppendEvent(e)
}
