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

type deleteTokenAnswersPayload struct {
	TokenID int64 `json:"token_id"`
}

// deleteTokenAnswersKind is the job's kind. Each run goes on from what is left, so runs
// again cost nothing; should it fail for good, what is left expires with the day as
// every kept answer does, unreachable all the while (keys are scoped per token). It
// names only the token's id, but works over answers about any agent, so only a reader of
// the agents module who sees every agent reads it (JobKind.EveryAgent).
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
// Every path that deletes a token calls it: a key revoked, a logout, a password change's
// or a login's trim of login tokens, the pass over expired tokens, a member's removal,
// a user's delete (a workspace's delete takes its tokens' answers in storage). The first
// TokenKeptDeleteBatch go in tx; each token with answers left gets a job of its
// workspace for the rest. Once the batch is spent, each further token still has one
// answer deleted, so that only a token with answers left is given a job.
func (b *base) deleteTokensKeptAnswers(tx Tx, tokens []*data.APIKeyRecord) error {
	budget := TokenKeptDeleteBatch
	for _, k := range tokens {
		limit := max(budget, 1)
		n, err := tx.DeleteTokenResponses(k.ID, limit)
		if err != nil {
			return err
		}
		budget -= n
		if n < limit {
			continue
		}
		payload, err := json.Marshal(deleteTokenAnswersPayload{k.ID})
		if err != nil {
			return err
		}
		if _, err := b.enqueueJob(tx, data.JobEnqueue{WorkspaceID: k.WorkspaceID, Kind: JobKindDeleteTokenAnswers,
			Payload: payload, UniqueKey: strconv.FormatInt(k.ID, 10)}); err != nil {
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

// runDeleteTokenAnswers deletes the job's token's kept answers, TokenKeptDeleteBatch a
// transaction, until none is left.
func (s *IdempotencyService) runDeleteTokenAnswers(ctx context.Context, run *JobRun) error {
	var p deleteTokenAnswersPayload
	if err := json.Unmarshal(run.Job.Payload, &p); err != nil {
		return err
	}
	err := inBatches(ctx, s.store, TokenKeptDeleteBatch, func(tx Tx) (int, error) {
		return tx.DeleteTokenResponses(p.TokenID, TokenKeptDeleteBatch)
	})
	if err != nil {
		// As it is, wrapped: the runner judges whether a run again heals it (failureOf).
		return fmt.Errorf("deleting the answers kept by deleted token %d: %w", p.TokenID, err)
	}
	return nil
}
