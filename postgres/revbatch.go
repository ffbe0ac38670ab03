package postgres

import (
	"context"
	"sync"
)

// revisionCheck is one cache check waiting for its revisions: a token's (key id, user,
// workspace) or an agent's (agent id).
type revisionCheck struct {
	agent       bool
	keyID       int64
	userID      string
	workspaceID string
	agentID     string

	revs [3]uint64 // key, user, member; or the agent's in revs[0]
}

// revisionBatcher reads the revisions cache checks confirm entries by, in statements
// concurrent checks share (batcher). Each statement also reads the agents asked about
// recently (hot), and the batcher remembers the newest revision read of each with its
// statement's number: a request whose token was confirmed by statement n may take an
// agent's revision from any statement numbered n or later without a round trip of its
// own (agentSince), since that read began after the request arrived. A cached GET agent
// then waits for one statement, shared with the requests that arrived meanwhile (issue
// 13's "GET agent at least half of bbolt").
type revisionBatcher struct {
	batcher[*revisionCheck]
	read func(ctx context.Context, batch []*revisionCheck, hot []string) (map[string]uint64, error)

	mu    sync.Mutex
	hot   map[string]uint64     // agent id → number of the statement it was last asked of
	known map[string]knownAgent // agent id → its newest revision read
}

// knownAgent is an agent's revision as read by statement number read.
type knownAgent struct{ rev, read uint64 }

const (
	// revisionStatementsInFlight is how many shared revision statements a replica runs
	// at once. One, so that checks queue into large batches (docs/performance.md).
	revisionStatementsInFlight = 1
	// hotAgents bounds the agents each statement reads besides those asked for, and
	// hotStatements is how long an agent stays hot after it was last asked about.
	hotAgents     = 64
	hotStatements = 256
)

func newRevisionBatcher(read func(ctx context.Context, batch []*revisionCheck, hot []string) (map[string]uint64, error), maxInFlight int) *revisionBatcher {
	r := &revisionBatcher{read: read}
	r.batcher = batcher[*revisionCheck]{run: r.run, maxInFlight: maxInFlight}
	return r
}

// check asks for c's revisions and returns the number of the statement that read them.
func (r *revisionBatcher) check(ctx context.Context, c *revisionCheck) (uint64, error) {
	return r.do(ctx, c)
}

// agentSince returns agent id's revision as read by a statement numbered since or later,
// without a round trip when one has read it; since 0 asks for a statement of its own.
func (r *revisionBatcher) agentSince(ctx context.Context, id string, since uint64) (uint64, error) {
	if since > 0 {
		r.mu.Lock()
		k, ok := r.known[id]
		if ok && k.read >= since {
			r.markHotLocked(id, k.read)
			r.mu.Unlock()
			return k.rev, nil
		}
		r.mu.Unlock()
	}
	c := &revisionCheck{agent: true, agentID: id}
	if _, err := r.check(ctx, c); err != nil {
		return 0, err
	}
	return c.revs[0], nil
}

func (r *revisionBatcher) markHotLocked(id string, n uint64) {
	if r.hot == nil {
		r.hot = map[string]uint64{}
	}
	if r.hot[id] < n {
		r.hot[id] = n
	}
}

// run is statement n: batch's checks and the hot agents, read together; what it read of
// agents is known before any check of the batch is answered.
func (r *revisionBatcher) run(ctx context.Context, batch []*revisionCheck, n uint64) error {
	r.mu.Lock()
	for _, c := range batch {
		if c.agent {
			r.markHotLocked(c.agentID, n)
		}
	}
	var hot []string
	for id, asked := range r.hot {
		switch {
		case asked+hotStatements < n:
			delete(r.hot, id)
			delete(r.known, id)
		case len(hot) < hotAgents:
			hot = append(hot, id)
		}
	}
	r.mu.Unlock()
	agents, err := r.read(ctx, batch, hot)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.known == nil {
		r.known = map[string]knownAgent{}
	}
	for id, rev := range agents {
		if k, ok := r.known[id]; !ok || k.read < n {
			r.known[id] = knownAgent{rev: rev, read: n}
		}
	}
	return nil
}
