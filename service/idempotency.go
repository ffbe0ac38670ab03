package service

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/voiceapi/voiceapi/data"
)

// IdempotencyTTL is how long a completed response is replayed (conventions §17).
const IdempotencyTTL = 24 * time.Hour

// IdempotencyService keeps successful responses for replay under an Idempotency-Key.
type IdempotencyService struct{ *base }

var _ data.IdempotencyStore = (*IdempotencyService)(nil)

// IdempotentResponse returns the kept response for (tokenID, key), or nil when there is
// none or it has expired.
func (s *IdempotencyService) IdempotentResponse(ctx context.Context, tokenID int64, key string) (*data.IdempotentResponse, error) {
	var r *data.IdempotentResponse
	err := s.store.View(ctx, func(tx Tx) error {
		var err error
		r, err = tx.IdempotentResponse(tokenID, key)
		return err
	})
	if err != nil || r == nil || s.now().Sub(r.CreatedAt.Time) > IdempotencyTTL {
		return nil, err
	}
	body, err := s.sealer.Open(string(r.Body))
	if err != nil {
		return nil, fmt.Errorf("opening a kept response: %w", err)
	}
	r.Body = []byte(body)
	return r, nil
}

// SaveIdempotentResponse keeps a successful response for replay. The body is sealed: it
// may hold a token shown once (API key create), which must not rest in plaintext (§5).
func (s *IdempotencyService) SaveIdempotentResponse(ctx context.Context, tokenID int64, key string, r *data.IdempotentResponse) error {
	r.CreatedAt = s.timeNow()
	sealed, err := s.sealer.Seal(string(r.Body))
	if err != nil {
		return err
	}
	stored := *r
	stored.Body, stored.WorkspaceID = []byte(sealed), actingWorkspace(ctx)
	// The change this response answers has committed: keeping it is bookkeeping.
	err = s.store.Update(withoutAccessRecheck(ctx), func(tx Tx) error {
		if there, err := tokenThere(ctx, tx); err != nil || !there {
			// Failed, so that the claim is not written again either: the token's delete
			// (or its workspace's) deleted it.
			return cmp.Or(err, errNothingToKeep)
		}
		if open, err := conversationOpen(tx, r.ConversationID); err != nil || !open {
			// Failed, so that the claim is not written again either: the end deleted it.
			return cmp.Or(err, errNothingToKeep)
		}
		if there, err := agentThere(ctx, tx, r); err != nil || !there {
			// Failed, so that the claim stays as the agent's delete left it.
			return cmp.Or(err, errNothingToKeep)
		}
		return tx.PutIdempotentResponse(tokenID, key, &stored)
	})
	if errors.Is(err, errNothingToKeep) {
		return nil
	}
	return err
}

// errNothingToKeep stops the keeping of an answer that must not be kept: a message's
// whose conversation ended after the turn, one whose agent was deleted after its change,
// or any whose token, or its workspace, was deleted after the change.
var errNothingToKeep = errors.New("nothing to keep")

// tokenThere reports whether ctx's token, and the workspace it is bound to, still
// exist, read in tx. A token's delete takes what it kept (deleteTokensKeptAnswers), and
// a workspace's the tokens bound to it with what they kept, in its transaction: an
// answer kept after it (the request's change committed before the delete, its answer
// is kept after) would stay a day under a token no one holds. On PostgreSQL a
// workspace's delete and the keeping both hold that workspace's lock (the caller's,
// lockHint), as does a key's revoke (its event's), so the keeping reads after the
// delete committed, or the delete finds the answer kept; a logout, which records
// nothing, conflicts with the keeping's read of the token (SERIALIZABLE), one of them
// running again. True without a caller.
func tokenThere(ctx context.Context, tx Tx) (bool, error) {
	p := data.PrincipalFrom(ctx)
	if p == nil || p.CurrentWorkspaceID == "" {
		return true, nil
	}
	if there, err := tx.WorkspaceExists(p.CurrentWorkspaceID); err != nil || !there {
		return false, err
	}
	if k, err := tx.APIKey(p.TokenID); err != nil || k == nil {
		return false, err
	}
	return memberThere(tx, p)
}

// memberThere reports whether the caller of a request acting in a workspace other than
// its token's (a path's {workspace_id}) is still a member there, and the workspace still
// exists: that workspace's delete, and the member's removal from it, take the answers
// kept for requests made in it (deleteWorkspace, RemoveWorkspaceUser), and one kept
// after would stay the day. Both delete the membership the keeping reads, so on
// PostgreSQL one of the two fails its commit (SERIALIZABLE) and runs again.
func memberThere(tx Tx, p *data.Principal) (bool, error) {
	if p.WorkspaceID == "" || p.WorkspaceID == p.CurrentWorkspaceID {
		return true, nil
	}
	m, err := tx.Member(p.WorkspaceID, p.UserID)
	return m != nil, err
}

// conversationOpen reports whether a response to a message to conversation id may be
// kept: the conversation has not ended (its end deleted the answers kept before, and a
// turn's answer holds its text before redaction). True for a response to no message.
func conversationOpen(tx Tx, id string) (bool, error) {
	if id == "" {
		return true, nil
	}
	c, err := tx.Conversation(id)
	return c != nil && c.Status != data.ConversationEnded, err
}

// agentThere reports whether the agent r's request acted on still exists, read in tx:
// its delete cut what was kept with it to its claims (cutKeptAnswersOfDeleted), and an
// answer kept after it (a turn's words, a call start's configuration) would stay for the
// rest of the day, its replay 404. Both writes are of the agent's workspace, so on
// PostgreSQL they take turns on its lock (the keeping's caller's, lockHint; the delete's
// event's). True for an answer about no agent.
func agentThere(ctx context.Context, tx Tx, r *data.IdempotentResponse) (bool, error) {
	p := data.PrincipalFrom(ctx)
	if r.AgentID == "" || p == nil {
		return true, nil
	}
	found, _, err := tx.AgentRef(p.WorkspaceID, r.AgentID)
	return found, err
}

// CheckReplayAgent implements data.IdempotencyStore with the one rule of what a caller
// sees (visibility.go): the route's module, role and scope are checked before a replay
// as before any request, so what is left is the agent itself, which must be of the
// caller's workspace (the token may have moved to another since) and within its
// agent_ids. An agent deleted since is not found either, as for a first request.
func (s *IdempotencyService) CheckReplayAgent(ctx context.Context, agentID string) error {
	p, err := workspaceCaller(ctx)
	if err != nil {
		return err
	}
	return s.store.View(ctx, func(tx Tx) error {
		found, _, err := tx.AgentRef(p.WorkspaceID, agentID)
		if err != nil {
			return err
		}
		if !found || !visibilityOf(p).agent(agentID) {
			return data.NotFound("Agent")
		}
		return nil
	})
}

// CheckReplayCall implements data.IdempotencyStore: a deleted call's kept answer (its
// transcript, numbers, variables) is not shown again, whoever deleted it (DELETE, the
// retention sweep). Existence only: the route's own checks stand for access.
func (s *IdempotencyService) CheckReplayCall(ctx context.Context, callID string) error {
	p, err := workspaceCaller(ctx)
	if err != nil {
		return err
	}
	return s.store.View(ctx, func(tx Tx) error {
		c, err := tx.Call(callID)
		if err != nil {
			return err
		}
		if c == nil || c.WorkspaceID != p.WorkspaceID {
			return data.Errorf(data.ECONFLICT, data.CallDeletedReplay)
		}
		return nil
	})
}

// IdempotencyPurgeBatch bounds the expired responses one PurgeIdempotency transaction
// deletes, so that a day of responses kept at the rate limit goes in many short
// transactions that writers interleave with (as TokenPruneBatch).
const IdempotencyPurgeBatch = 256

// PurgeIdempotency deletes, in one transaction, up to IdempotencyPurgeBatch expired
// responses, oldest first, and returns how many: the server runs it again while it
// returns IdempotencyPurgeBatch (cli's pruneLoop), now and then.
func (s *IdempotencyService) PurgeIdempotency(ctx context.Context) (int, error) {
	n := 0
	err := s.store.Update(ctx, func(tx Tx) error {
		var err error
		n, err = tx.DeleteIdempotentResponsesBefore(s.now().Add(-IdempotencyTTL), IdempotencyPurgeBatch)
		return err
	})
	if err != nil {
		return 0, err // rolled back: nothing was deleted
	}
	return n, nil
}
