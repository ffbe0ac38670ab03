package service

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/voiceapi/voiceapi/data"
)

// TokenKeptDeleteBatch bounds the kept answers the delete of tokens takes in its own
// transaction; a job takes the rest, as many a write. A token may keep far more in its
// day: at the default rate limit, 300 requests a minute, 432,000 (and as many again on
// each replica, or without bound with the limit off), which at bbolt's 27 µs an answer
// would hold every writer of the file for seconds (docs/performance.md, "A token's
// delete").
const TokenKeptDeleteBatch = 1_000

// JobKindDeleteTokenAnswers is the job that deletes what a deleted token kept under its
// Idempotency-Keys past the first batch its delete took.
const JobKindDeleteTokenAnswers = "idempotency.delete_token_answers"

// deleteTokenAnswersPayload names what a job of the kind deletes: what token TokenID
// kept, or, with WorkspaceID, what was kept for requests made in that workspace (under
// TokenID only, when set: a member's removal; under any token otherwise: the
// workspace's delete). A job queued before WorkspaceID existed names the token alone.
//
// Before, set by a member's removal, bounds it to the answers kept by then: the member
// may be added again before the job runs, and what the token keeps in the workspace
// after that is a live request's answer, which a retry must get replayed.
//
// From is where the walk of the workspace's answers goes on (DeleteWorkspaceResponses):
// what the transaction that queued the job passed over, the job does not read again. A
// job queued before it existed starts from the start.
type deleteTokenAnswersPayload struct {
	TokenID     int64      `json:"token_id,omitempty"`
	WorkspaceID string     `json:"workspace_id,omitempty"`
	Before      *data.Time `json:"before,omitempty"`
	From        []byte     `json:"from,omitempty"`
}

// delete deletes up to limit of the answers p names, in tx, says how many, and moves
// p.From on; done says none is left.
func (p *deleteTokenAnswersPayload) delete(tx Tx, limit int) (n int, done bool, err error) {
	if p.WorkspaceID == "" {
		n, err = tx.DeleteTokenResponses(p.TokenID, limit)
		return n, n < limit, err
	}
	var before time.Time
	if p.Before != nil {
		before = p.Before.Time
	}
	n, next, err := tx.DeleteWorkspaceResponses(p.WorkspaceID, p.TokenID, before, p.From, limit)
	p.From = next
	return n, next == nil, err
}

// uniqueKey keeps one pending job for the same work: a token's id as before, the
// workspace's with "in:", a removal's with its time too (a member removed, added again
// and removed again before the first job ran: the first job's bound would leave what
// was kept in between).
func (p deleteTokenAnswersPayload) uniqueKey() string {
	switch {
	case p.WorkspaceID == "":
		return strconv.FormatInt(p.TokenID, 10)
	case p.TokenID == 0:
		return "in:" + p.WorkspaceID
	case p.Before != nil:
		return "in:" + p.WorkspaceID + ":" + strconv.FormatInt(p.TokenID, 10) + "@" + strconv.FormatInt(p.Before.UnixMilli(), 10)
	}
	return "in:" + p.WorkspaceID + ":" + strconv.FormatInt(p.TokenID, 10)
}

// deleteTokenAnswersKind is the job's kind. Each run goes on from what is left, so runs
// again cost nothing; should it fail for good, what is left expires with the day as
// every kept answer does, unreachable all the while (keys are scoped per token). It
// names only a token's or a workspace's id, but works over answers about any agent, so
// only a reader of the agents module who sees every agent reads it (JobKind.EveryAgent).
// A job queued by a workspace's delete belongs to the deleted workspace, which no one
// can read any more (deleteWorkspace says why it outlives it).
func (s *IdempotencyService) deleteTokenAnswersKind() JobKind {
	return JobKind{Name: JobKindDeleteTokenAnswers, Module: data.ModuleAgents, EveryAgent: true, Handle: s.runDeleteTokenAnswers,
		MaxAttempts: 10, Backoff: ExponentialBackoff(5*time.Second, time.Minute)}
}

// deleteTokens deletes tokens, and what they kept (deleteTokensKeptAnswers), in tx.
func (b *base) deleteTokens(tx Tx, tokens []*data.APIKeyRecord) error {
	for _, k := range tokens {
		if err := tx.DeleteAPIKey(k.ID); err != nil {
			return err
		}
	}
	return b.deleteTokensKeptAnswers(tx, tokens)
}

// deleteTokensKeptAnswers deletes, in tx, the one that deletes tokens, what those tokens
// kept under their Idempotency-Keys, claims too: no one holds them any more, so no one
// can replay these answers (keys are scoped per token), and an answer may hold what was
// shown once (an API key's token, a webhook's secret, a call start's credentials).
// Every path that deletes a token calls it (a key revoked, a logout, a password
// change's or a login's trim of login tokens, the pass over expired tokens) or shares
// its keptCut with the rest of what it takes (a member's removal, a user's delete, a
// workspace's delete: deleteWorkspace). The first TokenKeptDeleteBatch go in tx; each
// token with answers left gets a job of its workspace for the rest.
func (b *base) deleteTokensKeptAnswers(tx Tx, tokens []*data.APIKeyRecord) error {
	cut := newKeptCut()
	if err := cut.tokens(tx, tokens); err != nil {
		return err
	}
	return cut.queue(b, tx)
}

// keptCut shares TokenKeptDeleteBatch among the deletes of kept answers one transaction
// makes, and lists a job for each whose answers it did not take all of. Once the batch
// is spent, each further delete still takes one answer, so that only work with answers
// left is given a job.
type keptCut struct {
	budget int
	jobs   []data.JobEnqueue
}

func newKeptCut() *keptCut { return &keptCut{budget: TokenKeptDeleteBatch} }

// take deletes, in tx, what w names, within the budget, and lists a job of workspace
// jobWS for the rest when some may be left.
func (c *keptCut) take(tx Tx, w deleteTokenAnswersPayload, jobWS string) error {
	limit := max(c.budget, 1)
	n, done, err := w.delete(tx, limit)
	if err != nil {
		return err
	}
	c.budget -= n
	if done {
		return nil
	}
	payload, err := json.Marshal(w)
	if err != nil {
		return err
	}
	c.jobs = append(c.jobs, data.JobEnqueue{WorkspaceID: jobWS, Kind: JobKindDeleteTokenAnswers, Payload: payload, UniqueKey: w.uniqueKey()})
	return nil
}

// tokens takes what each of tokens kept, its jobs of the token's workspace.
func (c *keptCut) tokens(tx Tx, tokens []*data.APIKeyRecord) error {
	for _, k := range tokens {
		if err := c.take(tx, deleteTokenAnswersPayload{TokenID: k.ID}, k.WorkspaceID); err != nil {
			return err
		}
	}
	return nil
}

// queue enqueues, in tx, the jobs take listed: after every delete of the transaction,
// a workspace's included, whose delete takes its jobs along (deleteWorkspace).
func (c *keptCut) queue(b *base, tx Tx) error {
	for _, j := range c.jobs {
		if _, err := b.enqueueJob(tx, j); err != nil {
			return err
		}
	}
	return nil
}

// userTokens lists the user's tokens of both kinds that match.
func userTokens(tx Tx, userID string, match func(*data.APIKeyRecord) bool) ([]*data.APIKeyRecord, error) {
	var out []*data.APIKeyRecord
	for _, kind := range []string{data.TokenLogin, data.TokenAPIKey} {
		tokens, err := tx.UserTokens(userID, kind)
		if err != nil {
			return nil, err
		}
		for _, k := range tokens {
			if match(k) {
				out = append(out, k)
			}
		}
	}
	return out, nil
}

// deleteTokenAnswersInBatches deletes what p names, TokenKeptDeleteBatch a transaction,
// each batch going on where the one before stopped. p.From moves on only once a batch
// committed: a batch run again (rolled back, retried) reads from where it did.
func (s *IdempotencyService) deleteTokenAnswersInBatches(ctx context.Context, p deleteTokenAnswersPayload) error {
	for done := false; !done; {
		if err := ctx.Err(); err != nil {
			return err
		}
		var q deleteTokenAnswersPayload
		if err := s.store.Update(ctx, func(tx Tx) (err error) {
			q = p
			_, done, err = q.delete(tx, TokenKeptDeleteBatch)
			return err
		}); err != nil {
			return err
		}
		p = q
	}
	return nil
}

// runDeleteTokenAnswers deletes the kept answers the job names, TokenKeptDeleteBatch a
// transaction, until none is left.
func (s *IdempotencyService) runDeleteTokenAnswers(ctx context.Context, run *JobRun) error {
	var p deleteTokenAnswersPayload
	if err := json.Unmarshal(run.Job.Payload, &p); err != nil {
		return err
	}
	err := s.deleteTokenAnswersInBatches(ctx, p)
	switch {
	case err == nil:
	case p.WorkspaceID != "":
		// As it is, wrapped: the runner judges whether a run again heals it (failureOf).
		return fmt.Errorf("deleting the answers kept for requests in workspace %s (token %d; 0: any): %w", p.WorkspaceID, p.TokenID, err)
	default:
		return fmt.Errorf("deleting the answers kept by deleted token %d: %w", p.TokenID, err)
	}
	return nil
}
