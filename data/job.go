package data

import (
	"context"
	"slices"
	"time"
)

// PrefixJob starts the id of a background job (conventions §3, §26).
const PrefixJob = "job_"

// Job statuses. A job is queued until a runner claims it, running while a worker holds
// its lease, and queued again when a transient failure is retried (attempt and
// last_error tell it apart from a new one). Succeeded, failed and canceled are final.
const (
	JobQueued    = "queued"
	JobRunning   = "running"
	JobSucceeded = "succeeded"
	JobFailed    = "failed"
	JobCanceled  = "canceled"
)

// JobModules are the modules a job kind may be registered with (the module that reads
// its jobs): the console shows its Jobs section to members who hold one of them, and
// service.JobService.Register refuses a kind of another, so the two cannot drift.
var JobModules = []string{ModuleAgents, ModuleKnowledgeBase, ModuleCallHistory}

// JobStatuses lists every job status, in the order of a job's life.
var JobStatuses = []string{JobQueued, JobRunning, JobSucceeded, JobFailed, JobCanceled}

// JobFinished reports whether status is final.
func JobFinished(status string) bool {
	return status == JobSucceeded || status == JobFailed || status == JobCanceled
}

// JobProgress is how far a job has come, as its handler last reported it: Done of Total
// units (test cases, calls, chunks...); both 0 until the handler says.
type JobProgress struct {
	Done  int64 `json:"done"`
	Total int64 `json:"total"`
}

// Job is a durable background job as the API shows it (GET /api/v1/jobs/{job_id}): what
// it is, where it stands, how far it came and why it last failed. What the feature asked
// for (the payload) and who holds it (the lease) stay inside (JobRecord).
type Job struct {
	ID          string `json:"id"`
	WorkspaceID string `json:"workspace_id"`
	// AgentID is the agent the job works for, when it works for one; a caller limited
	// to other agents does not see the job.
	AgentID     *string     `json:"agent_id"`
	Kind        string      `json:"kind"`
	Status      string      `json:"status"`
	Attempt     int         `json:"attempt"`
	MaxAttempts int         `json:"max_attempts"`
	Progress    JobProgress `json:"progress"`
	LastError   *string     `json:"last_error"`
	// RunAt is when the job is (or was) due: when it was queued, or when its retry is.
	RunAt      Time  `json:"run_at"`
	CreatedAt  Time  `json:"created_at"`
	StartedAt  *Time `json:"started_at"`
	FinishedAt *Time `json:"finished_at"`
}

// JobFailure is job.failed's data: the job as GET /api/v1/jobs/{job_id} shows it once it
// failed for good (last_error scrubbed of the credentials the job's work could meet), and
// the records its work concerns, read from what the job was asked to do (null when its
// kind's work names none).
type JobFailure struct {
	Job
	KnowledgeBaseID *string `json:"knowledge_base_id"`
	CampaignID      *string `json:"campaign_id"`
	CallID          *string `json:"call_id"`
	TestRunID       *string `json:"test_run_id"`
}

// JobRecord is a job as storage keeps it: the record the API shows, the feature's
// payload and checkpoint, the unique key, and the lease of the worker running it.
type JobRecord struct {
	Job
	// Payload is the feature's own description of the work (JSON), as enqueued.
	Payload []byte `json:"payload"`
	// Checkpoint is where the handler last said it stood (opaque to everyone else), so a
	// run after a crash resumes there instead of starting over.
	Checkpoint string `json:"checkpoint"`
	// UniqueKey, when set, makes the job the only pending (queued or running) job of its
	// workspace and kind with this key: a second enqueue returns the first job.
	UniqueKey string `json:"unique_key"`
	// LeaseOwner names the runner that holds the job while it runs ("" otherwise), and
	// LeaseUntil is when its lease ends unless the runner extends it.
	LeaseOwner string `json:"lease_owner"`
	LeaseUntil *Time  `json:"lease_until"`
	// HastenTo is set when the job was asked to hurry (service.JobTx.HastenJob) while it
	// ran: the retry that run queues is due by then rather than after its backoff, since
	// what the run waited for (a provider that hung) is back. Claims and outcomes clear it.
	HastenTo *Time `json:"hasten_to,omitempty"`
}

// RetryAt is when the retry a run queues for at falls due: at, or sooner when the job was
// asked to hurry during the run (HastenTo).
func (j *JobRecord) RetryAt(at time.Time) time.Time {
	if j.HastenTo != nil && j.HastenTo.Before(at) {
		return j.HastenTo.Time
	}
	return at
}

// DueAt is when a runner may next claim the job: its run_at while queued, the end of its
// lease while running (a worker that died leaves it claimable then), never when final.
func (j *JobRecord) DueAt() (time.Time, bool) {
	switch j.Status {
	case JobQueued:
		return j.RunAt.Time, true
	case JobRunning:
		if j.LeaseUntil == nil {
			return time.Time{}, false
		}
		return j.LeaseUntil.Time, true
	}
	return time.Time{}, false
}

// Lease is the claim a run holds: the runner and the attempt it claimed. Heartbeats,
// progress and outcomes are stored only while the job still carries both, so a worker
// that lost its lease (another runner claimed the job after it expired) can never
// overwrite what the new holder does.
func (j *JobRecord) Lease() JobLease { return JobLease{Owner: j.LeaseOwner, Attempt: j.Attempt} }

// JobLease names one run of a job: the runner holding it and the attempt it claimed.
type JobLease struct {
	Owner   string
	Attempt int
}

// Holds reports whether j is running under lease l.
func (j *JobRecord) Holds(l JobLease) bool {
	return j.Status == JobRunning && j.LeaseOwner == l.Owner && j.Attempt == l.Attempt
}

// JobEnqueue is what a feature asks for when it queues a job (service.JobService.Enqueue),
// inside the transaction that records why.
type JobEnqueue struct {
	// WorkspaceID is the workspace the job belongs to: its readers, its deletion.
	WorkspaceID string
	// AgentID, when set, limits who sees the job to callers who may see that agent.
	AgentID string
	// Kind names the registered kind whose handler runs the job.
	Kind string
	// Payload is the feature's JSON description of the work; empty for none.
	Payload []byte
	// RunAt is when the job becomes due; now when zero.
	RunAt time.Time
	// MaxAttempts bounds its runs; the kind's default when 0.
	MaxAttempts int
	// UniqueKey, when set, makes a second enqueue of the same pending work return the
	// pending job instead of adding one (see JobRecord.UniqueKey).
	UniqueKey string
}

// JobClaim asks storage for due jobs: up to Limit jobs of Kinds whose due time is at or
// before Now, oldest due first, each leased to Owner until LeaseUntil.
type JobClaim struct {
	Kinds      []string
	Owner      string
	Now        time.Time
	LeaseUntil time.Time
	Limit      int
}

// JobOutcome is how a run ends, stored only while the run still holds its lease.
type JobOutcome struct {
	// Status is JobSucceeded, JobFailed or JobCanceled (final, FinishedAt set), or
	// JobQueued: run again at RunAt.
	Status string
	// RunAt is when a queued job is due again.
	RunAt time.Time
	// At is when the run ended (finished_at of a final status).
	At time.Time
	// Error is the run's failure for last_error; "" keeps the last one (a success clears
	// nothing, so a job that succeeded after retries still tells why it had to).
	Error string
	// Uncounted gives the attempt back: the run was stopped by its server before it could
	// end (a drain), so it does not count against max_attempts.
	Uncounted bool
}

// JobQueueStat is one kind's queue for /metrics: jobs waiting (due now or later),
// jobs running, and how long the oldest due job has waited (0 when none is due).
type JobQueueStat struct {
	Kind         string
	Queued       int64
	Running      int64
	OldestDueAge time.Duration
}

// JobRunCount is how the runs of one kind ended in this process, since it started: the
// outcomes of /metrics (succeeded, retried, failed, lease_lost, stopped).
type JobRunCount struct {
	Kind    string
	Outcome string
	Count   int64
}

// JobFilter narrows a list of jobs (GET /api/v1/jobs); zero fields keep everything.
type JobFilter struct {
	Kind    string
	Status  string
	AgentID string
	// From (inclusive) and To (exclusive) bound created_at; zero means unbounded.
	From, To time.Time
}

// JobSelection is what storage lists: a caller's filter within what the caller may read.
type JobSelection struct {
	JobFilter
	// Kinds are the kinds the caller may read (those whose module it holds); an empty
	// list selects nothing.
	Kinds []string
	// Agents, when not nil, are the agents whose jobs the caller may see, beside the jobs
	// that work for no agent; nil sees every agent's.
	Agents []string
	// AgentKinds are kinds whose jobs each work for one agent: a job of one of them that
	// names no agent (queued before its kind recorded it) may concern any agent, so it is
	// selected only when Agents is nil.
	AgentKinds []string
}

// MaxJobListWalks bounds the index walks one page of a job list merges, on either storage
// engine: bbolt merges a scope per agent and kind (bolt/jobs_index.go), PostgreSQL walks
// each agent and each kind of jobs of no agent (postgres/jobs_list.go). A caller limited
// to agents whose walks would pass it is served by a walk of the workspace's jobs that
// checks the agent on each (docs/jobs.md, "What a page costs").
const MaxJobListWalks = 128

// Keeps reports whether s selects j: the one predicate of a job list, which both storage
// engines answer and the service's read of one job applies.
func (s JobSelection) Keeps(j *Job) bool {
	agent := ""
	if j.AgentID != nil {
		agent = *j.AgentID
	}
	return slices.Contains(s.Kinds, j.Kind) &&
		(s.Agents == nil || agent == "" && !slices.Contains(s.AgentKinds, j.Kind) || slices.Contains(s.Agents, agent)) &&
		(s.Kind == "" || j.Kind == s.Kind) &&
		(s.Status == "" || j.Status == s.Status) &&
		(s.AgentID == "" || agent == s.AgentID) &&
		s.InRange(j.ID)
}

// InRange reports whether job id was created within [From, To): read from the id, which
// is made on the clock that sets created_at (conventions §3), so that storage seeks the
// range in its id index as the call list does.
func (s JobFilter) InRange(id string) bool {
	return (s.From.IsZero() || id >= IDBound(PrefixJob, s.From)) &&
		(s.To.IsZero() || id < IDBound(PrefixJob, s.To))
}

// JobService reads jobs for the API and the metrics.
type JobService interface {
	// ListJobs lists the caller's workspace's jobs that f selects and the caller may read
	// (as Job decides for one), newest first. Errors: validation_failed (kind not
	// registered, to not after from, cursor).
	ListJobs(ctx context.Context, f JobFilter, req PageRequest) ([]*Job, Page, error)
	// Job returns a job of the caller's workspace when the caller holds the module its
	// kind was registered with (and may see its agent). Errors: not_found (unknown id,
	// another workspace's job, a kind the caller may not read).
	Job(ctx context.Context, id string) (*Job, error)
	// JobQueues returns every registered kind's queue, now.
	JobQueues(ctx context.Context) ([]JobQueueStat, error)
	// JobRuns returns how this process's runs ended, per kind and outcome.
	JobRuns() []JobRunCount
}
