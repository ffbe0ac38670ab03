package service

import (
	"context"
	"time"

	"github.com/voiceapi/voiceapi/data"
)

// JobTx stores durable background jobs (conventions §26, docs/jobs.md): the rows, the due
// index (queued jobs at their run_at, running ones at the end of their lease), the
// pending unique keys and the workspace's list. Every write that depends on a run
// (heartbeat, progress, outcome) takes the run's lease and does nothing when the job no
// longer carries it, so a worker that lost its lease cannot overwrite the new holder.
type JobTx interface {
	// EnqueueJob stores j, a new job (queued; or as it stood, when an installation is
	// moved), and returns it; when j is pending (queued or running) with a UniqueKey and
	// its workspace already has a pending job of its kind with that key, it stores
	// nothing and returns that job instead. The job commits (or not) with the rest of the
	// transaction.
	EnqueueJob(j *data.JobRecord) (*data.JobRecord, error)
	// ClaimJobs leases up to c.Limit due jobs of c.Kinds (queued with run_at at or before
	// c.Now, or running with a lease that ended by then), oldest due first, to c.Owner
	// until c.LeaseUntil: each becomes running with its attempt counted one more and its
	// started_at set on the first claim. It returns them as claimed, and when the next
	// job of c.Kinds not returned falls due (zero when none is pending). In a write
	// transaction an engine shared by several processes passes over the jobs that a
	// concurrent transaction is claiming (PostgreSQL: FOR UPDATE SKIP LOCKED).
	ClaimJobs(c data.JobClaim) ([]*data.JobRecord, time.Time, error)
	// ExtendJobLease moves the lease of a run that still holds job id to until, and
	// reports whether it did.
	ExtendJobLease(id string, lease data.JobLease, until time.Time) (bool, error)
	// SetJobProgress stores a run's progress and checkpoint while the run still holds
	// job id, and reports whether it did.
	SetJobProgress(id string, lease data.JobLease, p data.JobProgress, checkpoint string) (bool, error)
	// FinishJob ends a run that still holds job id with out (final, or queued again at
	// out.RunAt, or sooner as a HastenJob during the run asked, with the lease dropped),
	// and reports whether it did. A final job leaves
	// the due index and frees its unique key.
	FinishJob(id string, lease data.JobLease, out data.JobOutcome) (bool, error)
	// EndJobLeases ends at now the lease of every running job whose lease owner is not in
	// alive and whose lease runs past now, and returns how many it ended: those jobs are
	// then due, to be claimed as any job whose lease ended. A store that only one process
	// opens calls it when its runner starts, since such a job's process died.
	EndJobLeases(now time.Time, alive []string) (int, error)
	// HastenJob makes job id, when it is queued to run after at (a retry's backoff), due
	// at at; when it is running, the retry its run may queue is due by at, not after the
	// backoff (what the run waits for may answer now, but the run learns so only when it
	// times out). It reports whether it did; a final job, or one due by at, is left as it is.
	HastenJob(id string, at time.Time) (bool, error)
	// CancelJob makes a pending (queued or running) job canceled at at, and reports
	// whether it did; a running job's worker then finds its lease gone at its next
	// heartbeat. A final job is left as it is.
	CancelJob(id string, at time.Time) (bool, error)
	// Job returns one job, nil when there is none.
	Job(id string) (*data.JobRecord, error)
	// Jobs returns one newest-first page of the workspace's jobs.
	Jobs(workspaceID string, req data.PageRequest) ([]*data.JobRecord, data.Page, error)
	// ListJobs returns one newest-first page of the workspace's jobs that sel keeps
	// (data.JobSelection.Keeps), reading an index of the workspace's jobs rather than
	// every job stored; its cursors are bound to sel, so a cursor of another selection is
	// refused (validation_failed on cursor).
	ListJobs(workspaceID string, sel data.JobSelection, req data.PageRequest) ([]*data.JobRecord, data.Page, error)
	// JobQueueStats returns, per kind that has pending jobs, the queued and running
	// counts and the age at now of the oldest due job.
	JobQueueStats(now time.Time) ([]data.JobQueueStat, error)
	// PruneJobs deletes up to limit final jobs that finished before before, oldest id
	// first, and returns how many it deleted (fewer than limit: none older is left).
	// Pending jobs are never deleted.
	PruneJobs(before time.Time, limit int) (int, error)
}

// JobClaimStore is an optional part of a Store whose write transactions claim badly: a
// claim there runs in a transaction of its own, with JobTx.ClaimJobs's contract, and a
// returned error means nothing was claimed. PostgreSQL's SERIALIZABLE writes fail a claim
// whenever another replica's claim commits a row it read; its READ COMMITTED claim passes
// over such rows instead (postgres/jobs.go).
type JobClaimStore interface {
	ClaimJobs(ctx context.Context, c data.JobClaim) ([]*data.JobRecord, time.Time, error)
}

// jobClaimStore is the store's JobClaimStore, if it has one, seen through the services'
// own wrapper of it (claimingStore).
func jobClaimStore(s Store) (JobClaimStore, bool) {
	if c, ok := s.(claimingStore); ok {
		s = c.Store
	}
	cs, ok := s.(JobClaimStore)
	return cs, ok
}
