package storetest

import (
	"crypto/rand"
	"slices"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// jobsAtMinutes returns jobs of wsIDs[0], one a minute from jobEpoch (ids in that
// order), each made by mk from its index.
func jobsAtMinutes(n int, mk func(i int, j *data.JobRecord)) []*data.JobRecord {
	at := jobEpoch
	gen := &data.IDGen{Now: func() time.Time { return at }, Rand: rand.Reader}
	jobs := make([]*data.JobRecord, n)
	for i := range n {
		at = jobEpoch.Add(time.Duration(i) * time.Minute)
		jobs[i] = &data.JobRecord{Job: data.Job{ID: gen.New(data.PrefixJob), WorkspaceID: wsIDs[0], Kind: "a.work",
			Status: data.JobQueued, MaxAttempts: 3, RunAt: data.NewTime(jobEpoch), CreatedAt: data.NewTime(at)}}
		mk(i, jobs[i])
	}
	return jobs
}

// listJobsPage reads one page of sel in wsIDs[0].
func listJobsPage(t *testing.T, s service.Store, sel data.JobSelection, req data.PageRequest) ([]string, data.Page) {
	t.Helper()
	var page []*data.JobRecord
	var meta data.Page
	view(t, s, func(tx service.Tx) (err error) {
		page, meta, err = tx.ListJobs(wsIDs[0], sel, req)
		return err
	})
	return jobIDs(page), meta
}

// testJobsListStatusBetweenPages: a job that leaves the listed status between two pages
// (claimed: queued → running) is not on the next page, which is still full, and the
// prev_cursor leads to the page before; once it comes back (a retry: running → queued)
// behind the cursor the walk goes on without it, and a new walk lists it where it
// belongs.
func testJobsListStatusBetweenPages(t *testing.T, open Opener) {
	s := open(t)
	jobs := jobsAtMinutes(6, func(i int, j *data.JobRecord) {
		if i == 3 {
			j.Kind = "b.work" // the one a claim of b.work moves
		}
	})
	enqueue(t, s, jobs...)
	q := func(i int) string { return jobs[i].ID }
	queued := data.JobSelection{Kinds: []string{"a.work", "b.work"}, JobFilter: data.JobFilter{Status: data.JobQueued}}
	first, meta := listJobsPage(t, s, queued, data.PageRequest{PerPage: 2})
	if !slices.Equal(first, []string{q(5), q(4)}) || meta.NextCursor == nil {
		t.Fatalf("first page %v, %+v; want the two newest and a next_cursor", first, meta)
	}
	claimed, _ := claim(t, s, data.JobClaim{Kinds: []string{"b.work"}, Owner: "r", Now: jobEpoch, LeaseUntil: jobEpoch.Add(time.Hour), Limit: 1})
	if len(claimed) != 1 || claimed[0].ID != q(3) {
		t.Fatalf("claimed %v, want %s", jobIDs(claimed), q(3))
	}
	second, meta := listJobsPage(t, s, queued, data.PageRequest{PerPage: 2, Cursor: *meta.NextCursor})
	if !slices.Equal(second, []string{q(2), q(1)}) || meta.NextCursor == nil || meta.PrevCursor == nil {
		t.Fatalf("second page after the claim %v, %+v; want %v and both cursors", second, meta, []string{q(2), q(1)})
	}
	if running, _ := listJobsPage(t, s, data.JobSelection{Kinds: queued.Kinds, JobFilter: data.JobFilter{Status: data.JobRunning}}, data.PageRequest{}); !slices.Equal(running, []string{q(3)}) {
		t.Errorf("running jobs %v, want the claimed one", running)
	}
	back, _ := listJobsPage(t, s, queued, data.PageRequest{PerPage: 2, Cursor: *meta.PrevCursor})
	if !slices.Equal(back, first) {
		t.Errorf("prev_cursor of the second page read %v, want the first page %v", back, first)
	}
	finish(t, s, q(3), claimed[0].Lease(), data.JobOutcome{Status: data.JobQueued, RunAt: jobEpoch, Error: "again"})
	third, meta := listJobsPage(t, s, queued, data.PageRequest{PerPage: 2, Cursor: *meta.NextCursor})
	if !slices.Equal(third, []string{q(0)}) || meta.NextCursor != nil {
		t.Errorf("third page %v, %+v; want the oldest and no next_cursor", third, meta)
	}
	if all := walkJobs(t, s, "queued again", queued); !slices.Equal(all, []string{q(5), q(4), q(3), q(2), q(1), q(0)}) {
		t.Errorf("a new walk of the queued jobs: %v, want all six newest first", all)
	}
}

// rareJobs is how many of testJobsListRareAmongMany's jobs are rare: the oldest.
const rareJobs = 3

// testJobsListRareAmongMany: among more jobs than bbolt's list once passed over in a page
// (2,000), a status, agent or kind only the oldest few jobs have, or a caller limited to
// an agent only they work for, lists them on full pages: the first page holds two, with
// a next_cursor, and the second the last.
func testJobsListRareAmongMany(t *testing.T, open Opener) {
	s := open(t)
	busy, rare := "agt_01JD6000000000000000000001", "agt_01JD6000000000000000000002"
	jobs := jobsAtMinutes(rareJobs+2050, func(i int, j *data.JobRecord) {
		agent := busy
		j.Status, j.Attempt, j.FinishedAt = data.JobSucceeded, 1, data.NewTime(jobEpoch).Ptr()
		if i < rareJobs {
			agent, j.Kind, j.Status = rare, "b.work", data.JobFailed
		}
		j.AgentID = &agent
	})
	enqueue(t, s, jobs...)
	both := []string{"a.work", "b.work"}
	for name, sel := range map[string]data.JobSelection{
		"status":         {Kinds: both, JobFilter: data.JobFilter{Status: data.JobFailed}},
		"agent":          {Kinds: both, JobFilter: data.JobFilter{AgentID: rare}},
		"kind":           {Kinds: both, JobFilter: data.JobFilter{Kind: "b.work"}},
		"readable kind":  {Kinds: []string{"b.work"}},
		"caller's agent": {Kinds: both, Agents: []string{rare}},
	} {
		first, meta := listJobsPage(t, s, sel, data.PageRequest{PerPage: 2})
		if !slices.Equal(first, []string{jobs[2].ID, jobs[1].ID}) || meta.NextCursor == nil {
			t.Errorf("%s: first page %v, %+v; want the two newest rare jobs and a next_cursor", name, first, meta)
			continue
		}
		second, meta := listJobsPage(t, s, sel, data.PageRequest{PerPage: 2, Cursor: *meta.NextCursor})
		if !slices.Equal(second, []string{jobs[0].ID}) || meta.NextCursor != nil {
			t.Errorf("%s: second page %v, %+v; want the oldest and no next_cursor", name, second, meta)
		}
	}
}
