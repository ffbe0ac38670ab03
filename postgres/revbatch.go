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
	err  error
	done chan struct{}
}

// revisionBatcher lets the cache checks of concurrent requests share statements: a check
// joins the next statement to start, never one already sent, so the revisions it gets
// were read by a snapshot taken after it asked. Whatever was committed before a request
// arrived is therefore seen, as with a statement of its own; under load one statement
// answers many requests, so the database does a fraction of the work and a cached GET
// waits for one shared round trip instead of queueing behind the others' (issue 13's
// "GET agent at least half of bbolt").
type revisionBatcher struct {
	read        func(ctx context.Context, batch []*revisionCheck) error
	maxInFlight int

	mu       sync.Mutex
	pending  []*revisionCheck
	inFlight int
}

// revisionReadTimeout bounds one shared statement: its context is no request's, since
// it answers many.
const revisionReadTimeout = 30 * time.Second

// check queues c, starts a statement when fewer than maxInFlight run, and waits for c's
// answer or ctx.
func (b *revisionBatcher) check(ctx context.Context, c *revisionCheck) error {
	c.done = make(chan struct{})
	b.mu.Lock()
	b.pending = append(b.pending, c)
	var batch []*revisionCheck
	if b.inFlight < b.maxInFlight {
		batch, b.pending = b.pending, nil
		b.inFlight++
	}
	b.mu.Unlock()
	if batch != nil {
		go b.run(batch)
	}
	select {
	case <-c.done:
		return c.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// run reads batch, answers it, and goes on with whatever queued meanwhile.
func (b *revisionBatcher) run(batch []*revisionCheck) {
	for {
		ctx, cancel := context.WithTimeout(context.Background(), revisionReadTimeout)
		err := b.read(ctx, batch)
		cancel()
		for _, c := range batch {
			if err != nil {
				c.err = err
			}
			close(c.done)
		}
		b.mu.Lock()
		batch, b.pending = b.pending, nil
		if len(batch) == 0 {
			b.inFlight--
			b.mu.Unlock()
			return
		}
		b.mu.Unlock()
	}
}

// revisionStatementsInFlight is how many shared revision statements a replica runs at
// once. Few, so that checks queue into large batches; more than one, so that a batch
// does not wait for the previous one's round trip to end. Measured in docs/performance.md.
const revisionStatementsInFlight = 2
