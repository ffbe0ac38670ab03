package postgres

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/voiceapi/voiceapi/data"
)

// jobColumns are the columns a job is read from, in scanJob's order, each named
// through table alias a ("" for none).
func jobColumns(a string) string {
	if a != "" {
		a += "."
	}
	return strings.ReplaceAll(`@id, @workspace_id, @agent_id, @kind, @payload, @status, @attempt, @max_attempts, @run_at,
	@lease_owner, @lease_until, @last_error, @progress_done, @progress_total, @checkpoint, coalesce(@unique_key, ''),
	@created_at, @started_at, @finished_at, @hasten_to`, "@", a)
}

// jobCols are the columns of a job read from the jobs table alone.
var jobCols = jobColumns("")

func scanJob(row pgx.Row, extra ...any) (*data.JobRecord, error) {
	var j data.JobRecord
	var runAt, created time.Time
	var leaseUntil, started, finished, hastenTo *time.Time
	dest := append(extra, &j.ID, &j.WorkspaceID, &j.AgentID, &j.Kind, &j.Payload, &j.Status, &j.Attempt, &j.MaxAttempts, &runAt,
		&j.LeaseOwner, &leaseUntil, &j.LastError, &j.Progress.Done, &j.Progress.Total, &j.Checkpoint, &j.UniqueKey,
		&created, &started, &finished, &hastenTo)
	if err := row.Scan(dest...); err != nil {
		return nil, err
	}
	j.RunAt, j.CreatedAt = data.NewTime(runAt), data.NewTime(created)
	j.LeaseUntil, j.StartedAt, j.FinishedAt, j.HastenTo = timePtr(leaseUntil), timePtr(started), timePtr(finished), timePtr(hastenTo)
	return &j, nil
}

// dueCut is the bound of due times at now: due means due_at < dueCut(now), at millisecond
// precision as the bbolt engine's due keys.
func dueCut(now time.Time) time.Time { return time.UnixMilli(max(now.UnixMilli(), 0) + 1) }

// nullable is s as a query argument, NULL when empty.
func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// sqlDue is j's due_at as a query argument.
func sqlDue(j *data.JobRecord) any {
	if at, ok := j.DueAt(); ok {
		return at
	}
	return nil
}

// EnqueueJob implements service.JobTx. A pending job with the same unique key makes the
// insert do nothing (the partial unique index); the job found is returned instead.
func (t *tx) EnqueueJob(j *data.JobRecord) (*data.JobRecord, error) {
	var agentID any
	if j.AgentID != nil {
		agentID = *j.AgentID
	}
	tag, err := t.exec(`INSERT INTO jobs (id, workspace_id, agent_id, kind, payload, status, attempt, max_attempts, run_at, due_at,
			lease_owner, lease_until, last_error, progress_done, progress_total, checkpoint, unique_key, created_at, started_at, finished_at, hasten_to)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21)
		ON CONFLICT (workspace_id, kind, unique_key) WHERE unique_key IS NOT NULL AND status IN ('queued', 'running') DO NOTHING`,
		j.ID, j.WorkspaceID, agentID, j.Kind, payloadBytes(j.Payload), j.Status, j.Attempt, j.MaxAttempts, j.RunAt.Time, sqlDue(j),
		j.LeaseOwner, sqlTime(j.LeaseUntil), j.LastError, j.Progress.Done, j.Progress.Total, j.Checkpoint, nullable(j.UniqueKey),
		j.CreatedAt.Time, sqlTime(j.StartedAt), sqlTime(j.FinishedAt), sqlTime(j.HastenTo))
	if err != nil || tag.RowsAffected() == 1 {
		return j, err
	}
	existing, err := scanJob(t.queryRow(`SELECT `+jobCols+` FROM jobs
		WHERE workspace_id = $1 AND kind = $2 AND unique_key = $3 AND status IN ('queued', 'running')`, j.WorkspaceID, j.Kind, j.UniqueKey))
	return existing, err
}

// HastenJob implements service.JobTx: a queued job's due_at is its run_at; a running
// one's hasten_to is read by FinishJob.
func (t *tx) HastenJob(id string, at time.Time) (bool, error) {
	at = data.NewTime(at).Time
	tag, err := t.exec(`UPDATE jobs SET run_at = CASE WHEN status = 'queued' THEN $2 ELSE run_at END,
			due_at = CASE WHEN status = 'queued' THEN $2 ELSE due_at END,
			hasten_to = CASE WHEN status = 'running' THEN $2 ELSE hasten_to END
		WHERE id = $1 AND (status = 'queued' AND run_at > $2 OR status = 'running' AND (hasten_to IS NULL OR hasten_to > $2))`, id, at)
	return err == nil && tag.RowsAffected() == 1, err
}

// payloadBytes is a payload as the NOT NULL column takes it.
func payloadBytes(p []byte) []byte {
	if p == nil {
		return []byte{}
	}
	return p
}

// ClaimJobs implements service.JobTx: one statement leases the due rows it reads FOR
// UPDATE SKIP LOCKED, so replicas claiming at once pass over each other's rows instead of
// waiting for them. The next due time is read without locks, from the jobs not yet due.
func (t *tx) ClaimJobs(c data.JobClaim) ([]*data.JobRecord, time.Time, error) {
	if c.Limit <= 0 {
		next, err := t.nextDueJob(c, []string{})
		return nil, next, err
	}
	until, now := data.NewTime(c.LeaseUntil).Time, data.NewTime(c.Now).Time
	rows, err := t.query(`WITH due AS (
			SELECT id, due_at FROM jobs WHERE due_at < $1 AND kind = ANY($2) ORDER BY due_at, id LIMIT $3 FOR UPDATE SKIP LOCKED)
		UPDATE jobs j SET status = 'running', attempt = j.attempt + 1, lease_owner = $4, lease_until = $5, due_at = $5,
			started_at = coalesce(j.started_at, $6), hasten_to = NULL
		FROM due WHERE j.id = due.id
		RETURNING due.due_at, `+jobColumns("j"), dueCut(c.Now), c.Kinds, c.Limit, c.Owner, until, now)
	if err != nil {
		return nil, time.Time{}, err
	}
	type claimed struct {
		due time.Time
		job *data.JobRecord
	}
	var list []claimed
	for rows.Next() {
		var cl claimed
		if cl.job, err = scanJob(rows, &cl.due); err != nil {
			rows.Close()
			return nil, time.Time{}, err
		}
		list = append(list, cl)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, time.Time{}, err
	}
	// RETURNING follows no order: put them back in due order.
	slices.SortFunc(list, func(a, b claimed) int {
		if c := a.due.Compare(b.due); c != 0 {
			return c
		}
		return strings.Compare(a.job.ID, b.job.ID)
	})
	jobs := make([]*data.JobRecord, len(list))
	ids := make([]string, len(list))
	for i, cl := range list {
		jobs[i], ids[i] = cl.job, cl.job.ID
	}
	if len(jobs) == c.Limit {
		return jobs, c.Now, nil // more may be due now
	}
	next, err := t.nextDueJob(c, ids)
	return jobs, next, err
}

// nextDueJob returns when the first job of c.Kinds not yet due at c.Now, other than
// claimed, falls due; zero when none will.
func (t *tx) nextDueJob(c data.JobClaim, claimed []string) (time.Time, error) {
	var next *time.Time
	err := t.queryRow(`SELECT due_at FROM jobs WHERE due_at >= $1 AND kind = ANY($2) AND NOT (id = ANY($3))
		ORDER BY due_at, id LIMIT 1`, dueCut(c.Now), c.Kinds, claimed).Scan(&next)
	if err = noRows(err); err != nil || next == nil {
		return time.Time{}, err
	}
	return *next, nil
}

// leaseHeld is the condition of a write that a run may only make while it holds the job.
const leaseHeld = `id = $1 AND status = 'running' AND lease_owner = $2 AND attempt = $3`

// ExtendJobLease implements service.JobTx.
func (t *tx) ExtendJobLease(id string, lease data.JobLease, until time.Time) (bool, error) {
	tag, err := t.exec(`UPDATE jobs SET lease_until = $4, due_at = $4 WHERE `+leaseHeld,
		id, lease.Owner, lease.Attempt, data.NewTime(until).Time)
	return err == nil && tag.RowsAffected() == 1, err
}

// SetJobProgress implements service.JobTx.
func (t *tx) SetJobProgress(id string, lease data.JobLease, p data.JobProgress, checkpoint string) (bool, error) {
	tag, err := t.exec(`UPDATE jobs SET progress_done = $4, progress_total = $5, checkpoint = $6 WHERE `+leaseHeld,
		id, lease.Owner, lease.Attempt, p.Done, p.Total, checkpoint)
	return err == nil && tag.RowsAffected() == 1, err
}

// FinishJob implements service.JobTx.
func (t *tx) FinishJob(id string, lease data.JobLease, out data.JobOutcome) (bool, error) {
	var runAt, finishedAt *time.Time
	if out.Status == data.JobQueued {
		at := data.NewTime(out.RunAt).Time
		runAt = &at
	} else {
		at := data.NewTime(out.At).Time
		finishedAt = &at
	}
	uncounted := 0
	if out.Uncounted {
		uncounted = 1
	}
	// A retry is due at run_at, or at hasten_to when that is sooner (data.JobRecord.RetryAt;
	// least passes over a null); a final job is due never.
	tag, err := t.exec(`UPDATE jobs SET status = $4, run_at = CASE WHEN $5::timestamptz IS NULL THEN run_at ELSE least($5, hasten_to) END,
			due_at = CASE WHEN $5::timestamptz IS NULL THEN NULL ELSE least($5, hasten_to) END, finished_at = $6,
			last_error = coalesce($7, last_error), attempt = attempt - $8, lease_owner = '', lease_until = NULL, hasten_to = NULL
		WHERE `+leaseHeld,
		id, lease.Owner, lease.Attempt, out.Status, runAt, finishedAt, nullable(out.Error), uncounted)
	return err == nil && tag.RowsAffected() == 1, err
}

// EndJobLeases implements service.JobTx. The runner calls it only on a store one process
// opens; replicas sharing this one may hold live leases (docs/jobs.md).
func (t *tx) EndJobLeases(now time.Time, alive []string) (int, error) {
	end := data.NewTime(now).Time
	if alive == nil {
		alive = []string{}
	}
	tag, err := t.exec(`UPDATE jobs SET lease_until = $1, due_at = $1
		WHERE status = 'running' AND lease_until > $1 AND lease_owner <> ALL($2)`, end, alive)
	return int(tag.RowsAffected()), err
}

// CancelJob implements service.JobTx.
func (t *tx) CancelJob(id string, at time.Time) (bool, error) {
	tag, err := t.exec(`UPDATE jobs SET status = 'canceled', due_at = NULL, lease_owner = '', lease_until = NULL, finished_at = $2
		WHERE id = $1 AND status IN ('queued', 'running')`, id, data.NewTime(at).Time)
	return err == nil && tag.RowsAffected() == 1, err
}

// Job implements service.JobTx.
func (t *tx) Job(id string) (*data.JobRecord, error) {
	j, err := scanJob(t.queryRow(`SELECT `+jobCols+` FROM jobs WHERE id = $1`, id))
	if err != nil {
		return nil, noRows(err)
	}
	return j, nil
}

// Jobs implements service.JobTx.
func (t *tx) Jobs(workspaceID string, req data.PageRequest) ([]*data.JobRecord, data.Page, error) {
	return pageRows(t, inWorkspace("jobs", jobCols, workspaceID), req, func(rows pgx.Rows) (*data.JobRecord, string, error) {
		j, err := scanJob(rows)
		if err != nil {
			return nil, "", err
		}
		return j, j.ID, nil
	})
}

// JobQueueStats implements service.JobTx: one pass over the pending rows (the due index).
func (t *tx) JobQueueStats(now time.Time) ([]data.JobQueueStat, error) {
	cut := dueCut(now)
	rows, err := t.query(`SELECT kind, count(*) FILTER (WHERE status = 'queued'), count(*) FILTER (WHERE status = 'running'),
			min(due_at) FILTER (WHERE due_at < $1)
		FROM jobs WHERE due_at IS NOT NULL GROUP BY kind ORDER BY kind`, cut)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []data.JobQueueStat
	for rows.Next() {
		var st data.JobQueueStat
		var oldest *time.Time
		if err := rows.Scan(&st.Kind, &st.Queued, &st.Running, &oldest); err != nil {
			return nil, err
		}
		if oldest != nil {
			st.OldestDueAge = time.Duration(cut.UnixMilli()-1-oldest.UnixMilli()) * time.Millisecond
		}
		out = append(out, st)
	}
	return out, rows.Err()
}

// PruneJobs implements service.JobTx: the oldest final rows by id (a range of the primary
// key up to before's first id), limit at a time.
func (t *tx) PruneJobs(before time.Time, limit int) (int, error) {
	tag, err := t.exec(`DELETE FROM jobs WHERE id IN (
		SELECT id FROM jobs WHERE id < $1 AND due_at IS NULL AND finished_at < $2 ORDER BY id LIMIT $3)`,
		data.IDFloor(data.PrefixJob, before), before, limit)
	if err != nil {
		return 0, err
	}
	return int(tag.RowsAffected()), nil
}

func deleteWorkspaceJobs(t *tx, workspaceID string) error {
	_, err := t.exec(`DELETE FROM jobs WHERE workspace_id = $1`, workspaceID)
	return err
}

func init() {
	workspaceCascades = append(workspaceCascades, deleteWorkspaceJobs)
}

// ClaimJobs implements service.JobClaimStore: the claim of ClaimJobs in a READ COMMITTED
// transaction of its own. There FOR UPDATE SKIP LOCKED passes over the rows other
// replicas are claiming and re-reads a row another claim committed meanwhile (it is no
// longer due, so it is passed over too); in a SERIALIZABLE transaction the latter is a
// serialization failure, and replicas claiming at once kept failing each other's claims.
// The statement is atomic on its own: each row it leases was due and unlocked when it
// took it.
func (db *DB) ClaimJobs(ctx context.Context, c data.JobClaim) ([]*data.JobRecord, time.Time, error) {
	var jobs []*data.JobRecord
	var next time.Time
	// Behind the fence (a newer binary's jobs are not this one's to run): writeOnce.
	err := db.writeOnce(ctx, func(t *tx) (err error) {
		jobs, next, err = t.ClaimJobs(c)
		return err
	})
	if err != nil {
		return nil, time.Time{}, err
	}
	return jobs, next, nil
}
