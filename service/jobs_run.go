package service

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	"github.com/voiceapi/voiceapi/data"
)

// Outcomes of a run, as /metrics counts them (voiceapi_job_runs_total's outcome label).
const (
	JobOutcomeSucceeded = "succeeded"
	JobOutcomeRetried   = "retried"
	JobOutcomeFailed    = "failed"
	JobOutcomeLeaseLost = "lease_lost"
	JobOutcomeStopped   = "stopped"
)

// JobRun is one run of a job, handed to its kind's handler.
type JobRun struct {
	// Job is the job as claimed: its payload, the attempt this run is (1 for the
	// first), and the progress and checkpoint an earlier run left.
	Job *data.JobRecord

	r      *JobRunner
	lease  data.JobLease
	cancel context.CancelCauseFunc

	mu  sync.Mutex
	end time.Time // the lease's end as last stored
}

// LastAttempt reports whether a failure of this run is final (no attempt remains).
func (run *JobRun) LastAttempt() bool { return run.Job.Attempt >= run.Job.MaxAttempts }

// Progress stores how far the run has come and where it stands (the checkpoint a later
// run of the job resumes from, opaque to everyone but the handler). When the runner no
// longer holds the job it returns ErrJobLeaseLost and the run's ctx is cancelled: stop.
func (run *JobRun) Progress(ctx context.Context, p data.JobProgress, checkpoint string) error {
	var held bool
	err := run.r.s.store.Update(ctx, func(tx Tx) (err error) {
		held, err = tx.SetJobProgress(run.Job.ID, run.lease, p, checkpoint)
		return err
	})
	if err != nil {
		return err
	}
	if !held {
		run.lose()
		return ErrJobLeaseLost
	}
	run.Job.Progress, run.Job.Checkpoint = p, checkpoint
	return nil
}

// ProgressIn is Progress inside tx, a transaction of the handler's own work: the work and
// the position it reached commit together, and while the run no longer holds the job it
// returns ErrJobLeaseLost, so tx rolls back and a worker that lost its lease commits no
// work at all (a fence). The run's copy of the job is updated once tx commits.
func (run *JobRun) ProgressIn(tx Tx, p data.JobProgress, checkpoint string) error {
	held, err := tx.SetJobProgress(run.Job.ID, run.lease, p, checkpoint)
	if err != nil {
		return err
	}
	if !held {
		run.lose()
		return ErrJobLeaseLost
	}
	tx.OnCommit(func() { run.Job.Progress, run.Job.Checkpoint = p, checkpoint })
	return nil
}

func (run *JobRun) lose() { run.cancel(ErrJobLeaseLost) }

func (run *JobRun) leaseEnd() time.Time {
	run.mu.Lock()
	defer run.mu.Unlock()
	return run.end
}

func (run *JobRun) setLeaseEnd(t time.Time) {
	run.mu.Lock()
	run.end = t
	run.mu.Unlock()
}

// start runs job j on a worker of its own.
func (r *JobRunner) start(j *data.JobRecord) {
	ctx, cancel := context.WithCancelCause(r.runCtx)
	run := &JobRun{Job: j, r: r, lease: j.Lease(), cancel: cancel}
	if j.LeaseUntil != nil {
		run.end = j.LeaseUntil.Time
	}
	r.mu.Lock()
	r.running[j.ID] = run
	r.mu.Unlock()
	r.workers.Add(1)
	go func() {
		defer r.workers.Done()
		defer r.Wake() // a worker is free
		defer func() {
			r.mu.Lock()
			delete(r.running, j.ID)
			r.mu.Unlock()
		}()
		defer cancel(nil)
		r.execute(ctx, run)
	}()
}

// execute runs the handler and stores how the run ended.
func (r *JobRunner) execute(ctx context.Context, run *JobRun) {
	j, k := run.Job, r.kinds[run.Job.Kind]
	if j.Attempt > j.MaxAttempts {
		// Claimed again after its last attempt's worker died (or lost its lease)
		// before it could end: no attempt is left to run.
		r.finish(run, JobOutcomeFailed, data.JobOutcome{Status: data.JobFailed, At: r.opts.Now(),
			Error: fmt.Sprintf("attempt %d of %d did not end (its worker stopped or lost the job); no attempt is left", j.Attempt-1, j.MaxAttempts)})
		return
	}
	hctx := ctx
	if k.Timeout > 0 {
		var cancel context.CancelFunc
		hctx, cancel = context.WithTimeout(ctx, k.Timeout)
		defer cancel()
	}
	err := failureOf(callHandler(hctx, k.Handle, run))
	if errors.Is(context.Cause(ctx), ErrJobLeaseLost) {
		r.s.jobs.count(j.Kind, JobOutcomeLeaseLost)
		return // the job's holder (or its cancel) decides: nothing is stored
	}
	now := r.opts.Now()
	switch {
	case err == nil:
		r.finishWith(run, JobOutcomeSucceeded, data.JobOutcome{Status: data.JobSucceeded, At: now}, func(tx Tx, out *data.JobOutcome) error {
			if k.Again == nil {
				return nil
			}
			again, err := k.Again(tx, run.Job)
			if again {
				*out = data.JobOutcome{Status: data.JobQueued, RunAt: now, Uncounted: true}
			}
			return err
		})
	case r.runCtx.Err() != nil:
		// Cut short by a hard stop: not a failure of the job; run it again soon.
		r.finish(run, JobOutcomeStopped, data.JobOutcome{Status: data.JobQueued, RunAt: now, Uncounted: true})
	case (IsTransient(err) || errors.Is(err, context.DeadlineExceeded)) && j.Attempt < j.MaxAttempts:
		wait := k.Backoff(j.Attempt)
		wait += r.opts.Jitter(wait/4 + 1)
		r.finish(run, JobOutcomeRetried, data.JobOutcome{Status: data.JobQueued, RunAt: now.Add(wait), Error: err.Error()})
	default:
		msg := err.Error()
		if IsTransient(err) || errors.Is(err, context.DeadlineExceeded) {
			msg = fmt.Sprintf("%s (gave up after %d attempts)", msg, j.Attempt)
		}
		r.finish(run, JobOutcomeFailed, data.JobOutcome{Status: data.JobFailed, At: now, Error: msg})
	}
}

// failureOf is the one rule, for every kind, of which failures a run again may heal:
// those the handler marked Transient (a provider's 429 or 5xx), and, judged by
// TransientStorage, the storage faults that heal by themselves (the database
// unreachable, a full disk, a fenced replica, SQLSTATE 40, 53, 57, 58 and 55P03, the
// run's context ended). Any other failure, a stored row that does not decode or a
// violated constraint among them, is permanent: the job fails at once, job.failed
// naming it, rather than meeting it again for its whole attempt budget. So a handler
// returns a storage error as it is and marks only what it knows heals.
func failureOf(err error) error {
	if err == nil || IsTransient(err) {
		return err
	}
	return TransientStorage(err)
}

// errHandlerPanicked is the failure of a handler that panicked: a bug, which running the
// job again would meet again.
var errHandlerPanicked = errors.New("the job's handler failed unexpectedly")

// callHandler runs h, turning a panic into a permanent failure (logged with its stack).
func callHandler(ctx context.Context, h JobHandler, run *JobRun) (err error) {
	defer func() {
		if p := recover(); p != nil {
			run.r.s.log.Error("jobs: a handler panicked", "job_id", run.Job.ID, "kind", run.Job.Kind, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			err = errHandlerPanicked
		}
	}()
	return h(ctx, run)
}

// finish stores the run's outcome while the run still holds the job, and counts it.
func (r *JobRunner) finish(run *JobRun, outcome string, out data.JobOutcome) {
	r.finishWith(run, outcome, out, nil)
}

// finishWith is finish with the outcome adjusted by adjust (when not nil) in the
// transaction that stores it.
func (r *JobRunner) finishWith(run *JobRun, outcome string, out data.JobOutcome, adjust func(tx Tx, out *data.JobOutcome) error) {
	var held bool
	told := out.Error // what the log says: the error as stored, scrubbed (conventions §9)
	err := r.s.store.Update(context.Background(), func(tx Tx) (err error) {
		final := out // a write may run again: adjust the outcome as given
		if adjust != nil {
			if err := adjust(tx, &final); err != nil {
				return err
			}
		}
		if final.Error, err = r.s.scrubJobError(tx, run.Job, final.Error); err != nil {
			return err
		}
		told = final.Error
		if held, err = tx.FinishJob(run.Job.ID, run.lease, final); err != nil || !held {
			return err
		}
		if final.Status != data.JobFailed {
			return nil
		}
		if k := r.kinds[run.Job.Kind]; k != nil && k.Failed != nil {
			if err := k.Failed(context.Background(), tx, run.Job, final); err != nil {
				return err
			}
		}
		return r.s.recordJobFailed(tx, run.Job.ID)
	})
	switch {
	case errors.Is(err, data.ErrStorageSuperseded):
		// As below, on an upgraded replica; storage has logged the cause at error level.
		r.s.log.Warn("jobs: a run's outcome not stored: a newer voiceapi migrated the database; an upgraded replica runs the job once its lease ends",
			"job_id", run.Job.ID, "kind", run.Job.Kind, "outcome", outcome)
		return
	case err != nil:
		// The job stays running under this lease: once it ends, a runner claims the job
		// and runs it again (the idempotency contract of JobHandler).
		r.s.log.Error("jobs: storing a run's outcome", "job_id", run.Job.ID, "kind", run.Job.Kind, "outcome", outcome, "error", err)
		return
	case !held:
		outcome = JobOutcomeLeaseLost
	}
	r.s.jobs.count(run.Job.Kind, outcome)
	if outcome == JobOutcomeFailed || outcome == JobOutcomeRetried {
		r.s.log.Warn("jobs: a run failed", "job_id", run.Job.ID, "kind", run.Job.Kind, "attempt", run.Job.Attempt,
			"retry", outcome == JobOutcomeRetried, "error", told)
	}
}
