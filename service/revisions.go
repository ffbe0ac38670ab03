package service

import (
	"context"

	"github.com/voiceapi/voiceapi/data"
)

// RevisionReader is an optional part of a Store for engines where a transaction costs
// round trips (PostgreSQL: BEGIN, each statement and COMMIT are one each). It reads the
// revisions the caches are checked by in ONE statement, outside any transaction: one
// statement sees one snapshot, so the revisions it returns together are consistent with
// each other, as the same reads in a View would be. The services use it only to confirm
// a cache entry; on any difference they take the transactional path, which rebuilds the
// entry, so every rule (a revoked key refused on the next request by every replica, an
// updated agent read updated) holds as without it. bbolt, whose View costs no round
// trip, does not implement it.
type RevisionReader interface {
	// TokenRevisions returns, as of one snapshot, the revisions AccountTx.APIKeyRevision,
	// UserRevision and MemberRevision would give for the token id, the user userID and
	// the membership (workspaceID, userID): 0 for an absent row; and Read, which names
	// that snapshot for AgentRevision.
	TokenRevisions(ctx context.Context, id int64, userID, workspaceID string) (TokenRevisions, error)
	// AgentRevision returns what AgentTx.AgentRevision would give for id (0: absent), as
	// of a snapshot begun no earlier than the one TokenRevisions named since (0: one
	// begun after this call). A request passes what its own token check returned, so
	// the revision is never older than the request.
	AgentRevision(ctx context.Context, id string, since uint64) (uint64, error)
}

// TokenRevisions is what RevisionReader.TokenRevisions reads.
type TokenRevisions struct {
	Key, User, Member uint64
	// Read names the snapshot the three were read in (never 0).
	Read uint64
}

// revisionReader is the store's RevisionReader, if it has one, seen through the
// services' own wrapper of it (claimingStore).
func revisionReader(s Store) (RevisionReader, bool) {
	if c, ok := s.(claimingStore); ok {
		s = c.Store
	}
	rr, ok := s.(RevisionReader)
	return rr, ok
}

// cachedToken returns token id's cache entry when the store confirms, in one statement,
// that the token, its user and its membership are unchanged; nil otherwise (the caller
// then reads in a transaction).
func (s *AuthService) cachedToken(ctx context.Context, id int64) (*tokenEntry, error) {
	rr, ok := revisionReader(s.store)
	if !ok {
		return nil, nil
	}
	e, ok := s.cache.get(id)
	if !ok {
		return nil, nil
	}
	r, err := rr.TokenRevisions(ctx, id, e.principal.UserID, e.principal.WorkspaceID)
	if err != nil {
		return nil, err
	}
	if r.Key == 0 || r.Key != e.keyRev || r.User != e.userRev || r.Member != e.memberRev {
		return nil, nil
	}
	hit := *e
	hit.principal.ReadSince = r.Read
	return &hit, nil
}

// cachedAgent is read's cache hit confirmed by one statement: the entry of agent id when
// its stored revision is the cached one; found false when the caller must read in a
// transaction. A missing agent, or one in another workspace, is the not-found error read
// gives.
func (s *AgentService) cachedAgent(ctx context.Context, id string) (e agentCacheEntry, found bool, err error) {
	rr, ok := revisionReader(s.store)
	if !ok {
		return e, false, nil
	}
	p := data.PrincipalFrom(ctx)
	if !visibilityOf(p).agent(id) {
		return e, true, data.NotFound("Agent")
	}
	rev, err := rr.AgentRevision(ctx, id, p.ReadSince)
	if err != nil {
		return e, true, err
	}
	if rev == 0 {
		return e, true, data.NotFound("Agent")
	}
	e, ok = s.cache.get(id, rev)
	if !ok {
		return e, false, nil
	}
	if e.agent.WorkspaceID != p.WorkspaceID {
		return agentCacheEntry{}, true, data.NotFound("Agent")
	}
	return e, true, nil
}

// AgentRevisionsTx is an optional part of a Tx for engines where each statement is a
// round trip: the revisions of several agents in one statement. A page of agents then
// confirms its cached entries with one read instead of one a row.
type AgentRevisionsTx interface {
	// AgentRevisions returns, for each of ids in order, what AgentTx.AgentRevision would
	// give (0 for an absent agent).
	AgentRevisions(ids []string) ([]uint64, error)
}

// cachedAgents returns the cached entries of ids that the transaction's revisions
// confirm, by position (ok false where the caller must read the agent itself); nil when
// the engine reads revisions one by one anyway.
func (s *AgentService) cachedAgents(ctx context.Context, tx Tx, ids []string) ([]agentCacheEntry, []bool, error) {
	rt, ok := tx.(AgentRevisionsTx)
	if !ok || len(ids) == 0 {
		return nil, nil, nil
	}
	revs, err := rt.AgentRevisions(ids)
	if err != nil {
		return nil, nil, err
	}
	p := data.PrincipalFrom(ctx)
	out, hit := make([]agentCacheEntry, len(ids)), make([]bool, len(ids))
	for i, id := range ids {
		if revs[i] == 0 || !visibilityOf(p).agent(id) {
			continue // read decides (not found)
		}
		if e, ok := s.cache.get(id, revs[i]); ok && e.agent.WorkspaceID == p.WorkspaceID {
			out[i], hit[i] = e, true
		}
	}
	return out, hit, nil
}
