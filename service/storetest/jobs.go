package storetest

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// jobEpoch is the suite's clock for jobs: a fixed time, so due order and leases do not
// depend on when the test runs.
var jobEpoch = time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC)

// jobIDGen makes the suite's job ids at jobEpoch, in creation order.
var jobIDGen = &data.IDGen{Now: func() time.Time { return jobEpoch }, Rand: rand.Reader}

// queuedJob is a new queued job of kind in ws, due at due, made at jobEpoch.
func queuedJob(ws, kind string, due time.Time) *data.JobRecord {
	return &data.JobRecord{Job: data.Job{ID: jobIDGen.New(data.PrefixJob), WorkspaceID: ws, Kind: kind, Status: data.JobQueued,
		MaxAttempts: 3, RunAt: data.NewTime(due), CreatedAt: data.NewTime(jobEpoch)}, Payload: []byte(`{"n":1}`)}
}

// enqueue stores jobs in one transaction and returns what EnqueueJob returned for each.
func enqueue(t testing.TB, s service.Store, jobs ...*data.JobRecord) []*data.JobRecord {
	t.Helper()
	out := make([]*data.JobRecord, len(jobs))
	update(t, s, func(tx service.Tx) error {
		for i, j := range jobs {
			got, err := tx.EnqueueJob(j)
			if err != nil {
				return err
			}
			out[i] = got
		}
		return nil
	})
	return out
}

// claim runs one ClaimJobs in its own transaction.
func claim(t testing.TB, s service.Store, c data.JobClaim) ([]*data.JobRecord, time.Time) {
	t.Helper()
	var got []*data.JobRecord
	var next time.Time
	update(t, s, func(tx service.Tx) (err error) {
		got, next, err = tx.ClaimJobs(c)
		return err
	})
	return got, next
}

// storedJob reads job id.
func storedJob(t testing.TB, s service.Store, id string) *data.JobRecord {
	t.Helper()
	var j *data.JobRecord
	view(t, s, func(tx service.Tx) (err error) {
		j, err = tx.Job(id)
		return err
	})
	return j
}

func jobIDs(list []*data.JobRecord) []string {
	var out []string
	for _, j := range list {
		out = append(out, j.ID)
	}
	return out
}

// testJobsEnqueueInTransaction: a job commits with its transaction and is stored as
// given; a transaction that rolls back leaves no job, no due entry and no unique key.
func testJobsEnqueueInTransaction(t *testing.T, open Opener) {
	s := open(t)
	agent := "agt_1"
	kept := queuedJob(wsIDs[0], "k", jobEpoch)
	kept.AgentID, kept.UniqueKey = &agent, "u1"
	rolledBack := queuedJob(wsIDs[0], "k", jobEpoch)
	rolledBack.UniqueKey = "u2"
	enqueue(t, s, kept)
	boom := errors.New("the feature's write failed")
	err := s.Update(context.Background(), func(tx service.Tx) error {
		if _, err := tx.EnqueueJob(rolledBack); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("update = %v, want the feature's error", err)
	}
	got := storedJob(t, s, kept.ID)
	if got == nil || got.Kind != "k" || got.Status != data.JobQueued || got.Attempt != 0 || got.MaxAttempts != 3 ||
		!bytes.Equal(got.Payload, kept.Payload) || got.AgentID == nil || *got.AgentID != agent || got.UniqueKey != "u1" ||
		!got.RunAt.Equal(jobEpoch) || !got.CreatedAt.Equal(jobEpoch) || got.StartedAt != nil || got.FinishedAt != nil {
		t.Errorf("stored job = %+v, want it as enqueued", got)
	}
	if j := storedJob(t, s, rolledBack.ID); j != nil {
		t.Errorf("a rolled-back enqueue left job %+v", j)
	}
	claimed, _ := claim(t, s, data.JobClaim{Kinds: []string{"k"}, Owner: "a", Now: jobEpoch, LeaseUntil: jobEpoch.Add(time.Minute), Limit: 10})
	if !slices.Equal(jobIDs(claimed), []string{kept.ID}) {
		t.Errorf("claimed %v, want only the committed job", jobIDs(claimed))
	}
	// The rolled-back job's unique key was never taken.
	again := queuedJob(wsIDs[0], "k", jobEpoch)
	again.UniqueKey = "u2"
	if got := enqueue(t, s, again)[0]; got.ID != again.ID {
		t.Errorf("enqueue under the rolled-back job's key returned %s, want the new job", got.ID)
	}
}

// testJobsUniqueKeys: a second enqueue of pending work returns the pending job; another
// workspace, kind or key is other work; a final job frees its key.
func testJobsUniqueKeys(t *testing.T, open Opener) {
	s := open(t)
	first := queuedJob(wsIDs[0], "k", jobEpoch)
	first.UniqueKey = "src_1/1"
	dup := queuedJob(wsIDs[0], "k", jobEpoch)
	dup.UniqueKey = "src_1/1"
	otherWS, otherKind, otherKey, noKey := queuedJob(wsIDs[1], "k", jobEpoch), queuedJob(wsIDs[0], "k2", jobEpoch),
		queuedJob(wsIDs[0], "k", jobEpoch), queuedJob(wsIDs[0], "k", jobEpoch)
	otherWS.UniqueKey, otherKind.UniqueKey, otherKey.UniqueKey = "src_1/1", "src_1/1", "src_1/2"
	got := enqueue(t, s, first, dup, otherWS, otherKind, otherKey, noKey)
	if got[1].ID != first.ID || storedJob(t, s, dup.ID) != nil {
		t.Errorf("second enqueue returned %s (stored: %v), want the first job %s and nothing stored", got[1].ID, storedJob(t, s, dup.ID) != nil, first.ID)
	}
	for i, j := range []*data.JobRecord{otherWS, otherKind, otherKey, noKey} {
		if got[i+2].ID != j.ID {
			t.Errorf("enqueue %d returned %s, want its own job %s", i+2, got[i+2].ID, j.ID)
		}
	}
	// Running is still pending: the key stays taken.
	claimed, _ := claim(t, s, data.JobClaim{Kinds: []string{"k"}, Owner: "a", Now: jobEpoch, LeaseUntil: jobEpoch.Add(time.Minute), Limit: 1})
	if len(claimed) != 1 || claimed[0].ID != first.ID {
		t.Fatalf("claimed %v, want the first job", jobIDs(claimed))
	}
	whileRunning := queuedJob(wsIDs[0], "k", jobEpoch)
	whileRunning.UniqueKey = "src_1/1"
	if got := enqueue(t, s, whileRunning)[0]; got.ID != first.ID || got.Status != data.JobRunning {
		t.Errorf("enqueue while the first runs returned %s (%s), want the running first job", got.ID, got.Status)
	}
	finish(t, s, first.ID, claimed[0].Lease(), data.JobOutcome{Status: data.JobSucceeded, At: jobEpoch})
	after := queuedJob(wsIDs[0], "k", jobEpoch)
	after.UniqueKey = "src_1/1"
	if got := enqueue(t, s, after)[0]; got.ID != after.ID {
		t.Errorf("enqueue after the first succeeded returned %s, want a new job", got.ID)
	}
	// A finished job stored as it stands (a moved installation's) takes no key: it is
	// stored beside the pending one, which keeps the key.
	moved := queuedJob(wsIDs[0], "k", jobEpoch)
	moved.UniqueKey, moved.Status, moved.Attempt, moved.FinishedAt = "src_1/1", data.JobSucceeded, 1, data.NewTime(jobEpoch).Ptr()
	if got := enqueue(t, s, moved)[0]; got.ID != moved.ID || storedJob(t, s, moved.ID) == nil {
		t.Errorf("storing a finished job under a pending key returned %s, want it stored", got.ID)
	}
	again := queuedJob(wsIDs[0], "k", jobEpoch)
	again.UniqueKey = "src_1/1"
	if got := enqueue(t, s, again)[0]; got.ID != after.ID {
		t.Errorf("enqueue after the finished job was stored returned %s, want the pending %s", got.ID, after.ID)
	}
}

// finish runs FinishJob and fails the test unless the lease still held.
func finish(t testing.TB, s service.Store, id string, lease data.JobLease, out data.JobOutcome) {
	t.Helper()
	update(t, s, func(tx service.Tx) error {
		ok, err := tx.FinishJob(id, lease, out)
		if err == nil && !ok {
			t.Errorf("FinishJob(%s, %+v) found the lease gone", id, lease)
		}
		return err
	})
}

// testJobsDueOrder: a claim takes due jobs of its kinds only, oldest due first, up to its
// limit, and says when the next one falls due.
func testJobsDueOrder(t *testing.T, open Opener) {
	s := open(t)
	late := queuedJob(wsIDs[0], "k", jobEpoch.Add(-time.Second))
	early := queuedJob(wsIDs[1], "k", jobEpoch.Add(-time.Minute))
	atNow := queuedJob(wsIDs[0], "k", jobEpoch)
	future := queuedJob(wsIDs[0], "k", jobEpoch.Add(time.Hour))
	otherKind := queuedJob(wsIDs[0], "other", jobEpoch.Add(-time.Hour))
	enqueue(t, s, late, future, otherKind, atNow, early)
	lease := jobEpoch.Add(time.Minute)
	got, next := claim(t, s, data.JobClaim{Kinds: []string{"k"}, Owner: "a", Now: jobEpoch, LeaseUntil: lease, Limit: 2})
	if !slices.Equal(jobIDs(got), []string{early.ID, late.ID}) || next.After(jobEpoch) {
		t.Errorf("claim of 2 = %v, next %v; want early, late (oldest due first) and a next due now", jobIDs(got), next)
	}
	got, next = claim(t, s, data.JobClaim{Kinds: []string{"k"}, Owner: "a", Now: jobEpoch, LeaseUntil: lease, Limit: 10})
	if !slices.Equal(jobIDs(got), []string{atNow.ID}) || !next.Equal(lease) {
		t.Errorf("second claim = %v, next %v; want the job due now, and next at the first lease's end %v (before the future job)", jobIDs(got), next, lease)
	}
	got, next = claim(t, s, data.JobClaim{Kinds: []string{"k"}, Owner: "a", Now: jobEpoch.Add(59 * time.Minute), LeaseUntil: jobEpoch.Add(2 * time.Hour), Limit: 10})
	if len(got) != 3 || !next.Equal(future.RunAt.Time) {
		t.Errorf("claim after the leases ended = %v, next %v; want the three expired jobs back and next at %v", jobIDs(got), next, future.RunAt.Time)
	}
	got, _ = claim(t, s, data.JobClaim{Kinds: []string{"other", "k"}, Owner: "b", Now: jobEpoch.Add(time.Hour), LeaseUntil: jobEpoch.Add(2 * time.Hour), Limit: 10})
	if !slices.Equal(jobIDs(got), []string{otherKind.ID, future.ID}) {
		t.Errorf("claim of both kinds at the future job's time = %v, want other's job then the future one", jobIDs(got))
	}
	got, next = claim(t, s, data.JobClaim{Kinds: []string{"none"}, Owner: "b", Now: jobEpoch.Add(time.Hour), LeaseUntil: jobEpoch.Add(2 * time.Hour), Limit: 10})
	if len(got) != 0 || !next.IsZero() {
		t.Errorf("claim of a kind without jobs = %v, next %v; want nothing", jobIDs(got), next)
	}
}

// testJobsQueueStats: counts per kind of queued and running jobs and the age of the
// oldest due one; final jobs are not counted.
func testJobsQueueStats(t *testing.T, open Opener) {
	s := open(t)
	a1, a2, a3 := queuedJob(wsIDs[0], "a", jobEpoch.Add(-90*time.Second)), queuedJob(wsIDs[0], "a", jobEpoch.Add(-30*time.Second)), queuedJob(wsIDs[1], "a", jobEpoch.Add(time.Hour))
	b1, b2 := queuedJob(wsIDs[0], "b", jobEpoch.Add(time.Minute)), queuedJob(wsIDs[0], "b", jobEpoch.Add(-time.Second))
	enqueue(t, s, a1, a2, a3, b1, b2)
	claimed, _ := claim(t, s, data.JobClaim{Kinds: []string{"b"}, Owner: "a", Now: jobEpoch, LeaseUntil: jobEpoch.Add(time.Minute), Limit: 1})
	finish(t, s, claimed[0].ID, claimed[0].Lease(), data.JobOutcome{Status: data.JobFailed, At: jobEpoch, Error: "no"})
	claimed, _ = claim(t, s, data.JobClaim{Kinds: []string{"a"}, Owner: "a", Now: jobEpoch, LeaseUntil: jobEpoch.Add(time.Minute), Limit: 1})
	if len(claimed) != 1 || claimed[0].ID != a1.ID {
		t.Fatalf("claimed %v, want a1", jobIDs(claimed))
	}
	var stats []data.JobQueueStat
	view(t, s, func(tx service.Tx) (err error) {
		stats, err = tx.JobQueueStats(jobEpoch)
		return err
	})
	want := []data.JobQueueStat{{Kind: "a", Queued: 2, Running: 1, OldestDueAge: 30 * time.Second}, {Kind: "b", Queued: 1}}
	if !slices.Equal(stats, want) {
		t.Errorf("stats = %+v, want %+v", stats, want)
	}
	// Once a1's lease ends, it is due again, since its lease's end.
	view(t, s, func(tx service.Tx) (err error) {
		stats, err = tx.JobQueueStats(jobEpoch.Add(3 * time.Minute))
		return err
	})
	if len(stats) != 2 || stats[0].OldestDueAge != 3*time.Minute+30*time.Second || stats[1].OldestDueAge != 2*time.Minute {
		t.Errorf("stats three minutes on = %+v, want a's oldest 3m30s (a2), b's 2m (b1)", stats)
	}
}

// testJobsListAndDelete: a workspace's jobs page newest first; deleting the workspace
// takes its jobs, pending ones out of the claims and unique keys, and leaves another's.
func testJobsListAndDelete(t *testing.T, open Opener) {
	s := open(t)
	var mine []*data.JobRecord
	for range 3 {
		j := queuedJob(wsIDs[0], "k", jobEpoch)
		j.UniqueKey = j.ID
		mine = append(mine, j)
	}
	other := queuedJob(wsIDs[1], "k", jobEpoch)
	enqueue(t, s, append(mine, other)...)
	view(t, s, func(tx service.Tx) error {
		page, meta, err := tx.Jobs(wsIDs[0], data.PageRequest{PerPage: 2})
		if err != nil || !slices.Equal(jobIDs(page), []string{mine[2].ID, mine[1].ID}) || meta.NextCursor == nil {
			t.Errorf("first page = %v, %+v, %v; want the two newest and a next cursor", jobIDs(page), meta, err)
			return err
		}
		rest, meta, err := tx.Jobs(wsIDs[0], data.PageRequest{PerPage: 2, Cursor: *meta.NextCursor})
		if err != nil || !slices.Equal(jobIDs(rest), []string{mine[0].ID}) || meta.NextCursor != nil {
			t.Errorf("second page = %v, %+v, %v; want the oldest and no next cursor", jobIDs(rest), meta, err)
		}
		return err
	})
	update(t, s, func(tx service.Tx) error { return tx.DeleteWorkspace(wsIDs[0]) })
	claimed, _ := claim(t, s, data.JobClaim{Kinds: []string{"k"}, Owner: "a", Now: jobEpoch, LeaseUntil: jobEpoch.Add(time.Minute), Limit: 10})
	if !slices.Equal(jobIDs(claimed), []string{other.ID}) || storedJob(t, s, mine[0].ID) != nil {
		t.Errorf("after the workspace's delete: claimed %v, its first job %v; want only the other workspace's job", jobIDs(claimed), storedJob(t, s, mine[0].ID))
	}
	again := queuedJob(wsIDs[0], "k", jobEpoch)
	again.UniqueKey = mine[0].ID
	if got := enqueue(t, s, again)[0]; got.ID != again.ID {
		t.Errorf("the deleted workspace's unique key still returns %s", got.ID)
	}
}

// testJobsPrune: final jobs that finished before the bound go, oldest first, limit at a
// time; pending jobs and recent ones stay.
func testJobsPrune(t *testing.T, open Opener) {
	s := open(t)
	before := jobEpoch.Add(time.Hour)
	old, recent, pending := queuedJob(wsIDs[0], "k", jobEpoch), queuedJob(wsIDs[0], "k", jobEpoch), queuedJob(wsIDs[0], "k", jobEpoch.Add(time.Hour))
	old2 := queuedJob(wsIDs[1], "k", jobEpoch)
	enqueue(t, s, old, old2, recent, pending)
	claimed, _ := claim(t, s, data.JobClaim{Kinds: []string{"k"}, Owner: "a", Now: jobEpoch, LeaseUntil: jobEpoch.Add(time.Minute), Limit: 3})
	ends := map[string]time.Time{old.ID: jobEpoch, old2.ID: jobEpoch.Add(time.Second), recent.ID: before}
	for _, j := range claimed {
		finish(t, s, j.ID, j.Lease(), data.JobOutcome{Status: data.JobSucceeded, At: ends[j.ID]})
	}
	prune := func(limit int) int {
		var n int
		update(t, s, func(tx service.Tx) (err error) {
			n, err = tx.PruneJobs(before, limit)
			return err
		})
		return n
	}
	if n := prune(1); n != 1 || storedJob(t, s, old.ID) != nil || storedJob(t, s, old2.ID) == nil {
		t.Errorf("prune(1) = %d; want the oldest job gone, the second kept", n)
	}
	if n := prune(10); n != 1 || storedJob(t, s, old2.ID) != nil {
		t.Errorf("prune(10) = %d, want the second old job", n)
	}
	if n := prune(10); n != 0 || storedJob(t, s, recent.ID) == nil || storedJob(t, s, pending.ID) == nil {
		t.Errorf("prune again = %d; want the recent and the pending job kept", n)
	}
	view(t, s, func(tx service.Tx) error {
		page, _, err := tx.Jobs(wsIDs[0], data.PageRequest{PerPage: 10})
		if !slices.Equal(jobIDs(page), []string{pending.ID, recent.ID}) {
			t.Errorf("the workspace's list after pruning = %v", jobIDs(page))
		}
		return err
	})
}
