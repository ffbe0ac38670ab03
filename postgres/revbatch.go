package postgres

import (
	"context"
	"sync"
	"time"
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
	read uint64    // the number of the statement that answered
	err  error
	done chan struct{}
}

// revisionBatcher lets the cache checks of concurrent requests share statements: a check
// joins the next statement to start, never one already sent, so the revisions it gets
// were read by a snapshot taken after it asked. Whatever was committed before a request
// arrived is therefore seen, as with a statement of its own; under load one statement
// answers many requests, so the database does a fraction of the work (issue 13's "GET
// agent at least half of bbolt").
//
// Statements are numbered in the order they are taken from the queue; statement n began
// after every check it answers had been asked, and after statements 1..n-1 were taken.
// Each statement also reads the agents asked about recently (hot), and the batcher
// remembers the newest revision read of each with its statement's number: a request
// whose token was confirmed by statement n may take an agent's revision from any
// statement numbered n or later without a round trip of its own (agentSince), since
// that read began after the request arrived.
type revisionBatcher struct {
	read        func(ctx context.Context, batch []*revisionCheck, hot []string) (map[string]uint64, error)
	maxInFlight int

	mu       sync.Mutex
	pending  []*revisionCheck
	inFlight int
	taken    uint64                // statements taken so far: the last one's number
	hot      map[string]uint64     // agent id → number of the statement last asked to read it
	known    map[string]knownAgent // agent id → its newest revision read
}

// knownAgent is an agent's revision as read by statement number read.
type knownAgent struct{ rev, read uint64 }

const (
	// revisionReadTimeout bounds one shared statement: its context is no request's,
	// since it answers many.
	revisionReadTimeout = 30 * time.Second
	// revisionStatementsInFlight is how many shared revision statements a replica runs
	// at once. Few, so that checks queue into large batches. Measured in
	// docs/performance.md.
	revisionStatementsInFlight = 1
	// hotAgents bounds the agents each statement reads besides those asked for, and
	// hotStatements is how long an agent stays hot after it was last asked about.
	hotAgents     = 64
	hotStatements = 256
)

// check queues c, starts a statement when fewer than maxInFlight run, and waits for c's
// answer or ctx.
func (b *revisionBatcher) check(ctx context.Context, c *revisionCheck) error {
	c.done = make(chan struct{})
	b.mu.Lock()
	b.pending = append(b.pending, c)
	batch, hot, n := b.takeLocked()
	b.mu.Unlock()
	if batch != nil {
		go b.run(batch, hot, n)
	}
	select {
	case <-c.done:
		return c.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// agentSince returns agent id's revision as read by a statement numbered since or later,
// without a round trip when one has read it; since 0 asks for a statement of its own.
func (b *revisionBatcher) agentSince(ctx context.Context, id string, since uint64) (uint64, error) {
	if since > 0 {
		b.mu.Lock()
		k, ok := b.known[id]
		if ok && k.read >= since {
			b.markHotLocked(id)
			b.mu.Unlock()
			return k.rev, nil
		}
		b.mu.Unlock()
	}
	c := &revisionCheck{agent: true, agentID: id}
	if err := b.check(ctx, c); err != nil {
		return 0, err
	}
	return c.revs[0], nil
}

func (b *revisionBatcher) markHotLocked(id string) {
	if b.hot == nil {
		b.hot = map[string]uint64{}
	}
	b.hot[id] = b.taken + 1
}

// takeLocked takes the pending checks as the next statement, with the hot agents it also
// reads, when a slot is free; nil otherwise.
func (b *revisionBatcher) takeLocked() (batch []*revisionCheck, hot []string, n uint64) {
	if len(b.pending) == 0 || b.inFlight >= b.maxInFlight {
		return nil, nil, 0
	}
	batch, b.pending = b.pending, nil
	b.inFlight++
	b.taken++
	for _, c := range batch {
		if c.agent {
			b.markHotLocked(c.agentID)
		}
	}
	for id, asked := range b.hot {
		switch {
		case asked+hotStatements < b.taken:
			delete(b.hot, id)
			delete(b.known, id)
		case len(hot) < hotAgents:
			hot = append(hot, id)
		}
	}
	return batch, hot, b.taken
}

// run reads batch as statement n, answers it, and goes on with whatever queued meanwhile.
func (b *revisionBatcher) run(batch []*revisionCheck, hot []string, n uint64) {
	for batch != nil {
		ctx, cancel := context.WithTimeout(context.Background(), revisionReadTimeout)
		agents, err := b.read(ctx, batch, hot)
		cancel()
		b.mu.Lock()
		if b.known == nil {
			b.known = map[string]knownAgent{}
		}
		for id, rev := range agents {
			if k, ok := b.known[id]; !ok || k.read < n {
				b.known[id] = knownAgent{rev: rev, read: n}
			}
		}
		b.inFlight--
		next, nextHot, nextN := b.takeLocked()
		b.mu.Unlock()
		// Answered after known is updated: a request confirmed by statement n finds
		// what n read.
		for _, c := range batch {
			c.err, c.read = err, n
			close(c.done)
		}
		batch, hot, n = next, nextHot, nextN
	}
}
