package storetest

import (
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// held runs one of the writes a run may make only while it holds its lease, in its own
// transaction, and returns whether it did.
func held(t testing.TB, s service.Store, fn func(tx service.Tx) (bool, error)) bool {
	t.Helper()
	var ok bool
	update(t, s, func(tx service.Tx) (err error) {
		ok, err = fn(tx)
		return err
	})
	return ok
}

// testJobsLeases: a claim leases a job to its owner; a second claim passes over it while
// the lease runs and takes it (attempt counted again) once it ends; from then on the
// first run's heartbeat, progress and outcome change nothing, and the new holder's do.
func testJobsLeases(t *testing.T, open Opener) {
	s := open(t)
	j := queuedJob(wsIDs[0], "k", jobEpoch)
	enqueue(t, s, j)
	leaseA := jobEpoch.Add(time.Minute)
	got, _ := claim(t, s, data.JobClaim{Kinds: []string{"k"}, Owner: "runner-a", Now: jobEpoch, LeaseUntil: leaseA, Limit: 5})
	if len(got) != 1 {
		t.Fatalf("claimed %v, want the job", jobIDs(got))
	}
	a := got[0]
	if a.Status != data.JobRunning || a.Attempt != 1 || a.LeaseOwner != "runner-a" || a.LeaseUntil == nil || !a.LeaseUntil.Equal(leaseA) ||
		a.StartedAt == nil || !a.StartedAt.Equal(jobEpoch) {
		t.Errorf("claimed job = %+v, want running, attempt 1, leased to runner-a until %v, started now", a, leaseA)
	}
	if st := storedJob(t, s, j.ID); st.Status != data.JobRunning || st.LeaseOwner != "runner-a" || st.Attempt != 1 {
		t.Errorf("stored after the claim: %+v", st)
	}
	if got, _ := claim(t, s, data.JobClaim{Kinds: []string{"k"}, Owner: "runner-b", Now: leaseA.Add(-time.Millisecond), LeaseUntil: leaseA.Add(time.Hour), Limit: 5}); len(got) != 0 {
		t.Errorf("a claim while the lease runs took %v", jobIDs(got))
	}
	// A heartbeat moves the lease; progress is stored.
	extended := leaseA.Add(time.Minute)
	if !held(t, s, func(tx service.Tx) (bool, error) { return tx.ExtendJobLease(j.ID, a.Lease(), extended) }) {
		t.Fatal("the holder's heartbeat found its lease gone")
	}
	if !held(t, s, func(tx service.Tx) (bool, error) {
		return tx.SetJobProgress(j.ID, a.Lease(), data.JobProgress{Done: 2, Total: 5}, "call_2")
	}) {
		t.Fatal("the holder's progress found its lease gone")
	}
	if got, _ := claim(t, s, data.JobClaim{Kinds: []string{"k"}, Owner: "runner-b", Now: leaseA.Add(time.Second), LeaseUntil: leaseA.Add(time.Hour), Limit: 5}); len(got) != 0 {
		t.Errorf("a claim after the first lease's end but within the extension took %v", jobIDs(got))
	}
	// The lease ends without a heartbeat: runner-b takes the job over.
	leaseB := extended.Add(time.Hour)
	got, _ = claim(t, s, data.JobClaim{Kinds: []string{"k"}, Owner: "runner-b", Now: extended, LeaseUntil: leaseB, Limit: 5})
	if len(got) != 1 || got[0].Attempt != 2 || got[0].LeaseOwner != "runner-b" || !got[0].StartedAt.Equal(jobEpoch) ||
		got[0].Progress != (data.JobProgress{Done: 2, Total: 5}) || got[0].Checkpoint != "call_2" {
		t.Fatalf("claim after the lease ended = %+v, want attempt 2 for runner-b, first start and checkpoint kept", got)
	}
	b := got[0]
	stale := []struct {
		name string
		fn   func(tx service.Tx) (bool, error)
	}{
		{"heartbeat", func(tx service.Tx) (bool, error) { return tx.ExtendJobLease(j.ID, a.Lease(), leaseB.Add(time.Hour)) }},
		{"progress", func(tx service.Tx) (bool, error) {
			return tx.SetJobProgress(j.ID, a.Lease(), data.JobProgress{Done: 9, Total: 9}, "stale")
		}},
		{"outcome", func(tx service.Tx) (bool, error) {
			return tx.FinishJob(j.ID, a.Lease(), data.JobOutcome{Status: data.JobFailed, At: extended, Error: "stale"})
		}},
		{"another owner's attempt", func(tx service.Tx) (bool, error) {
			return tx.FinishJob(j.ID, data.JobLease{Owner: "runner-a", Attempt: 2}, data.JobOutcome{Status: data.JobFailed, At: extended})
		}},
	}
	for _, w := range stale {
		if held(t, s, w.fn) {
			t.Errorf("the first run's %s was stored after its lease was taken over", w.name)
		}
	}
	st := storedJob(t, s, j.ID)
	if st.Status != data.JobRunning || st.LeaseOwner != "runner-b" || !st.LeaseUntil.Equal(leaseB) || st.Progress.Done != 2 ||
		st.Checkpoint != "call_2" || st.LastError != nil {
		t.Errorf("after the stale writes: %+v, want runner-b's run untouched", st)
	}
	// The holder's outcome is stored, and the job leaves the claims.
	finish(t, s, j.ID, b.Lease(), data.JobOutcome{Status: data.JobSucceeded, At: extended.Add(time.Second)})
	st = storedJob(t, s, j.ID)
	if st.Status != data.JobSucceeded || st.FinishedAt == nil || !st.FinishedAt.Equal(extended.Add(time.Second)) || st.LeaseOwner != "" ||
		st.LeaseUntil != nil || st.Attempt != 2 {
		t.Errorf("after success: %+v", st)
	}
	if got, _ := claim(t, s, data.JobClaim{Kinds: []string{"k"}, Owner: "runner-c", Now: leaseB.Add(time.Hour), LeaseUntil: leaseB.Add(2 * time.Hour), Limit: 5}); len(got) != 0 {
		t.Errorf("a finished job was claimed again: %v", jobIDs(got))
	}
	if held(t, s, func(tx service.Tx) (bool, error) { return tx.ExtendJobLease(j.ID, b.Lease(), leaseB.Add(time.Hour)) }) {
		t.Error("a heartbeat of a finished job was stored")
	}
}

// testJobsReschedule: a retry queues the job again at its time with the error kept; an
// uncounted run gives its attempt back; a cancel stops a queued or running job for good.
func testJobsReschedule(t *testing.T, open Opener) {
	s := open(t)
	j := queuedJob(wsIDs[0], "k", jobEpoch)
	enqueue(t, s, j)
	lease := data.JobClaim{Kinds: []string{"k"}, Owner: "a", Now: jobEpoch, LeaseUntil: jobEpoch.Add(time.Minute), Limit: 1}
	got, _ := claim(t, s, lease)
	retryAt := jobEpoch.Add(10 * time.Second)
	finish(t, s, j.ID, got[0].Lease(), data.JobOutcome{Status: data.JobQueued, RunAt: retryAt, Error: "provider busy"})
	st := storedJob(t, s, j.ID)
	if st.Status != data.JobQueued || !st.RunAt.Equal(retryAt) || st.LastError == nil || *st.LastError != "provider busy" ||
		st.Attempt != 1 || st.LeaseOwner != "" || st.LeaseUntil != nil || st.FinishedAt != nil {
		t.Errorf("after a retry: %+v", st)
	}
	if got, next := claim(t, s, lease); len(got) != 0 || !next.Equal(retryAt) {
		t.Errorf("claim before the retry's time = %v, next %v; want nothing until %v", jobIDs(got), next, retryAt)
	}
	lease.Now, lease.LeaseUntil = retryAt, retryAt.Add(time.Minute)
	got, _ = claim(t, s, lease)
	if len(got) != 1 || got[0].Attempt != 2 {
		t.Fatalf("claim at the retry's time = %+v, want attempt 2", got)
	}
	// A run its server stopped gives its attempt back, and is due at once.
	finish(t, s, j.ID, got[0].Lease(), data.JobOutcome{Status: data.JobQueued, RunAt: retryAt, Uncounted: true})
	if st := storedJob(t, s, j.ID); st.Attempt != 1 || *st.LastError != "provider busy" {
		t.Errorf("after an uncounted run: attempt %d, error %v; want 1 and the last error kept", st.Attempt, st.LastError)
	}
	got, _ = claim(t, s, lease)
	if len(got) != 1 || got[0].Attempt != 2 {
		t.Fatalf("claim after the uncounted run = %+v, want attempt 2 again", got)
	}
	// Cancel: a running job, then the same job again (already final).
	var canceled, again bool
	update(t, s, func(tx service.Tx) (err error) {
		canceled, err = tx.CancelJob(j.ID, retryAt.Add(time.Second))
		return err
	})
	update(t, s, func(tx service.Tx) (err error) {
		again, err = tx.CancelJob(j.ID, retryAt.Add(2*time.Second))
		return err
	})
	st = storedJob(t, s, j.ID)
	if !canceled || again || st.Status != data.JobCanceled || !st.FinishedAt.Equal(retryAt.Add(time.Second)) {
		t.Errorf("cancel = %v, again %v, job %+v; want canceled once, at the first time", canceled, again, st)
	}
	if held(t, s, func(tx service.Tx) (bool, error) {
		return tx.ExtendJobLease(j.ID, got[0].Lease(), retryAt.Add(time.Hour))
	}) {
		t.Error("the canceled run's heartbeat was stored")
	}
	queued := queuedJob(wsIDs[0], "k", jobEpoch)
	enqueue(t, s, queued)
	update(t, s, func(tx service.Tx) (err error) {
		canceled, err = tx.CancelJob(queued.ID, jobEpoch)
		return err
	})
	lease.Now = jobEpoch.Add(time.Hour)
	if got, _ := claim(t, s, lease); !canceled || len(got) != 0 {
		t.Errorf("cancel of a queued job = %v; then claimed %v", canceled, jobIDs(got))
	}
}

// testJobsEndLeases: ending the leases of the owners not alive makes their running jobs
// due at once, claimed as after a lease's end (attempt counted again, checkpoint kept);
// the jobs of a live owner, queued jobs and leases already ended are left as they are.
func testJobsEndLeases(t *testing.T, open Opener) {
	s := open(t)
	dead, live, queued := queuedJob(wsIDs[0], "k", jobEpoch), queuedJob(wsIDs[0], "k", jobEpoch), queuedJob(wsIDs[0], "k", jobEpoch.Add(time.Hour))
	enqueue(t, s, dead, live)
	lease := jobEpoch.Add(time.Hour)
	claim(t, s, data.JobClaim{Kinds: []string{"k"}, Owner: "dead", Now: jobEpoch, LeaseUntil: lease, Limit: 1})
	claim(t, s, data.JobClaim{Kinds: []string{"k"}, Owner: "live", Now: jobEpoch, LeaseUntil: lease, Limit: 1})
	enqueue(t, s, queued)
	if !held(t, s, func(tx service.Tx) (bool, error) {
		return tx.SetJobProgress(dead.ID, data.JobLease{Owner: "dead", Attempt: 1}, data.JobProgress{Done: 1, Total: 2}, "half")
	}) {
		t.Fatal("the dead owner's progress was not stored")
	}
	now := jobEpoch.Add(time.Second)
	var n int
	update(t, s, func(tx service.Tx) (err error) {
		n, err = tx.EndJobLeases(now, []string{"live", "another"})
		return err
	})
	if n != 1 {
		t.Errorf("ended %d leases, want the dead owner's one", n)
	}
	st := storedJob(t, s, dead.ID)
	if st.Status != data.JobRunning || st.LeaseOwner != "dead" || st.LeaseUntil == nil || !st.LeaseUntil.Equal(now) {
		t.Errorf("the dead owner's job = %+v, want running with its lease ended at %v", st, now)
	}
	if st := storedJob(t, s, live.ID); st.LeaseOwner != "live" || !st.LeaseUntil.Equal(lease) {
		t.Errorf("the live owner's job = %+v, want its lease untouched", st)
	}
	got, next := claim(t, s, data.JobClaim{Kinds: []string{"k"}, Owner: "new", Now: now, LeaseUntil: now.Add(time.Minute), Limit: 5})
	if len(got) != 1 || got[0].ID != dead.ID || got[0].Attempt != 2 || got[0].Checkpoint != "half" || !next.Equal(jobEpoch.Add(time.Hour)) {
		t.Fatalf("claim after the leases ended = %+v (next %v), want the dead owner's job, attempt 2, checkpoint kept", got, next)
	}
	// Ended again: the new owner's lease (not alive now) ends; nothing else changes.
	update(t, s, func(tx service.Tx) (err error) {
		n, err = tx.EndJobLeases(now.Add(time.Second), []string{"live"})
		return err
	})
	if st := storedJob(t, s, queued.ID); n != 1 || st.Status != data.JobQueued || st.LeaseUntil != nil {
		t.Errorf("second end: %d ended, queued job %+v", n, st)
	}
}

// testJobsHasten: HastenJob brings a queued job's retry forward to now, and leaves a job
// already due and a final one as they are. A running job keeps the request for its run:
// the retry the run queues is due then, not after its backoff; a run that succeeds, or a
// claim after the run's lease ended, forgets it.
func testJobsHasten(t *testing.T, open Opener) {
	s := open(t)
	retryAt := jobEpoch.Add(30 * time.Minute)
	later := queuedJob(wsIDs[0], "k", retryAt)
	due := queuedJob(wsIDs[0], "k", jobEpoch)
	enqueue(t, s, later, due)
	hasten := func(id string, at time.Time) bool {
		return held(t, s, func(tx service.Tx) (bool, error) { return tx.HastenJob(id, at) })
	}
	claimAt := func(at time.Time) []*data.JobRecord {
		got, _ := claim(t, s, data.JobClaim{Kinds: []string{"k"}, Owner: "a", Now: at, LeaseUntil: at.Add(time.Minute), Limit: 5})
		return got
	}
	if hasten(due.ID, jobEpoch) {
		t.Error("a job already due was hastened")
	}
	if !hasten(later.ID, jobEpoch) {
		t.Fatal("a job waiting for its retry was not hastened")
	}
	if st := storedJob(t, s, later.ID); st.Status != data.JobQueued || !st.RunAt.Equal(jobEpoch) {
		t.Errorf("hastened: status %s, run_at %v; want queued at %v", st.Status, st.RunAt, jobEpoch)
	}
	got := claimAt(jobEpoch)
	if ids := jobIDs(got); len(ids) != 2 {
		t.Fatalf("claimed %v at once, want both jobs", ids)
	}
	// Asked to hurry while it runs (its attempt waits on a provider that came back).
	asked := jobEpoch.Add(10 * time.Second)
	if !hasten(later.ID, asked) {
		t.Fatal("a running job did not take the request to hurry")
	}
	if hasten(later.ID, asked.Add(time.Second)) {
		t.Error("a running job already asked to hurry sooner took a later request")
	}
	if st := storedJob(t, s, later.ID); st.Status != data.JobRunning || st.LeaseOwner != "a" || !st.LeaseUntil.Equal(jobEpoch.Add(time.Minute)) {
		t.Errorf("a running job asked to hurry: %+v, want its run and lease untouched", st)
	}
	backoff := jobEpoch.Add(time.Hour)
	for _, j := range got {
		finish(t, s, j.ID, j.Lease(), data.JobOutcome{Status: data.JobQueued, RunAt: backoff, Error: "timed out"})
	}
	if st := storedJob(t, s, later.ID); st.Status != data.JobQueued || !st.RunAt.Equal(asked) || st.HastenTo != nil {
		t.Errorf("the retry of a run asked to hurry: %s at %v (hasten_to %v), want queued at %v", st.Status, st.RunAt, st.HastenTo, asked)
	}
	if st := storedJob(t, s, due.ID); !st.RunAt.Equal(backoff) {
		t.Errorf("the retry of a run nobody hurried is at %v, want its backoff %v", st.RunAt, backoff)
	}
	if ids := jobIDs(claimAt(asked)); len(ids) != 1 || ids[0] != later.ID {
		t.Fatalf("claimed %v when the hurried retry fell due, want it alone", ids)
	}
	// A request of a run whose lease then ended is not the next run's.
	hasten(later.ID, asked.Add(5*time.Second))
	again := claimAt(asked.Add(2 * time.Minute))
	if len(again) != 1 || again[0].HastenTo != nil {
		t.Fatalf("claimed after the lease ended: %+v, want the job without the old run's request", again)
	}
	finish(t, s, later.ID, again[0].Lease(), data.JobOutcome{Status: data.JobQueued, RunAt: backoff, Error: "timed out"})
	if st := storedJob(t, s, later.ID); !st.RunAt.Equal(backoff) {
		t.Errorf("a retry after the lease ended is at %v, want its backoff %v", st.RunAt, backoff)
	}
	// A run that succeeds forgets the request; a final job takes none.
	last := claimAt(backoff)
	for _, j := range last {
		hasten(j.ID, backoff.Add(time.Second))
		finish(t, s, j.ID, j.Lease(), data.JobOutcome{Status: data.JobSucceeded, At: backoff.Add(2 * time.Second)})
	}
	if hasten(later.ID, jobEpoch.Add(-time.Hour)) {
		t.Error("a finished job was hastened")
	}
	if st := storedJob(t, s, later.ID); st.Status != data.JobSucceeded || st.HastenTo != nil || !st.RunAt.Equal(backoff) {
		t.Errorf("a finished job after HastenJob: %s, hasten_to %v, run_at %v; want succeeded, none, %v", st.Status, st.HastenTo, st.RunAt, backoff)
	}
}
