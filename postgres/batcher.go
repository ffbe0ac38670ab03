package postgres

import (
	"context"
	"sync"
	"time"
)

// batcher lets concurrent callers share statements: a request joins the next statement
// to start, never one already sent, so the snapshot that answers it began after it was
// asked. Whatever was committed before a request arrived is therefore seen, as with a
// statement of its own, while under load one statement answers many requests and the
// database does a fraction of the work.
//
// Statements are numbered in the order they are taken from the queue: statement n was
// taken (and so began) after every request it answers was asked, and after statements
// 1..n-1 were taken.
type batcher[T any] struct {
	// run answers batch as statement n; its error is every request's.
	run         func(ctx context.Context, batch []T, n uint64) error
	maxInFlight int

	mu       sync.Mutex
	pending  []batched[T]
	inFlight int
	taken    uint64 // statements taken so far: the last one's number
}

// batched is one queued request and where its answer goes.
type batched[T any] struct {
	v    T
	done chan batchAnswer
}

// batchAnswer is what a queued request learns: the statement that answered, or why not.
type batchAnswer struct {
	n   uint64
	err error
}

// batchTimeout bounds one shared statement: its context is no request's, since it
// answers many.
const batchTimeout = 30 * time.Second

// do queues v, starts a statement when fewer than maxInFlight run, and waits for the
// number of the statement that answered v, or for ctx.
func (b *batcher[T]) do(ctx context.Context, v T) (uint64, error) {
	done := make(chan batchAnswer, 1)
	b.mu.Lock()
	b.pending = append(b.pending, batched[T]{v, done})
	batch, n := b.takeLocked()
	b.mu.Unlock()
	if batch != nil {
		go b.loop(batch, n)
	}
	select {
	case a := <-done:
		return a.n, a.err
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// takeLocked takes the pending requests as the next statement when a slot is free.
func (b *batcher[T]) takeLocked() ([]batched[T], uint64) {
	if len(b.pending) == 0 || b.inFlight >= b.maxInFlight {
		return nil, 0
	}
	batch := b.pending
	b.pending = nil
	b.inFlight++
	b.taken++
	return batch, b.taken
}

// loop runs batch as statement n, answers it, and goes on with whatever queued meanwhile.
func (b *batcher[T]) loop(batch []batched[T], n uint64) {
	for batch != nil {
		vs := make([]T, len(batch))
		for i, q := range batch {
			vs[i] = q.v
		}
		ctx, cancel := context.WithTimeout(context.Background(), batchTimeout)
		err := b.run(ctx, vs, n)
		cancel()
		b.mu.Lock()
		b.inFlight--
		next, nextN := b.takeLocked()
		b.mu.Unlock()
		for _, q := range batch {
			q.done <- batchAnswer{n, err}
		}
		batch, n = next, nextN
	}
}
