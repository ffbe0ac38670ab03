package service

// The one durable background job mechanism (conventions §26; docs/jobs.md for operators,
// docs/architecture.md for where it sits). A feature registers a kind of job with its
// handler (Register, from New), enqueues jobs inside the transaction that records why
// (Enqueue), and a runner in each server process claims the due ones with a lease and
// runs them (jobs_runner.go). Everything a runner works from is in storage, so a crash
// loses nothing: a job whose worker died is claimed again once its lease ends.

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"syscall"
	"time"

	"github.com/voiceapi/voiceapi/data"
)

// Defaults of a JobKind.
const (
	DefaultJobMaxAttempts = 5
	DefaultJobBackoffBase = 10 * time.Second
	DefaultJobBackoffMax  = time.Hour
	// MaxJobPayload bounds a job's payload: a job names its work (ids, a range), it does
	// not carry it.
	MaxJobPayload = 64 << 10
)

// JobHandler runs one job. It returns nil when the work is done, an error marked with
// Transient when running it again later may succeed (a provider's 429 or timeout, a
// storage error), and any other error when it never will (the job fails at once).
//
// The idempotency contract: a handler may run more than once for one job (its worker
// died after the work committed but before the job's end did; a lease lost to a pause
// longer than the lease). Each run must therefore leave storage as one run would:
// check whether the work is already done before doing it (a feature's own record says
// so: a url source no longer pending, an analysis already stored for this call
// revision), write each piece of work in one transaction with what marks it done, and
// record long work's position in that transaction (JobRun.ProgressIn) so a later run
// resumes there. A run whose ctx ends must stop soon and return ctx's error: its lease is
// lost (another runner holds the job) or its server is stopping (the job is queued
// again).
type JobHandler func(ctx context.Context, run *JobRun) error

// JobKind is a kind of background job: what runs it, who may read its jobs, how often and
// how long it may run.
type JobKind struct {
	// Name is stored in every job of the kind and names it in /metrics: stable, lower
	// case, "<feature>.<work>" (knowledge_base.fetch_url).
	Name string
	// Module is what a caller must hold to read the kind's jobs through the API (and the
	// module's read scope, for a key with scopes).
	Module string
	// EveryAgent marks a kind whose jobs work over every agent of the workspace and so
	// belong to none (an upgrade's list): their progress and last_error may name any
	// agent, so only callers who see every agent read them, as only they read an agent's
	// event that names no agent (visibility.event).
	EveryAgent bool
	// Handle runs one job of the kind.
	Handle JobHandler
	// MaxAttempts bounds the runs of a job enqueued without its own;
	// DefaultJobMaxAttempts when 0.
	MaxAttempts int
	// Backoff is the wait after failed attempt n (1 for the first) before the next, to
	// which the runner adds up to a quarter at random (so the retries of many jobs that
	// failed together spread out); ExponentialBackoff(DefaultJobBackoffBase,
	// DefaultJobBackoffMax) when nil.
	Backoff func(attempt int) time.Duration
	// Timeout bounds one run (its ctx's deadline, a transient failure when it passes);
	// none when 0.
	Timeout time.Duration
	// AtStart, when set, runs when a runner starts, before it claims: a kind enqueues
	// there the work that a database written by an older version holds without a job
	// (idempotent, through unique keys: every replica runs it).
	AtStart func(ctx context.Context) error
	// Again, when set, is asked in the transaction that ends a successful run whether
	// work for the job arrived after the handler's last look: work whose enqueue found
	// this job pending (its unique key) and so queued nothing. The job is then queued
	// again at once, the attempt not counted, instead of succeeding with that work left
	// undone.
	Again func(tx Tx, job *data.JobRecord) (bool, error)
	// Failed, when set, runs in the transaction that fails the job for good (a permanent
	// failure, the last attempt's, or a claim after the last attempt's worker died), so the
	// work the job stood for ends with the job: a test run ends, with its event, instead
	// of waiting for a job that will never run again.
	Failed func(ctx context.Context, tx Tx, job *data.JobRecord, out data.JobOutcome) error
}

// ExponentialBackoff doubles base per attempt, up to limit.
func ExponentialBackoff(base, limit time.Duration) func(attempt int) time.Duration {
	return func(attempt int) time.Duration {
		d := base
		for i := 1; i < attempt && d < limit; i++ {
			d *= 2
		}
		return min(d, limit)
	}
}

// transientError marks a failure worth retrying.
type transientError struct{ err error }

func (e transientError) Error() string { return e.err.Error() }
func (e transientError) Unwrap() error { return e.err }

// Transient marks err as a failure that running the job again later may not meet: the
// job is retried after its kind's backoff while attempts remain. Transient(nil) is nil.
func Transient(err error) error {
	if err == nil {
		return nil
	}
	return transientError{err}
}

// TransientStorage marks a storage failure Transient when it may heal by itself, and
// returns any other as it is, a permanent failure (the job ends failed, job.failed
// naming it): a stored row that does not decode or a violated constraint is a bug that
// every run would meet again. The runner applies it to every kind's failures
// (failureOf). Transient: the database unreachable (data.ErrStorageUnavailable), its disk
// full (syscall.ENOSPC), a disk I/O error (syscall.EIO, on bbolt: judged as PostgreSQL's
// class 58 is, so both engines retry the same fault), the SQLSTATE classes that heal
// (transientSQLState), the run's context ended, and a replica fenced by a newer binary
// (data.ErrStorageSuperseded), which must only let the job go: it can store no outcome,
// and an upgraded replica claims the job once its lease ends.
func TransientStorage(err error) error {
	switch {
	case errors.Is(err, data.ErrStorageUnavailable), errors.Is(err, data.ErrStorageSuperseded),
		errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EIO), errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded),
		transientSQLState(err):
		return Transient(err)
	}
	return err
}

// sqlStater is a database error naming its SQLSTATE (PostgreSQL's driver's errors), read
// here without importing the driver.
type sqlStater interface{ SQLState() string }

// transientSQLState reports a database error of a class that heals by itself: 40
// (serialization failures and deadlocks past the store's own retries), 53 (insufficient
// resources: memory, connections), 57 (a statement timeout, a shutdown), 58 (an I/O
// error) and 55P03 (a lock not available in time). A violated constraint (23) or bad
// data (22) is met again by every run.
func transientSQLState(err error) bool {
	var s sqlStater
	if !errors.As(err, &s) {
		return false
	}
	code := s.SQLState()
	switch {
	case code == "55P03":
		return true
	case len(code) == 5:
		switch code[:2] {
		case "40", "53", "57", "58":
			return true
		}
	}
	return false
}

// IsTransient reports whether err (or an error it wraps) was marked with Transient.
func IsTransient(err error) bool {
	var t transientError
	return errors.As(err, &t)
}

// ErrJobLeaseLost ends a run whose job its runner no longer holds: the lease ended and
// another runner claimed the job, or the job was canceled. The run's outcome is not
// stored; the job's current holder decides it.
var ErrJobLeaseLost = errors.New("the job's lease was lost: another runner holds it, or it was canceled")

// jobRegistry holds the registered kinds and the live runners: those to wake after an
// enqueue, whose leases a runner starting leaves alone.
type jobRegistry struct {
	mu      sync.RWMutex
	kinds   map[string]*JobKind
	runners map[*JobRunner]bool
	runs    map[[2]string]int64 // (kind, outcome) → runs that ended so
	// Test hooks (service/hooks_test.go), nil in production: beforeEndLeases runs as a
	// runner's start is about to end dead leases, draining as a Stop waits for its runs.
	beforeEndLeases func()
	draining        func(owner string)
}

func newJobRegistry() *jobRegistry {
	return &jobRegistry{kinds: map[string]*JobKind{}, runners: map[*JobRunner]bool{}, runs: map[[2]string]int64{}}
}

func (r *jobRegistry) kind(name string) *JobKind {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.kinds[name]
}

// names returns the registered kinds' names, sorted.
func (r *jobRegistry) names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]string, 0, len(r.kinds))
	for n := range r.kinds {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// join makes run one of the live runners, woken after enqueues, its leases left alone
// by a runner starting (endDeadLeases); leave ends that.
func (r *jobRegistry) join(run *JobRunner) {
	r.mu.Lock()
	r.runners[run] = true
	r.mu.Unlock()
}

func (r *jobRegistry) leave(run *JobRunner) {
	r.mu.Lock()
	delete(r.runners, run)
	r.mu.Unlock()
}

// liveOwners are the lease owners of the runners started on these services and not yet
// stopped (a stopping one counts until its runs have ended).
func (r *jobRegistry) liveOwners() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]string, 0, len(r.runners))
	for run := range r.runners {
		out = append(out, run.opts.Owner)
	}
	return out
}

// wake tells every started runner that a job may be due.
func (r *jobRegistry) wake() {
	r.mu.RLock()
	defer r.mu.RUnlock()
	for run := range r.runners {
		run.Wake()
	}
}

func (r *jobRegistry) count(kind, outcome string) {
	r.mu.Lock()
	r.runs[[2]string{kind, outcome}]++
	r.mu.Unlock()
}

// JobService is the job mechanism's face to features, the API and the serving command:
// kinds, enqueues, reads, metrics and runners.
type JobService struct{ *base }

var _ data.JobService = (*JobService)(nil)

// Register adds a kind. Features register theirs when the services are built (New), so
// that every process knows every kind, whether or not it runs jobs. A kind without a
// name, module or handler, or registered twice, is a programming error: Register panics.
func (s *JobService) Register(k JobKind) {
	switch {
	case k.Name == "" || k.Handle == nil:
		panic("service: a job kind needs a name and a handler")
	case !slices.Contains(data.JobModules, k.Module):
		panic(fmt.Sprintf("service: job kind %s: module %q is not one of data.JobModules %v", k.Name, k.Module, data.JobModules))
	}
	if k.MaxAttempts <= 0 {
		k.MaxAttempts = DefaultJobMaxAttempts
	}
	if k.Backoff == nil {
		k.Backoff = ExponentialBackoff(DefaultJobBackoffBase, DefaultJobBackoffMax)
	}
	r := s.jobs
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.kinds[k.Name] != nil {
		panic("service: job kind " + k.Name + " is registered twice")
	}
	r.kinds[k.Name] = &k
}

// Enqueue queues a job in tx, the transaction of the feature's write that asks for it,
// so that both commit or neither does; the process's runners are woken once tx commits.
// With in.UniqueKey set and that work already pending, it returns the pending job and
// queues nothing. An unregistered kind, a workspace missing, or a payload that is not
// JSON or is over MaxJobPayload is refused (a programming error, not the caller's).
func (s *JobService) Enqueue(tx Tx, in data.JobEnqueue) (*data.JobRecord, error) {
	return s.enqueueJob(tx, in)
}

func (b *base) enqueueJob(tx Tx, in data.JobEnqueue) (*data.JobRecord, error) {
	k := b.jobs.kind(in.Kind)
	switch {
	case k == nil:
		return nil, fmt.Errorf("enqueue: job kind %q is not registered", in.Kind)
	case in.WorkspaceID == "":
		return nil, fmt.Errorf("enqueue %s: a job belongs to a workspace", in.Kind)
	case len(in.Payload) > MaxJobPayload:
		return nil, fmt.Errorf("enqueue %s: a payload of %d bytes is over %d", in.Kind, len(in.Payload), MaxJobPayload)
	case len(in.Payload) > 0 && !json.Valid(in.Payload):
		return nil, fmt.Errorf("enqueue %s: the payload is not JSON", in.Kind)
	}
	now := b.timeNow()
	j := &data.JobRecord{Job: data.Job{ID: b.ids.New(data.PrefixJob), WorkspaceID: in.WorkspaceID, Kind: in.Kind,
		Status: data.JobQueued, MaxAttempts: in.MaxAttempts, RunAt: now, CreatedAt: now},
		Payload: in.Payload, UniqueKey: in.UniqueKey}
	if j.MaxAttempts <= 0 {
		j.MaxAttempts = k.MaxAttempts
	}
	if in.AgentID != "" {
		agent := in.AgentID
		j.AgentID = &agent
	}
	if !in.RunAt.IsZero() {
		j.RunAt = data.NewTime(in.RunAt)
	}
	stored, err := tx.EnqueueJob(j)
	if err != nil {
		return nil, err
	}
	tx.OnCommit(b.jobs.wake)
	return stored, nil
}

// Cancel cancels a pending job in tx and reports whether it did (a final job stays as it
// is). A running job's worker finds its lease gone at its next heartbeat and stops.
func (s *JobService) Cancel(tx Tx, id string) (bool, error) {
	return tx.CancelJob(id, s.now())
}

// JobQueues implements data.JobService: every registered kind, those without pending
// jobs at zero, and any other kind storage holds.
func (s *JobService) JobQueues(ctx context.Context) ([]data.JobQueueStat, error) {
	var stored []data.JobQueueStat
	now := s.now()
	if err := s.store.View(ctx, func(tx Tx) (err error) {
		stored, err = tx.JobQueueStats(now)
		return err
	}); err != nil {
		return nil, err
	}
	byKind := map[string]data.JobQueueStat{}
	for _, st := range stored {
		byKind[st.Kind] = st
	}
	for _, name := range s.jobs.names() {
		if _, ok := byKind[name]; !ok {
			byKind[name] = data.JobQueueStat{Kind: name}
		}
	}
	out := make([]data.JobQueueStat, 0, len(byKind))
	for _, st := range byKind {
		out = append(out, st)
	}
	slices.SortFunc(out, func(a, b data.JobQueueStat) int { return cmp.Compare(a.Kind, b.Kind) })
	return out, nil
}

// JobRuns implements data.JobService.
func (s *JobService) JobRuns() []data.JobRunCount {
	r := s.jobs
	r.mu.RLock()
	out := make([]data.JobRunCount, 0, len(r.runs))
	for k, n := range r.runs {
		out = append(out, data.JobRunCount{Kind: k[0], Outcome: k[1], Count: n})
	}
	r.mu.RUnlock()
	slices.SortFunc(out, func(a, b data.JobRunCount) int {
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Outcome, b.Outcome))
	})
	return out
}

// DefaultJobRetention is how long finished jobs are kept before PruneJobs deletes them.
const DefaultJobRetention = 7 * 24 * time.Hour

// JobPruneBatch bounds the jobs one PruneJobs transaction deletes.
const JobPruneBatch = 500

// PruneJobs deletes up to JobPruneBatch jobs that finished more than retention ago, in
// one transaction, and returns how many it deleted (fewer than JobPruneBatch: none older
// is left). Pending jobs are never deleted.
func (s *JobService) PruneJobs(ctx context.Context, retention time.Duration) (int, error) {
	before := s.now().Add(-retention)
	var n int
	err := s.store.Update(ctx, func(tx Tx) (err error) {
		n, err = tx.PruneJobs(before, JobPruneBatch)
		return err
	})
	return n, err
}

// inBatches runs batch, each in its own write transaction, until one handles fewer than
// size: a job's unbounded delete or cut keeps every write short, and a run again after a
// crash goes on from what is left.
func inBatches(ctx context.Context, store Store, size int, batch func(Tx) (int, error)) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := 0
		if err := store.Update(ctx, func(tx Tx) (err error) {
			n, err = batch(tx)
			return err
		}); err != nil {
			return err
		}
		if n < size {
			return nil
		}
	}
}
