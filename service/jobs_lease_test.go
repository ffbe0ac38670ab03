package service_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/service"
)

// blockingKind registers a kind whose runs signal started, then wait for their ctx to
// end (sending its cause to ended) or for their runner's release (ending with nil).
func blockingKind(e *jobEnv, name string) (started chan *service.JobRun, ended chan error, release func(owner string)) {
	started, ended = make(chan *service.JobRun, 10), make(chan error, 10)
	var mu sync.Mutex
	releases := map[string]chan struct{}{}
	releaseOf := func(owner string) chan struct{} {
		mu.Lock()
		defer mu.Unlock()
		if releases[owner] == nil {
			releases[owner] = make(chan struct{})
		}
		return releases[owner]
	}
	e.svc.Jobs.Register(service.JobKind{Name: name, Module: data.ModuleAgents, MaxAttempts: 3,
		Handle: func(ctx context.Context, run *service.JobRun) error {
			started <- run
			select {
			case <-ctx.Done():
				ended <- context.Cause(ctx)
				return ctx.Err()
			case <-releaseOf(run.Job.LeaseOwner):
				ended <- nil
				return nil
			}
		}})
	return started, ended, func(owner string) { close(releaseOf(owner)) }
}

// recv waits for a value on ch; the wait is a bound on a hang, not a timing assertion.
func recv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(30 * time.Second):
		t.Fatalf("no %s within 30s", what)
		var zero T
		return zero
	}
}

// TestJobLostLeaseCancelsTheHandler: runner A's lease ends while its handler runs (a
// pause longer than the lease); runner B claims the job and finishes it; A's next
// heartbeat finds the job no longer its own and cancels A's run with ErrJobLeaseLost,
// whose outcome is then not stored over B's.
func TestJobLostLeaseCancelsTheHandler(t *testing.T) {
	e := newJobEnv(t)
	started, ended, release := blockingKind(e, "test.block")
	j := e.enqueue(data.JobEnqueue{Kind: "test.block"})
	a, b := e.runner("runner-a"), e.runner("runner-b")
	aDone := make(chan int)
	go func() { n, _ := a.RunDue(context.Background()); aDone <- n }()
	runA := recv(t, started, "start of A's run")
	if runA.Job.Attempt != 1 || runA.Job.LeaseOwner != "runner-a" {
		t.Fatalf("A runs %+v", runA.Job)
	}
	e.clock.move(time.Minute) // A's lease ends without a heartbeat
	bDone := make(chan int)
	go func() { n, _ := b.RunDue(context.Background()); bDone <- n }()
	runB := recv(t, started, "start of B's run")
	if runB.Job.Attempt != 2 || runB.Job.LeaseOwner != "runner-b" {
		t.Fatalf("B runs %+v, want attempt 2 under its own lease", runB.Job)
	}
	release("runner-b")
	if cause := recv(t, ended, "end of B's run"); cause != nil {
		t.Fatalf("B's released run ended with %v", cause)
	}
	recv(t, bDone, "end of B's pass")
	if got := e.job(j.ID); got.Status != data.JobSucceeded || got.Attempt != 2 {
		t.Fatalf("after B's run: %+v", got)
	}
	a.Heartbeat(context.Background())
	if cause := recv(t, ended, "end of A's run"); !errors.Is(cause, service.ErrJobLeaseLost) {
		t.Errorf("A's run ended with cause %v, want ErrJobLeaseLost", cause)
	}
	recv(t, aDone, "end of A's pass")
	if got := e.job(j.ID); got.Status != data.JobSucceeded || got.Attempt != 2 || got.LastError != nil {
		t.Errorf("after A's cancelled run: %+v; want B's outcome untouched", got)
	}
	if runs := e.runs("test.block"); runs[service.JobOutcomeLeaseLost] != 1 || runs[service.JobOutcomeSucceeded] != 1 {
		t.Errorf("run counts %v, want one succeeded and one lease_lost", runs)
	}
}

// TestJobHeartbeatKeepsTheLease: a heartbeat moves the lease, so another runner does not
// claim a job whose worker is alive, however long it runs.
func TestJobHeartbeatKeepsTheLease(t *testing.T) {
	e := newJobEnv(t)
	started, ended, release := blockingKind(e, "test.long")
	j := e.enqueue(data.JobEnqueue{Kind: "test.long"})
	a, b := e.runner("runner-a"), e.runner("runner-b")
	aDone := make(chan int)
	go func() { n, _ := a.RunDue(context.Background()); aDone <- n }()
	recv(t, started, "start of A's run")
	for range 3 {
		e.clock.move(50 * time.Second)
		a.Heartbeat(context.Background())
		if n := e.runDue(b); n != 0 {
			t.Fatalf("B claimed a job whose worker heartbeats")
		}
	}
	if got := e.job(j.ID); got.LeaseUntil == nil || !got.LeaseUntil.Equal(e.clock.now().Add(time.Minute)) {
		t.Errorf("lease after the heartbeats = %v, want a minute from now", got.LeaseUntil)
	}
	release("runner-a")
	recv(t, ended, "end of A's run")
	recv(t, aDone, "end of A's pass")
	if got := e.job(j.ID); got.Status != data.JobSucceeded || got.Attempt != 1 {
		t.Errorf("after A's run: %+v", got)
	}
}

// TestJobProgressCheckpointsAndResumes: progress is stored as the run goes; a run that
// lost its lease is told so by Progress; the next run starts from the checkpoint.
func TestJobProgressCheckpointsAndResumes(t *testing.T) {
	e := newJobEnv(t)
	type step struct {
		attempt    int
		checkpoint string
	}
	seen := make(chan step, 10)
	progressErr := make(chan error, 10)
	e.svc.Jobs.Register(service.JobKind{Name: "test.backfill", Module: data.ModuleCallHistory,
		Handle: func(ctx context.Context, run *service.JobRun) error {
			seen <- step{run.Job.Attempt, run.Job.Checkpoint}
			if run.Job.Attempt == 1 {
				if err := run.Progress(ctx, data.JobProgress{Done: 40, Total: 100}, "call_40"); err != nil {
					return err
				}
				e.clock.move(2 * time.Minute) // the worker pauses past its lease...
				if _, err := e.runner("runner-b").RunDue(context.Background()); err != nil {
					return err
				}
				err := run.Progress(ctx, data.JobProgress{Done: 50, Total: 100}, "call_50")
				progressErr <- err
				return err
			}
			return run.Progress(ctx, data.JobProgress{Done: 100, Total: 100}, "call_100")
		}})
	j := e.enqueue(data.JobEnqueue{Kind: "test.backfill"})
	e.runDue(e.runner("runner-a"))
	if s := recv(t, seen, "first run"); s != (step{1, ""}) {
		t.Errorf("first run saw %+v", s)
	}
	if s := recv(t, seen, "second run"); s != (step{2, "call_40"}) {
		t.Errorf("the run that took over saw %+v, want attempt 2 resuming at call_40", s)
	}
	if err := recv(t, progressErr, "the first run's late progress"); !errors.Is(err, service.ErrJobLeaseLost) {
		t.Errorf("progress after the takeover = %v, want ErrJobLeaseLost", err)
	}
	got := e.job(j.ID)
	if got.Status != data.JobSucceeded || got.Progress != (data.JobProgress{Done: 100, Total: 100}) || got.Checkpoint != "call_100" {
		t.Errorf("after both runs: %+v; want the second run's progress, not the first's late one", got)
	}
}

// TestJobCanceledWhileRunning: a cancel stops the job for good; the worker's heartbeat
// finds it gone and cancels the run, whose outcome is not stored.
func TestJobCanceledWhileRunning(t *testing.T) {
	e := newJobEnv(t)
	started, ended, _ := blockingKind(e, "test.cancel")
	j := e.enqueue(data.JobEnqueue{Kind: "test.cancel"})
	r := e.runner("r")
	done := make(chan int)
	go func() { n, _ := r.RunDue(context.Background()); done <- n }()
	recv(t, started, "start of the run")
	if err := e.store.Update(context.Background(), func(tx service.Tx) error {
		ok, err := e.svc.Jobs.Cancel(tx, j.ID)
		if err == nil && !ok {
			t.Error("cancel of a running job did nothing")
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	r.Heartbeat(context.Background())
	if cause := recv(t, ended, "end of the run"); !errors.Is(cause, service.ErrJobLeaseLost) {
		t.Errorf("the canceled run ended with %v", cause)
	}
	recv(t, done, "end of the pass")
	if got := e.job(j.ID); got.Status != data.JobCanceled || got.FinishedAt == nil {
		t.Errorf("after cancel: %+v", got)
	}
}

// TestJobClaimedAfterItsLastAttemptDied: a job whose last attempt's worker died is failed
// when claimed again, without running it a time more than max_attempts allows.
func TestJobClaimedAfterItsLastAttemptDied(t *testing.T) {
	e := newJobEnv(t)
	started, _, _ := blockingKind(e, "test.last")
	j := e.enqueue(data.JobEnqueue{Kind: "test.last", MaxAttempts: 1})
	// A worker that dies: its claim commits, then nothing more is heard of it.
	if err := e.store.Update(context.Background(), func(tx service.Tx) error {
		_, _, err := tx.ClaimJobs(data.JobClaim{Kinds: []string{"test.last"}, Owner: "dead", Now: e.clock.now(), LeaseUntil: e.clock.now().Add(time.Minute), Limit: 1})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	e.clock.move(time.Minute)
	if n := e.runDue(e.runner("r")); n != 1 {
		t.Fatalf("claimed %d jobs after the lease ended", n)
	}
	select {
	case run := <-started:
		t.Fatalf("the handler ran attempt %d of a job with one attempt", run.Job.Attempt)
	default:
	}
	got := e.job(j.ID)
	if got.Status != data.JobFailed || got.LastError == nil || !strings.Contains(*got.LastError, "did not end") {
		t.Errorf("after the claim: %+v; want failed, saying its attempt did not end", got)
	}
}

// TestJobRunnerWakesOnEnqueueAndDrainsOnStop: a started runner hears of an enqueue once
// its transaction commits (not from its poll, an hour here); Stop waits for the running
// job to end; a Stop whose ctx ends first cancels the run and queues the job again with
// its attempt given back.
func TestJobRunnerWakesOnEnqueueAndDrainsOnStop(t *testing.T) {
	e := newJobEnv(t)
	started, ended, release := blockingKind(e, "test.drain")
	r := e.svc.Jobs.NewRunner(service.RunnerOptions{Owner: "r", Poll: time.Hour, Lease: time.Minute, Now: e.clock.now})
	r.Start(context.Background())
	first := e.enqueue(data.JobEnqueue{Kind: "test.drain"})
	recv(t, started, "start of the first job")
	stopped := make(chan error)
	go func() { stopped <- r.Stop(context.Background()) }()
	select {
	case err := <-stopped:
		t.Fatalf("Stop returned (%v) while a job ran", err)
	case <-time.After(50 * time.Millisecond): // a bound on what must not happen, not a wait for it
	}
	release("r")
	recv(t, ended, "end of the first job")
	if err := recv(t, stopped, "Stop"); err != nil {
		t.Errorf("Stop = %v after the drain", err)
	}
	if got := e.job(first.ID); got.Status != data.JobSucceeded {
		t.Errorf("the drained job: %+v", got)
	}

	r2 := e.svc.Jobs.NewRunner(service.RunnerOptions{Owner: "r2", Poll: time.Hour, Lease: time.Minute, Now: e.clock.now})
	r2.Start(context.Background())
	second := e.enqueue(data.JobEnqueue{Kind: "test.drain"})
	recv(t, started, "start of the second job")
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // no time to drain
	if err := r2.Stop(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Stop with an ended ctx = %v", err)
	}
	recv(t, ended, "end of the cut run")
	got := e.job(second.ID)
	if got.Status != data.JobQueued || got.Attempt != 0 || got.LeaseOwner != "" || !got.RunAt.Equal(e.clock.now()) {
		t.Errorf("the job cut short by a stop: %+v; want queued now, its attempt given back", got)
	}
	if runs := e.runs("test.drain"); runs[service.JobOutcomeStopped] != 1 {
		t.Errorf("run counts %v, want one stopped", runs)
	}
}

// TestJobAFailedClaimHandsOutNothing: a claim whose transaction did not commit leased
// nothing, so the runner runs none of the jobs it read (another runner may hold them).
func TestJobAFailedClaimHandsOutNothing(t *testing.T) {
	db := testkit.OpenEngine(t)
	store := &failingCommits{Store: db}
	clock := newJobClock()
	svc := servicesOn(t, store, db, func(o *service.Options) { o.Now = clock.now })
	e := &jobEnv{t: t, svc: svc, store: db, clock: clock}
	ran := make(chan string, 1)
	e.svc.Jobs.Register(service.JobKind{Name: "test.claimed", Module: data.ModuleAgents,
		Handle: func(ctx context.Context, run *service.JobRun) error { ran <- run.Job.ID; return nil }})
	j := e.enqueue(data.JobEnqueue{Kind: "test.claimed"})
	store.fail.Store(true)
	n, err := e.runner("r").RunDue(context.Background())
	if !errors.Is(err, errJobCommitFailed) || n != 0 {
		t.Errorf("RunDue with a failing commit = %d, %v; want nothing run and the error", n, err)
	}
	select {
	case id := <-ran:
		t.Errorf("the handler ran job %s of a claim that did not commit", id)
	default:
	}
	if got := e.job(j.ID); got.Status != data.JobQueued || got.Attempt != 0 {
		t.Errorf("the job after the failed claim: %+v", got)
	}
}

// TestJobProgressInFencesTheWork: work written in the transaction that stores the run's
// progress commits only while the run holds the job: runner A, whose lease ended and was
// taken over by B, has its work rolled back with ErrJobLeaseLost; B's commits.
func TestJobProgressInFencesTheWork(t *testing.T) {
	e := newJobEnv(t)
	e.svc.Jobs.Register(service.JobKind{Name: "test.marker", Module: data.ModuleAgents, Handle: func(context.Context, *service.JobRun) error { return nil }})
	aStarted, bDone := make(chan struct{}), make(chan struct{})
	aErr := make(chan error, 1)
	e.svc.Jobs.Register(service.JobKind{Name: "test.fenced", Module: data.ModuleAgents,
		Handle: func(ctx context.Context, run *service.JobRun) error {
			if run.Job.LeaseOwner == "runner-a" {
				close(aStarted)
				<-bDone // paused past its lease while B took the job over and finished it
			}
			err := e.store.Update(context.Background(), func(tx service.Tx) error {
				// The work: here, a marker naming the runner that did it.
				if _, err := e.svc.Jobs.Enqueue(tx, data.JobEnqueue{WorkspaceID: "ws_1", Kind: "test.marker", UniqueKey: run.Job.LeaseOwner}); err != nil {
					return err
				}
				return run.ProgressIn(tx, data.JobProgress{Done: 1, Total: 1}, run.Job.LeaseOwner)
			})
			if run.Job.LeaseOwner == "runner-a" {
				aErr <- err
			}
			return err
		}})
	j := e.enqueue(data.JobEnqueue{Kind: "test.fenced"})
	aDone := make(chan int)
	go func() { n, _ := e.runner("runner-a").RunDue(context.Background()); aDone <- n }()
	recv(t, aStarted, "start of A's run") // A holds the job before its lease runs out
	e.clock.move(time.Minute)
	e.runDue(e.runner("runner-b"))
	close(bDone)
	if err := recv(t, aErr, "A's work"); !errors.Is(err, service.ErrJobLeaseLost) {
		t.Errorf("A's work after the takeover: %v, want ErrJobLeaseLost", err)
	}
	recv(t, aDone, "end of A's pass")
	var markers []string
	if err := e.store.View(context.Background(), func(tx service.Tx) error {
		list, _, err := tx.Jobs("ws_1", data.PageRequest{PerPage: 100})
		for _, m := range list {
			if m.Kind == "test.marker" {
				markers = append(markers, m.UniqueKey)
			}
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if got := e.job(j.ID); len(markers) != 1 || markers[0] != "runner-b" || got.Status != data.JobSucceeded || got.Checkpoint != "runner-b" {
		t.Errorf("work committed by %v, job %+v; want only B's work and B's checkpoint", markers, got)
	}
}

// TestJobsOfADeadProcessRunAtOnceOnBolt: a job left running under a lease of a process
// that died (kill -9). On bbolt only one process opens the file, so the first runner to
// start ends that lease and runs the job at once, its clock not moved an instant (before,
// it waited out the lease's ten minutes); a runner started next leaves the jobs of the
// live one alone. On PostgreSQL other replicas may be alive: the lease stands until its
// end.
func TestJobsOfADeadProcessRunAtOnceOnBolt(t *testing.T) {
	e := newJobEnv(t)
	started, _, release := blockingKind(e, "test.dead")
	dead, queued := e.enqueue(data.JobEnqueue{Kind: "test.dead"}), e.enqueue(data.JobEnqueue{Kind: "test.dead"})
	lease := e.clock.now().Add(10 * time.Minute)
	if err := e.store.Update(context.Background(), func(tx service.Tx) error {
		_, _, err := tx.ClaimJobs(data.JobClaim{Kinds: []string{"test.dead"}, Owner: "host/1/dead", Now: e.clock.now(), LeaseUntil: lease, Limit: 1})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	cut, cancel := context.WithCancel(context.Background())
	cancel() // the runners' Stop at the end cuts the runs still blocked
	start := func(owner string) {
		r := e.svc.Jobs.NewRunner(service.RunnerOptions{Owner: owner, Workers: 1, Poll: time.Hour, Lease: 10 * time.Minute,
			Heartbeat: time.Hour, Now: e.clock.now, Jitter: noJitter})
		r.Start(context.Background())
		t.Cleanup(func() { r.Stop(cut) })
	}
	start("restarted")
	run := recv(t, started, "the first runner's run")
	if testkit.OnPostgres() {
		if run.Job.ID != queued.ID {
			t.Errorf("on PostgreSQL the first runner took %+v, want the queued job", run.Job)
		}
		if got := e.job(dead.ID); got.LeaseOwner != "host/1/dead" || !got.LeaseUntil.Equal(lease) || got.Attempt != 1 {
			t.Errorf("on PostgreSQL the dead lease = %+v, want it standing until %v", got, lease)
		}
		release("restarted")
		return
	}
	if run.Job.ID != dead.ID || run.Job.Attempt != 2 || run.Job.LeaseOwner != "restarted" {
		t.Errorf("run %+v, want the dead process's job on attempt 2 for the restarted runner, at once", run.Job)
	}
	start("second")
	if run := recv(t, started, "the second runner's run"); run.Job.ID != queued.ID {
		t.Errorf("the second runner took %+v, want the queued job", run.Job)
	}
	if got := e.job(dead.ID); got.LeaseOwner != "restarted" || got.Attempt != 2 || !got.LeaseUntil.Equal(e.clock.now().Add(10*time.Minute)) {
		t.Errorf("the first runner's job after the second started = %+v, want it left to the first", got)
	}
	release("restarted")
	release("second")
}
