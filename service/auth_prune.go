package service

import (
	"context"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/validate"
)

// TokenPruneBatch bounds the tokens one PruneTokens transaction deletes, so that a pass
// over a large backlog (a script logging in all day) is many short transactions that
// writers interleave with.
const TokenPruneBatch = 256

// PruneTokens deletes, in one transaction, up to TokenPruneBatch tokens past their use by
// the service's clock, and returns how many it deleted: the caller runs it again while it
// returns TokenPruneBatch. Login tokens go from their expiry on (nothing lists them);
// API keys validate.ExpiredAPIKeyGrace after theirs, until when GET /api-keys shows them
// as expired. A deleted token authenticates no more than an expired one: its revision
// is gone, so no cache entry is used for it (tokenEntry, cachedToken). What the tokens
// kept under Idempotency-Keys goes with them (deleteTokensKeptAnswers). Nothing is
// recorded: the audit log already holds each token's creation with its expiry.
func (s *AuthService) PruneTokens(ctx context.Context) (int, error) {
	now := s.now()
	n := 0
	err := s.store.Update(ctx, func(tx Tx) error {
		deleted, err := tx.DeleteExpiredTokens(data.TokenLogin, now, TokenPruneBatch)
		if err != nil {
			return err
		}
		if len(deleted) < TokenPruneBatch {
			keys, err := tx.DeleteExpiredTokens(data.TokenAPIKey, now.Add(-validate.ExpiredAPIKeyGrace), TokenPruneBatch-len(deleted))
			if err != nil {
				return err
			}
			deleted = append(deleted, keys...)
		}
		n = len(deleted)
		return s.deleteTokensKeptAnswers(tx, deleted)
	})
	if err != nil {
		return 0, err // rolled back: nothing was deleted
	}
	return n, nil
}
