package service_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/service"
)

// jobClock is a clock the test moves and runners read from their workers.
type jobClock struct{ ns atomic.Int64 }

func newJobClock() *jobClock {
	c := &jobClock{}
	c.set(time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC))
	return c
}

func (c *jobClock) now() time.Time         { return time.Unix(0, c.ns.Load()).UTC() }
func (c *jobClock) set(t time.Time)        { c.ns.Store(t.UnixNano()) }
func (c *jobClock) move(d time.Duration)   { c.ns.Add(int64(d)) }
func noJitter(time.Duration) time.Duration { return 0 }

// jobEnv is the services on the engine the tests run on, with a clock the test moves.
type jobEnv struct {
	t     *testing.T
	svc   *service.Services
	store service.Store
	clock *jobClock
}

func newJobEnv(t *testing.T) *jobEnv {
	clock := newJobClock()
	store := testkit.OpenEngine(t)
	svc := testkit.Services(t, store, func(o *service.Options) { o.Now = clock.now })
	// The jobs' workspace: one whose workspace is gone records no job.failed.
	if err := store.Update(context.Background(), func(tx service.Tx) error {
		return tx.PutWorkspace(&data.WorkspaceRecord{Workspace: data.Workspace{ID: "ws_1", Name: "Jobs"}})
	}); err != nil {
		t.Fatal(err)
	}
	return &jobEnv{t: t, svc: svc, store: store, clock: clock}
}

// runner is a runner on the env's clock without jitter, not started (RunDue drives it).
func (e *jobEnv) runner(owner string) *service.JobRunner {
	return e.svc.Jobs.NewRunner(service.RunnerOptions{Owner: owner, Lease: time.Minute, Heartbeat: time.Hour, Now: e.clock.now, Jitter: noJitter})
}

// enqueue queues a job of kind in ws_1 in a transaction of its own.
func (e *jobEnv) enqueue(in data.JobEnqueue) *data.JobRecord {
	e.t.Helper()
	if in.WorkspaceID == "" {
		in.WorkspaceID = "ws_1"
	}
	var j *data.JobRecord
	if err := e.store.Update(context.Background(), func(tx service.Tx) (err error) {
		j, err = e.svc.Jobs.Enqueue(tx, in)
		return err
	}); err != nil {
		e.t.Fatal(err)
	}
	return j
}

// job reads a job as stored.
func (e *jobEnv) job(id string) *data.JobRecord {
	e.t.Helper()
	var j *data.JobRecord
	if err := e.store.View(context.Background(), func(tx service.Tx) (err error) {
		j, err = tx.Job(id)
		return err
	}); err != nil {
		e.t.Fatal(err)
	}
	return j
}

// runDue runs r's due jobs and returns how many ran.
func (e *jobEnv) runDue(r *service.JobRunner) int {
	e.t.Helper()
	n, err := r.RunDue(context.Background())
	if err != nil {
		e.t.Fatal(err)
	}
	return n
}

// runs returns the process's run counts of kind by outcome.
func (e *jobEnv) runs(kind string) map[string]int64 {
	out := map[string]int64{}
	for _, c := range e.svc.Jobs.JobRuns() {
		if c.Kind == kind {
			out[c.Outcome] = c.Count
		}
	}
	return out
}

// attempts records the attempts a handler saw.
type attempts struct {
	mu   sync.Mutex
	seen []int
}

func (a *attempts) add(n int) {
	a.mu.Lock()
	a.seen = append(a.seen, n)
	a.mu.Unlock()
}

func (a *attempts) list() []int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.seen)
}

// TestJobRetriesWithBackoffThenGivesUp: a transient failure is retried after the kind's
// exponential backoff plus its jitter, never before, and the job fails after its last
// attempt, saying so.
func TestJobRetriesWithBackoffThenGivesUp(t *testing.T) {
	e := newJobEnv(t)
	var seen attempts
	e.svc.Jobs.Register(service.JobKind{Name: "test.flaky", Module: data.ModuleAgents, MaxAttempts: 3,
		Backoff: service.ExponentialBackoff(10*time.Second, time.Hour),
		Handle: func(ctx context.Context, run *service.JobRun) error {
			seen.add(run.Job.Attempt)
			return service.Transient(errors.New("the provider answered 503"))
		}})
	jitter := 2 * time.Second
	r := e.svc.Jobs.NewRunner(service.RunnerOptions{Owner: "r", Lease: time.Minute, Now: e.clock.now,
		Jitter: func(max time.Duration) time.Duration {
			if max <= jitter {
				t.Errorf("jitter asked for at most %v, want a quarter of the backoff (over %v)", max, jitter)
			}
			return jitter
		}})
	start := e.clock.now()
	j := e.enqueue(data.JobEnqueue{Kind: "test.flaky", Payload: []byte(`{"call_id":"call_1"}`)})
	if n := e.runDue(r); n != 1 {
		t.Fatalf("first pass ran %d jobs", n)
	}
	got := e.job(j.ID)
	if got.Status != data.JobQueued || got.Attempt != 1 || !got.RunAt.Equal(start.Add(10*time.Second+jitter)) || got.LastError == nil ||
		*got.LastError != "the provider answered 503" || got.StartedAt == nil || got.FinishedAt != nil {
		t.Fatalf("after a transient failure: %+v; want queued again at +12s (10s backoff, 2s jitter) with the error", got)
	}
	e.clock.move(10*time.Second + jitter - time.Millisecond)
	if n := e.runDue(r); n != 0 {
		t.Fatalf("ran %d jobs a millisecond before the retry's time", n)
	}
	e.clock.move(time.Millisecond)
	if n := e.runDue(r); n != 1 {
		t.Fatalf("ran %d jobs at the retry's time", n)
	}
	if got := e.job(j.ID); !got.RunAt.Equal(e.clock.now().Add(20*time.Second+jitter)) || got.Attempt != 2 {
		t.Fatalf("after the second failure: run_at %v, attempt %d; want the backoff doubled (20s) plus jitter", got.RunAt, got.Attempt)
	}
	e.clock.move(20*time.Second + jitter)
	e.runDue(r)
	got = e.job(j.ID)
	if got.Status != data.JobFailed || got.Attempt != 3 || got.FinishedAt == nil || got.LastError == nil ||
		!strings.Contains(*got.LastError, "gave up after 3 attempts") {
		t.Fatalf("after the last attempt: %+v; want failed, saying it gave up", got)
	}
	e.clock.move(time.Hour)
	if n := e.runDue(r); n != 0 || !slices.Equal(seen.list(), []int{1, 2, 3}) {
		t.Errorf("a failed job ran again (%d); attempts seen %v, want 1, 2, 3", n, seen.list())
	}
	if runs := e.runs("test.flaky"); runs[service.JobOutcomeRetried] != 2 || runs[service.JobOutcomeFailed] != 1 {
		t.Errorf("run counts %v, want 2 retried and 1 failed", runs)
	}
}

// TestJobPermanentFailureFailsAtOnce: an error not marked transient ends the job on its
// first attempt, as does a panic (a bug, logged with its stack).
func TestJobPermanentFailureFailsAtOnce(t *testing.T) {
	e := newJobEnv(t)
	e.svc.Jobs.Register(service.JobKind{Name: "test.broken", Module: data.ModuleAgents, MaxAttempts: 5,
		Handle: func(ctx context.Context, run *service.JobRun) error { return errors.New("the call has no transcript") }})
	e.svc.Jobs.Register(service.JobKind{Name: "test.panics", Module: data.ModuleAgents, MaxAttempts: 5,
		Handle: func(ctx context.Context, run *service.JobRun) error { panic("index out of range") }})
	broken := e.enqueue(data.JobEnqueue{Kind: "test.broken"})
	panics := e.enqueue(data.JobEnqueue{Kind: "test.panics"})
	e.runDue(e.runner("r"))
	for _, c := range []struct {
		id, want string
	}{{broken.ID, "the call has no transcript"}, {panics.ID, "the job's handler failed unexpectedly"}} {
		got := e.job(c.id)
		if got.Status != data.JobFailed || got.Attempt != 1 || got.LastError == nil || *got.LastError != c.want {
			t.Errorf("job %s: %+v; want failed on attempt 1 with %q", c.id, got, c.want)
		}
	}
}

// TestJobSucceedsAfterARetry: the retry that succeeds ends the job succeeded; the error
// that made it retry stays as last_error.
func TestJobSucceedsAfterARetry(t *testing.T) {
	e := newJobEnv(t)
	e.svc.Jobs.Register(service.JobKind{Name: "test.once", Module: data.ModuleAgents, Backoff: func(int) time.Duration { return time.Second },
		Handle: func(ctx context.Context, run *service.JobRun) error {
			if run.Job.Attempt == 1 {
				return service.Transient(errors.New("timeout"))
			}
			return nil
		}})
	j := e.enqueue(data.JobEnqueue{Kind: "test.once"})
	r := e.runner("r")
	e.runDue(r)
	e.clock.move(time.Second)
	e.runDue(r)
	got := e.job(j.ID)
	if got.Status != data.JobSucceeded || got.Attempt != 2 || got.FinishedAt == nil || !got.FinishedAt.Equal(e.clock.now()) ||
		got.LastError == nil || *got.LastError != "timeout" {
		t.Errorf("after a retry that succeeded: %+v", got)
	}
}

// TestJobTimeoutIsTransient: a run past its kind's Timeout sees its ctx end, and the job
// is retried.
func TestJobTimeoutIsTransient(t *testing.T) {
	e := newJobEnv(t)
	e.svc.Jobs.Register(service.JobKind{Name: "test.slow", Module: data.ModuleAgents, Timeout: time.Millisecond,
		Handle: func(ctx context.Context, run *service.JobRun) error {
			<-ctx.Done()
			return ctx.Err()
		}})
	j := e.enqueue(data.JobEnqueue{Kind: "test.slow"})
	e.runDue(e.runner("r"))
	if got := e.job(j.ID); got.Status != data.JobQueued || got.Attempt != 1 || got.LastError == nil || !strings.Contains(*got.LastError, "deadline") {
		t.Errorf("after a run past its timeout: %+v; want queued for a retry", got)
	}
}

// TestJobEnqueueRefusesWhatNoHandlerCanRun: an unknown kind, a payload that is not JSON
// or too large, a job without a workspace.
func TestJobEnqueueRefusesWhatNoHandlerCanRun(t *testing.T) {
	e := newJobEnv(t)
	e.svc.Jobs.Register(service.JobKind{Name: "test.ok", Module: data.ModuleAgents, Handle: func(context.Context, *service.JobRun) error { return nil }})
	for _, in := range []data.JobEnqueue{
		{WorkspaceID: "ws_1", Kind: "test.unknown"},
		{WorkspaceID: "ws_1", Kind: "test.ok", Payload: []byte(`{"a":`)},
		{WorkspaceID: "ws_1", Kind: "test.ok", Payload: []byte(`"` + strings.Repeat("x", service.MaxJobPayload) + `"`)},
		{Kind: "test.ok"},
	} {
		err := e.store.Update(context.Background(), func(tx service.Tx) error {
			_, err := e.svc.Jobs.Enqueue(tx, in)
			return err
		})
		if err == nil {
			t.Errorf("enqueue of %+v was accepted", in)
		}
	}
	// At the bound exactly, it is taken.
	e.enqueue(data.JobEnqueue{Kind: "test.ok", Payload: []byte(`"` + strings.Repeat("x", service.MaxJobPayload-2) + `"`)})
}

// TestJobUniqueEnqueue: the same pending work enqueued twice is one job; once it ran, the
// same key queues new work.
func TestJobUniqueEnqueue(t *testing.T) {
	e := newJobEnv(t)
	var runs atomic.Int32
	e.svc.Jobs.Register(service.JobKind{Name: "test.unique", Module: data.ModuleAgents,
		Handle: func(context.Context, *service.JobRun) error { runs.Add(1); return nil }})
	a := e.enqueue(data.JobEnqueue{Kind: "test.unique", UniqueKey: "src_1/1"})
	b := e.enqueue(data.JobEnqueue{Kind: "test.unique", UniqueKey: "src_1/1"})
	if a.ID != b.ID {
		t.Fatalf("second enqueue made %s, want the pending %s", b.ID, a.ID)
	}
	e.runDue(e.runner("r"))
	c := e.enqueue(data.JobEnqueue{Kind: "test.unique", UniqueKey: "src_1/1"})
	if c.ID == a.ID || runs.Load() != 1 {
		t.Errorf("after the run: enqueue returned %s (first %s), runs %d", c.ID, a.ID, runs.Load())
	}
}

// TestJobQueuesListEveryKind: /metrics' queues name every registered kind, at zero when
// nothing is pending, with the due job's age.
func TestJobQueuesListEveryKind(t *testing.T) {
	e := newJobEnv(t)
	for _, name := range []string{"test.b", "test.a"} {
		e.svc.Jobs.Register(service.JobKind{Name: name, Module: data.ModuleAgents, Handle: func(context.Context, *service.JobRun) error { return nil }})
	}
	e.enqueue(data.JobEnqueue{Kind: "test.b"})
	e.clock.move(90 * time.Second)
	all, err := e.svc.Jobs.JobQueues(context.Background())
	var queues []data.JobQueueStat
	for _, q := range all {
		if strings.HasPrefix(q.Kind, "test.") {
			queues = append(queues, q)
		}
	}
	want := []data.JobQueueStat{{Kind: "test.a"}, {Kind: "test.b", Queued: 1, OldestDueAge: 90 * time.Second}}
	if err != nil || !slices.Equal(queues, want) {
		t.Errorf("queues = %+v, %v; want %+v", queues, err, want)
	}
}
