package service

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	mathrand "math/rand/v2"
	"os"
	"sync"
	"time"

	"github.com/voiceapi/voiceapi/data"
)

// Defaults of RunnerOptions.
const (
	DefaultJobWorkers = 4
	DefaultJobLease   = 30 * time.Second
	DefaultJobPoll    = 2 * time.Second
	// jobErrorWait is the pause after a failed claim before the next.
	jobErrorWait = time.Second
)

// RunnerOptions tune a JobRunner. The zero value serves.
type RunnerOptions struct {
	// Owner names the runner in the leases it takes; the host, process id and a random
	// suffix when "", so that two runners never share a name.
	Owner string
	// Workers is how many jobs run at once; DefaultJobWorkers when 0.
	Workers int
	// Lease is how long a claimed job stays the runner's without a heartbeat: how late a
	// job whose worker died runs again. DefaultJobLease when 0.
	Lease time.Duration
	// Heartbeat is the wait between two extensions of the running jobs' leases; a third
	// of Lease when 0.
	Heartbeat time.Duration
	// Poll is the longest wait between two claims: how soon a runner finds jobs that
	// another process enqueued (its own enqueues wake it at once). DefaultJobPoll when 0.
	Poll time.Duration
	// Now is the clock of leases and retries; the services' clock when nil.
	Now func() time.Time
	// Jitter returns a random duration in [0, max) added to each retry's backoff;
	// math/rand when nil. Tests make it fixed.
	Jitter func(max time.Duration) time.Duration
	// Kinds limits the runner to these kinds; every registered kind when empty.
	Kinds []string
}

// JobRunner claims due jobs and runs them with a pool of workers: the worker of one
// server process (docs/jobs.md). Build it with JobService.NewRunner, Start it once the
// kinds are registered, and Stop it before the store closes.
type JobRunner struct {
	s     *JobService
	opts  RunnerOptions
	kinds map[string]*JobKind

	wakeC chan struct{} // buffered 1: wake-ups coalesce

	mu      sync.Mutex
	running map[string]*JobRun // by job id: what the heartbeat extends

	loopCancel context.CancelFunc // stops claiming
	runCtx     context.Context    // parent of every run: cancelled only by a hard stop
	cancelRuns context.CancelFunc
	workers    sync.WaitGroup
	loopDone   chan struct{} // closed when the claiming loop has returned
	beatDone   chan struct{} // closed when the heartbeats have stopped
	stopOnce   sync.Once
}

// NewRunner returns a runner of the registered kinds (or of o.Kinds), not started.
func (s *JobService) NewRunner(o RunnerOptions) *JobRunner {
	if o.Owner == "" {
		o.Owner = defaultOwner()
	}
	if o.Workers <= 0 {
		o.Workers = DefaultJobWorkers
	}
	if o.Lease <= 0 {
		o.Lease = DefaultJobLease
	}
	if o.Heartbeat <= 0 {
		o.Heartbeat = o.Lease / 3
	}
	if o.Poll <= 0 {
		o.Poll = DefaultJobPoll
	}
	if o.Now == nil {
		o.Now = s.now
	}
	if o.Jitter == nil {
		o.Jitter = func(max time.Duration) time.Duration {
			if max <= 0 {
				return 0
			}
			return mathrand.N(max)
		}
	}
	names := o.Kinds
	if len(names) == 0 {
		names = s.jobs.names()
	}
	kinds := map[string]*JobKind{}
	for _, n := range names {
		if k := s.jobs.kind(n); k != nil {
			kinds[n] = k
		}
	}
	runCtx, cancelRuns := context.WithCancel(context.Background())
	return &JobRunner{s: s, opts: o, kinds: kinds, wakeC: make(chan struct{}, 1), running: map[string]*JobRun{},
		runCtx: runCtx, cancelRuns: cancelRuns, loopCancel: func() {}}
}

// defaultOwner is host/pid/random: unique per runner, and telling an operator who held
// a job.
func defaultOwner() string {
	host, _ := os.Hostname()
	var b [4]byte
	rand.Read(b[:])
	return fmt.Sprintf("%s/%d/%s", host, os.Getpid(), hex.EncodeToString(b[:]))
}

// Owner is the name the runner's leases carry.
func (r *JobRunner) Owner() string { return r.opts.Owner }

// Wake tells the runner a job may be due; it never blocks.
func (r *JobRunner) Wake() {
	select {
	case r.wakeC <- struct{}{}:
	default:
	}
}

// kindNames are the kinds the runner claims.
func (r *JobRunner) kindNames() []string {
	out := make([]string, 0, len(r.kinds))
	for n := range r.kinds {
		out = append(out, n)
	}
	return out
}

// Start runs the kinds' AtStart hooks, then claims and runs due jobs in the background
// until Stop. Enqueues in this process wake it at once; other processes' jobs are found
// by polling. On a store one process alone opens, the jobs a dead process left running
// are due at once (endDeadLeases). A runner starts once.
func (r *JobRunner) Start(ctx context.Context) {
	if r.loopDone != nil {
		panic("service: the job runner " + r.opts.Owner + " is already started")
	}
	if !r.s.shared {
		r.endDeadLeases(ctx)
	}
	for _, k := range r.kinds {
		if k.AtStart == nil {
			continue
		}
		if err := k.AtStart(ctx); err != nil {
			r.s.log.Error("jobs: preparing a kind at start", "kind", k.Name, "error", err)
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	r.loopCancel = cancel
	r.loopDone = make(chan struct{})
	r.s.jobs.join(r)
	r.beatDone = make(chan struct{})
	go func() {
		defer close(r.loopDone)
		r.loop(ctx)
	}()
	go func() {
		defer close(r.beatDone)
		r.heartbeats()
	}()
}

// Stop stops claiming and waits for the running jobs to end and be recorded. When ctx
// ends first, their runs are cancelled: each job whose handler then returns an error is
// queued again at once, its attempt given back (it was cut short, not failed), for this
// or another process to run; Stop returns ctx's error in that case.
func (r *JobRunner) Stop(ctx context.Context) error {
	var err error
	r.stopOnce.Do(func() {
		r.loopCancel()
		if r.loopDone != nil {
			<-r.loopDone
		}
		if r.s.jobs.draining != nil {
			r.s.jobs.draining(r.opts.Owner)
		}
		drained := make(chan struct{})
		go func() { r.workers.Wait(); close(drained) }()
		select {
		case <-drained:
		case <-ctx.Done():
			err = ctx.Err()
			r.cancelRuns()
			<-drained
		}
		r.cancelRuns()
		if r.beatDone != nil {
			<-r.beatDone
		}
		// Only now: until its runs ended, a runner starting on these services must leave
		// their leases alone (endDeadLeases).
		r.s.jobs.leave(r)
	})
	return err
}

// endDeadLeases ends now the leases of the running jobs that neither r nor a runner
// already started on these services holds. Only on a store one process alone opens
// (bbolt): there such a job's process died (kill -9, a crash, a lost machine), so waiting
// out its lease would only delay it; it is claimed at once, as after its lease's end (its
// cut attempt counted). On a store replicas share, another replica may be running it:
// its lease is left to end.
//
// The live runners are read inside the write: a runner that starts meanwhile joins them
// before its first claim, so either this write sees it, or its claims commit after this
// write (the store has one writer) and their leases are not ended.
func (r *JobRunner) endDeadLeases(ctx context.Context) {
	if r.s.jobs.beforeEndLeases != nil {
		r.s.jobs.beforeEndLeases()
	}
	var n int
	err := r.s.store.Update(ctx, func(tx Tx) (err error) {
		n, err = tx.EndJobLeases(r.opts.Now(), append(r.s.jobs.liveOwners(), r.opts.Owner))
		return err
	})
	switch {
	case err != nil:
		r.s.log.Error("jobs: ending the leases of a process that died", "error", err)
	case n > 0:
		r.s.log.Warn("jobs: the last process stopped without ending its running jobs; they run again now", "count", n)
	}
}

// loop claims due jobs while workers are free, and waits for a wake-up, a free worker,
// the next due time or the poll.
func (r *JobRunner) loop(ctx context.Context) {
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		wait := r.opts.Poll
		if free := r.opts.Workers - r.active(); free > 0 {
			// A claim under way ends even if Stop comes meanwhile: cut short, it could
			// commit while reporting a failure, leaving its jobs leased and unrun until
			// their leases end. Its jobs are then drained with the others.
			jobs, next, err := r.claim(context.WithoutCancel(ctx), free)
			switch {
			case errors.Is(err, data.ErrStorageSuperseded):
				// A newer voiceapi migrated the database (storage said so once): its jobs
				// are not this binary's to run. The refused claim costs no statement.
			case err != nil && ctx.Err() == nil:
				r.s.log.Error("jobs: claiming due jobs", "error", err)
				wait = jobErrorWait
			case len(jobs) < free && !next.IsZero():
				wait = min(max(next.Sub(r.opts.Now()), time.Millisecond), r.opts.Poll)
			}
			for _, j := range jobs {
				r.start(j)
			}
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			return
		case <-r.wakeC:
		case <-timer.C:
		}
	}
}

// active is the number of runs in progress.
func (r *JobRunner) active() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.running)
}

// claim leases up to limit due jobs. Only jobs whose claim committed are returned: a
// claim that failed (a conflict, a replica stopping mid-claim) holds no lease, and another
// runner may be running those jobs already.
func (r *JobRunner) claim(ctx context.Context, limit int) ([]*data.JobRecord, time.Time, error) {
	if len(r.kinds) == 0 {
		return nil, time.Time{}, nil
	}
	now := r.opts.Now()
	c := data.JobClaim{Kinds: r.kindNames(), Owner: r.opts.Owner, Now: now, LeaseUntil: now.Add(r.opts.Lease), Limit: limit}
	var jobs []*data.JobRecord
	var next time.Time
	var err error
	if cs, ok := jobClaimStore(r.s.store); ok {
		jobs, next, err = cs.ClaimJobs(ctx, c)
	} else {
		err = r.s.store.Update(ctx, func(tx Tx) (err error) {
			jobs, next, err = tx.ClaimJobs(c)
			return err
		})
	}
	if err != nil {
		return nil, time.Time{}, err
	}
	return jobs, next, nil
}

// RunDue claims the jobs due now (up to Workers) and runs them to their end, returning
// how many it ran. It is the loop's step without the loop, for a runner that is not
// started: tests drive retries and leases with an injected clock through it.
func (r *JobRunner) RunDue(ctx context.Context) (int, error) {
	if r.loopDone == nil {
		// Live while its runs go, as a started runner is: another one starting now must
		// leave their leases alone (endDeadLeases).
		r.s.jobs.join(r)
		defer r.s.jobs.leave(r)
	}
	jobs, _, err := r.claim(ctx, r.opts.Workers)
	for _, j := range jobs { // as the loop does: claim's contract is that an error leased none
		r.start(j)
	}
	r.workers.Wait()
	return len(jobs), err
}

// heartbeats extends the running jobs' leases every Heartbeat until the runner has
// stopped (they go on while Stop drains the runs).
func (r *JobRunner) heartbeats() {
	tick := time.NewTicker(r.opts.Heartbeat)
	defer tick.Stop()
	for {
		select {
		case <-r.runCtx.Done():
			return
		case <-tick.C:
			r.Heartbeat(r.runCtx)
		}
	}
}

// Heartbeat extends the lease of every running job now, in one transaction, and cancels
// the runs whose job the runner no longer holds (ErrJobLeaseLost), or whose lease ended
// while storage could not be reached. The runner calls it every Heartbeat.
func (r *JobRunner) Heartbeat(ctx context.Context) {
	r.mu.Lock()
	runs := make([]*JobRun, 0, len(r.running))
	for _, run := range r.running {
		runs = append(runs, run)
	}
	r.mu.Unlock()
	if len(runs) == 0 {
		return
	}
	now := r.opts.Now()
	until := now.Add(r.opts.Lease)
	held := make([]bool, len(runs))
	err := r.s.store.Update(context.WithoutCancel(ctx), func(tx Tx) error {
		for i, run := range runs {
			ok, err := tx.ExtendJobLease(run.Job.ID, run.lease, until)
			if err != nil {
				return err
			}
			held[i] = ok
		}
		return nil
	})
	for i, run := range runs {
		switch {
		case errors.Is(err, data.ErrStorageSuperseded):
			run.lose() // it could record nothing: its lease ends, and an upgraded replica runs it
		case err == nil && held[i]:
			run.setLeaseEnd(until)
		case err == nil:
			run.lose()
		case !now.Before(run.leaseEnd()):
			r.s.log.Warn("jobs: a lease ended while storage could not be reached", "job_id", run.Job.ID, "error", err)
			run.lose()
		}
	}
	if err != nil && !data.LoggedByStorage(err) {
		r.s.log.Error("jobs: extending leases", "error", err)
	}
}
