package service_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/service"
)

// Two runners in one process on bbolt: a runner's start ends the leases of a process that
// died (TestJobsOfADeadProcessRunAtOnceOnBolt), and must never end one a live runner of
// its own process holds. On PostgreSQL no start ends a lease, so there is nothing to race.

// twoRunnerEnv is a job env with kind test.two, whose runs block until released, and a
// job of it queued.
type twoRunnerEnv struct {
	*jobEnv
	started chan *service.JobRun
	release func(owner string)
	queued  *data.JobRecord
}

func newTwoRunnerEnv(t *testing.T) *twoRunnerEnv {
	if testkit.OnPostgres() {
		t.Skip("replicas share PostgreSQL: a runner's start ends no lease there")
	}
	e := &twoRunnerEnv{jobEnv: newJobEnv(t)}
	e.started, _, e.release = blockingKind(e.jobEnv, "test.two")
	e.queued = e.enqueue(data.JobEnqueue{Kind: "test.two"})
	return e
}

// runner is a runner named owner with a ten-minute lease and no heartbeat or poll to
// speak of during the test, stopped at its end (its blocked runs cut).
func (e *twoRunnerEnv) runner(owner string) *service.JobRunner {
	r := e.svc.Jobs.NewRunner(service.RunnerOptions{Owner: owner, Workers: 1, Poll: time.Hour, Lease: 10 * time.Minute,
		Heartbeat: time.Hour, Now: e.clock.now, Jitter: noJitter})
	e.t.Cleanup(func() {
		cut, cancel := context.WithCancel(context.Background())
		cancel()
		r.Stop(cut)
	})
	return r
}

// wantHeld fails unless the queued job is still leased to owner for the whole lease it
// claimed (no clock moved since).
func (e *twoRunnerEnv) wantHeld(owner string) {
	e.t.Helper()
	got := e.job(e.queued.ID)
	if got.Status != data.JobRunning || got.LeaseOwner != owner || got.Attempt != 1 || got.LeaseUntil == nil || !got.LeaseUntil.Equal(e.clock.now().Add(10*time.Minute)) {
		e.t.Errorf("the job after another runner started = %+v, want it running on %s's lease", got, owner)
	}
}

// A runner (b) starting reads the live runners in the write that ends dead leases: a
// runner (a) that started and claimed the job after b began ending them, but before its
// write, keeps its lease. The hook starts a there and waits for its run; b's list of live
// runners, were it read before, would lack a.
func TestJobRunnerStartingSparesARunnerStartedMeanwhile(t *testing.T) {
	e := newTwoRunnerEnv(t)
	a, b := e.runner("a"), e.runner("b")
	var fired atomic.Bool
	service.SetJobStartHooks(e.svc, func() {
		if !fired.CompareAndSwap(false, true) { // a's own start passes here too
			return
		}
		a.Start(context.Background())
		if run := recv(t, e.started, "a's run"); run.Job.LeaseOwner != "a" {
			t.Errorf("the first run is %+v, want a's", run.Job)
		}
	}, nil)
	b.Start(context.Background())
	e.wantHeld("a")
	e.release("a")
}

// A runner stopping stays live until its runs have ended: a runner starting while it
// drains leaves the lease of the job it still runs alone, where it ended it and ran the
// job a second time at once. The hook holds a's Stop where it begins to wait for its run.
func TestJobRunnerStartingSparesARunnerDraining(t *testing.T) {
	e := newTwoRunnerEnv(t)
	a, b := e.runner("a"), e.runner("b")
	draining := make(chan struct{})
	service.SetJobStartHooks(e.svc, nil, func(owner string) {
		if owner == "a" {
			close(draining)
		}
	})
	a.Start(context.Background())
	recv(t, e.started, "a's run")
	stopped := make(chan error, 1)
	go func() { stopped <- a.Stop(context.Background()) }()
	recv(t, draining, "a's Stop draining")
	b.Start(context.Background())
	e.wantHeld("a")
	e.release("a")
	if err := recv(t, stopped, "a's Stop"); err != nil {
		t.Errorf("a's Stop = %v", err)
	}
	if got := e.job(e.queued.ID); got.Status != data.JobSucceeded || got.Attempt != 1 {
		t.Errorf("the job after a drained = %+v, want succeeded on its first attempt", got)
	}
}

// A runner driven by RunDue (not started) is live while its runs go: a runner starting
// meanwhile leaves their leases alone.
func TestJobRunnerStartingSparesARunDue(t *testing.T) {
	e := newTwoRunnerEnv(t)
	a, b := e.runner("a"), e.runner("b")
	ran := make(chan int, 1)
	go func() {
		n, _ := a.RunDue(context.Background())
		ran <- n
	}()
	recv(t, e.started, "a's run")
	b.Start(context.Background())
	e.wantHeld("a")
	e.release("a")
	if n := recv(t, ran, "a's RunDue"); n != 1 {
		t.Errorf("a's RunDue ran %d jobs, want 1", n)
	}
}
