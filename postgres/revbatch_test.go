package postgres

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// gatedReads is a batcher's read function that records each batch and holds it until
// the test releases it, so the order of events is the test's, not the scheduler's.
type gatedReads struct {
	mu      sync.Mutex
	batches [][]*revisionCheck
	started chan int // the batch number, when a read starts
	release chan error
}

func (g *gatedReads) read(_ context.Context, batch []*revisionCheck) error {
	g.mu.Lock()
	g.batches = append(g.batches, batch)
	n := len(g.batches)
	g.mu.Unlock()
	g.started <- n
	err := <-g.release
	for _, c := range batch {
		c.revs[0] = uint64(n) // which statement answered
	}
	return err
}

// waitQueued waits until n checks queue behind the statements in flight.
func waitQueued(t *testing.T, b *revisionBatcher, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		b.mu.Lock()
		queued := len(b.pending)
		b.mu.Unlock()
		if queued == n {
			return
		}
	}
	t.Fatalf("%d checks never queued", n)
}

// A check that arrives while a statement is in flight is never answered by it (that
// statement's snapshot may predate a commit the check's request must see): it waits for
// the next statement, which every check queued meanwhile shares.
func TestRevisionBatcherNeverJoinsAStatementInFlight(t *testing.T) {
	g := &gatedReads{started: make(chan int, 10), release: make(chan error)}
	b := &revisionBatcher{read: g.read, maxInFlight: 1}
	ctx := context.Background()
	answers := make(chan uint64, 10)
	ask := func() {
		c := &revisionCheck{agent: true, agentID: "agt_x"}
		if err := b.check(ctx, c); err != nil {
			t.Error(err)
		}
		answers <- c.revs[0]
	}
	go ask()
	if n := <-g.started; n != 1 {
		t.Fatalf("first statement is number %d", n)
	}
	for range 5 {
		go ask()
	}
	waitQueued(t, b, 5)
	g.release <- nil
	if got := <-answers; got != 1 {
		t.Fatalf("the first check was answered by statement %d", got)
	}
	if n := <-g.started; n != 2 {
		t.Fatalf("second statement is number %d", n)
	}
	g.release <- nil
	for range 5 {
		if got := <-answers; got != 2 {
			t.Errorf("a check queued during statement 1 was answered by statement %d, want 2", got)
		}
	}
	if len(g.batches[1]) != 5 {
		t.Errorf("the five queued checks took %d in the second statement, want all 5", len(g.batches[1]))
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.inFlight != 0 || len(b.pending) != 0 {
		t.Errorf("after the last answer: %d in flight, %d pending", b.inFlight, len(b.pending))
	}
}

// With room for two statements, a second starts at once instead of queueing; the third
// check waits for a slot.
func TestRevisionBatcherRunsUpToMaxInFlight(t *testing.T) {
	g := &gatedReads{started: make(chan int, 10), release: make(chan error)}
	b := &revisionBatcher{read: g.read, maxInFlight: 2}
	ctx := context.Background()
	done := make(chan error, 3)
	for range 2 {
		go func() { done <- b.check(ctx, &revisionCheck{agent: true}) }()
		<-g.started
	}
	go func() { done <- b.check(ctx, &revisionCheck{agent: true}) }()
	waitQueued(t, b, 1)
	failed := errors.New("connection reset")
	g.release <- failed
	if err := <-done; !errors.Is(err, failed) {
		t.Errorf("a failed statement answered %v, want its error", err)
	}
	<-g.started // the queued check goes next, in the freed slot
	g.release <- nil
	g.release <- nil
	for range 2 {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}

// A caller that gives up gets its context's error; the statement still answers the rest.
func TestRevisionBatcherHonoursTheCallersContext(t *testing.T) {
	g := &gatedReads{started: make(chan int, 10), release: make(chan error)}
	b := &revisionBatcher{read: g.read, maxInFlight: 1}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.check(ctx, &revisionCheck{agent: true}) }()
	<-g.started
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want context.Canceled", err)
	}
	g.release <- nil
}
