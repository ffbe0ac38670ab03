package postgres

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/internal/pgtest"
)

// gatedReads is a batcher's read function that records each batch and holds it until
// the test releases it, so the order of events is the test's, not the scheduler's.
type gatedReads struct {
	mu      sync.Mutex
	batches [][]*revisionCheck
	hot     [][]string
	started chan int // the batch number, when a read starts
	release chan error
}

// read answers every check and every agent with the statement's number as revision, so
// that the test sees which statement answered.
func (g *gatedReads) read(_ context.Context, batch []*revisionCheck, hot []string) (map[string]uint64, error) {
	g.mu.Lock()
	g.batches = append(g.batches, batch)
	g.hot = append(g.hot, hot)
	n := len(g.batches)
	g.mu.Unlock()
	if g.started != nil {
		g.started <- n
		if err := <-g.release; err != nil {
			return nil, err
		}
	}
	agents := map[string]uint64{}
	for _, c := range batch {
		c.revs[0] = uint64(n)
		if c.agent {
			agents[c.agentID] = uint64(n)
		}
	}
	for _, id := range hot {
		agents[id] = uint64(n)
	}
	return agents, nil
}

func (g *gatedReads) statements() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.batches)
}

// waitQueued waits until n checks queue behind the statements in flight.
func waitQueued(t *testing.T, b *revisionBatcher, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		b.batcher.mu.Lock()
		queued := len(b.pending)
		b.batcher.mu.Unlock()
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
	b := newRevisionBatcher(g.read, 1)
	ctx := context.Background()
	answers := make(chan uint64, 10)
	ask := func() {
		rev, err := b.agentSince(ctx, "agt_x", 0)
		if err != nil {
			t.Error(err)
		}
		answers <- rev
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
	b.batcher.mu.Lock()
	defer b.batcher.mu.Unlock()
	if b.inFlight != 0 || len(b.pending) != 0 {
		t.Errorf("after the last answer: %d in flight, %d pending", b.inFlight, len(b.pending))
	}
}

// With room for two statements, a second starts at once instead of queueing; the third
// check waits for a slot.
func TestRevisionBatcherRunsUpToMaxInFlight(t *testing.T) {
	g := &gatedReads{started: make(chan int, 10), release: make(chan error)}
	b := newRevisionBatcher(g.read, 2)
	ctx := context.Background()
	done := make(chan error, 3)
	for range 2 {
		go func() { _, err := b.check(ctx, &revisionCheck{agent: true}); done <- err }()
		<-g.started
	}
	go func() { _, err := b.check(ctx, &revisionCheck{agent: true}); done <- err }()
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
	b := newRevisionBatcher(g.read, 1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := b.check(ctx, &revisionCheck{agent: true}); done <- err }()
	<-g.started
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want context.Canceled", err)
	}
	g.release <- nil
}

// An agent asked about recently is read by every statement; a request whose token was
// confirmed by statement n then takes the agent's revision from statement n or later
// without a round trip, and one that asks for a later statement than any read waits
// for it.
func TestRevisionBatcherAnswersHotAgentsFromRecentStatements(t *testing.T) {
	g := &gatedReads{}
	b := newRevisionBatcher(g.read, 1)
	ctx := context.Background()
	if rev, err := b.agentSince(ctx, "agt_x", 0); err != nil || rev != 1 {
		t.Fatalf("first read of agt_x: %d, %v; want statement 1's", rev, err)
	}
	read, err := b.check(ctx, &revisionCheck{keyID: 7, userID: "usr_a", workspaceID: "ws_a"})
	if err != nil || read != 2 {
		t.Fatalf("the token check was statement %d (%v), want 2", read, err)
	}
	if len(g.hot[1]) != 1 || g.hot[1][0] != "agt_x" {
		t.Errorf("statement 2 read hot agents %v, want [agt_x]", g.hot[1])
	}
	if rev, err := b.agentSince(ctx, "agt_x", read); err != nil || rev != 2 || g.statements() != 2 {
		t.Errorf("agt_x since statement 2: revision %d (%v) after %d statements; want statement 2's, no new statement", rev, err, g.statements())
	}
	if rev, _ := b.agentSince(ctx, "agt_x", 3); rev != 3 || g.statements() != 3 {
		t.Errorf("agt_x since statement 3: revision %d after %d statements; want a statement of its own (3)", rev, g.statements())
	}
	if rev, _ := b.agentSince(ctx, "agt_y", 1); rev != 4 || g.statements() != 4 {
		t.Errorf("agt_y, never read: revision %d after %d statements; want a statement of its own (4)", rev, g.statements())
	}
	// agt_y since 0: never answered from memory, however recent.
	if rev, _ := b.agentSince(ctx, "agt_y", 0); rev != 5 {
		t.Errorf("since 0 answered by statement %d, want a new one (5)", rev)
	}
}

// An agent nobody asks about stops being read after hotStatements statements, and what
// was read of it is forgotten.
func TestRevisionBatcherForgetsColdAgents(t *testing.T) {
	g := &gatedReads{}
	b := newRevisionBatcher(g.read, 1)
	ctx := context.Background()
	if _, err := b.agentSince(ctx, "agt_cold", 0); err != nil {
		t.Fatal(err)
	}
	for range hotStatements + 2 {
		if _, err := b.check(ctx, &revisionCheck{keyID: 1}); err != nil {
			t.Fatal(err)
		}
	}
	if last := g.hot[len(g.hot)-1]; len(last) != 0 {
		t.Errorf("the last statement still read %v", last)
	}
	b.mu.Lock()
	_, known := b.known["agt_cold"]
	b.mu.Unlock()
	if known {
		t.Error("a cold agent's revision is still remembered")
	}
}

// The shared statements run on their own connections (one a batcher), with generic
// plans; the requests' connections keep PostgreSQL's default planning.
func TestSharedStatementsKeepTheirPlans(t *testing.T) {
	db, err := Open(context.Background(), Options{URL: pgtest.Database(t), SecretKey: make([]byte, 32), PasswordCost: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	var shared, requests string
	if err := db.shared.QueryRow(ctx, `SHOW plan_cache_mode`).Scan(&shared); err != nil {
		t.Fatal(err)
	}
	if err := db.pool.QueryRow(ctx, `SHOW plan_cache_mode`).Scan(&requests); err != nil {
		t.Fatal(err)
	}
	if shared != "force_generic_plan" || requests != "auto" {
		t.Errorf("plan_cache_mode: shared statements %q, requests %q; want force_generic_plan and auto", shared, requests)
	}
	if n := db.shared.Config().MaxConns; n != revisionStatementsInFlight+rateStatementsInFlight {
		t.Errorf("the shared statements' pool holds up to %d connections, want one a batcher (%d)", n, revisionStatementsInFlight+rateStatementsInFlight)
	}
}
