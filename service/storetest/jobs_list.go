package storetest

import (
	"crypto/rand"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// listedJobs is a workspace's jobs of several kinds, statuses, agents and creation
// times, and a job of another workspace: what the list cases select from. The result is
// the first workspace's jobs as stored, newest first.
func listedJobs(t *testing.T, s service.Store) []*data.JobRecord {
	at := jobEpoch
	gen := &data.IDGen{Now: func() time.Time { return at }, Rand: rand.Reader}
	agents := []string{"agt_01JD6000000000000000000001", "agt_01JD6000000000000000000002", ""}
	kinds := []string{"a.work", "b.work"}
	var jobs []*data.JobRecord
	for i := range 12 {
		at = jobEpoch.Add(time.Duration(i) * time.Minute)
		j := &data.JobRecord{Job: data.Job{ID: gen.New(data.PrefixJob), WorkspaceID: wsIDs[0], Kind: kinds[i%2],
			Status: data.JobQueued, MaxAttempts: 1, RunAt: data.NewTime(jobEpoch), CreatedAt: data.NewTime(at)}}
		if a := agents[i%3]; a != "" {
			j.AgentID = &a
		}
		jobs = append(jobs, j)
	}
	other := queuedJob(wsIDs[1], "a.work", jobEpoch)
	enqueue(t, s, append(slices.Clone(jobs), other)...)
	// Every fourth job runs and fails, every fourth after it succeeds: three statuses.
	claimed, _ := claim(t, s, data.JobClaim{Kinds: kinds, Owner: "r", Now: jobEpoch, LeaseUntil: jobEpoch.Add(time.Hour), Limit: 100})
	for _, j := range claimed {
		switch slices.IndexFunc(jobs, func(x *data.JobRecord) bool { return x.ID == j.ID }) % 4 {
		case 1:
			finish(t, s, j.ID, j.Lease(), data.JobOutcome{Status: data.JobFailed, At: jobEpoch, Error: "boom"})
		case 2:
			finish(t, s, j.ID, j.Lease(), data.JobOutcome{Status: data.JobSucceeded, At: jobEpoch})
		case 3:
			finish(t, s, j.ID, j.Lease(), data.JobOutcome{Status: data.JobQueued, RunAt: jobEpoch.Add(time.Hour)})
		}
	}
	var out []*data.JobRecord
	for i := len(jobs) - 1; i >= 0; i-- {
		out = append(out, storedJob(t, s, jobs[i].ID))
	}
	return out
}

// testJobsListSelections: every selection lists exactly the jobs data.JobSelection.Keeps
// keeps, newest first, across pages of two; following a next_cursor and then the
// prev_cursor returns the same page; a cursor of one selection is refused by another.
func testJobsListSelections(t *testing.T, open Opener) {
	s := open(t)
	all := listedJobs(t, s)
	both := []string{"a.work", "b.work"}
	agent1, agent2 := "agt_01JD6000000000000000000001", "agt_01JD6000000000000000000002"
	cases := []struct {
		name string
		sel  data.JobSelection
	}{
		{"everything", data.JobSelection{Kinds: both}},
		{"no readable kind", data.JobSelection{Kinds: []string{}}},
		{"one readable kind", data.JobSelection{Kinds: []string{"b.work"}}},
		{"one agent and jobs of none", data.JobSelection{Kinds: both, Agents: []string{agent1}}},
		{"no agent: jobs of none only", data.JobSelection{Kinds: both, Agents: []string{}}},
		{"one agent, an agent kind's jobs of none not", data.JobSelection{Kinds: both, Agents: []string{agent1}, AgentKinds: []string{"a.work"}}},
		{"no agent, agent kinds: nothing", data.JobSelection{Kinds: both, Agents: []string{}, AgentKinds: both}},
		{"every agent, agent kinds: everything", data.JobSelection{Kinds: both, AgentKinds: both}},
		{"kind", data.JobSelection{Kinds: both, JobFilter: data.JobFilter{Kind: "a.work"}}},
		{"kind not readable", data.JobSelection{Kinds: []string{"b.work"}, JobFilter: data.JobFilter{Kind: "a.work"}}},
		{"failed", data.JobSelection{Kinds: both, JobFilter: data.JobFilter{Status: data.JobFailed}}},
		{"queued", data.JobSelection{Kinds: both, JobFilter: data.JobFilter{Status: data.JobQueued}}},
		{"agent", data.JobSelection{Kinds: both, JobFilter: data.JobFilter{AgentID: agent1}}},
		{"agent outside the caller's", data.JobSelection{Kinds: both, Agents: []string{"agt_01JD6000000000000000000009"}, JobFilter: data.JobFilter{AgentID: agent1}}},
		{"range", data.JobSelection{Kinds: both, JobFilter: data.JobFilter{From: jobEpoch.Add(3 * time.Minute), To: jobEpoch.Add(9 * time.Minute)}}},
		{"every filter", data.JobSelection{Kinds: both, Agents: []string{agent1}, JobFilter: data.JobFilter{Kind: "a.work",
			Status: data.JobQueued, From: jobEpoch.Add(time.Minute)}}},
		// A limited caller with an agent kind: PostgreSQL walks each agent for it and the
		// other kind for the jobs of no agent (postgres/jobs_list.go, jobWalks).
		{"two agents, an agent kind, failed", data.JobSelection{Kinds: both, Agents: []string{agent1, agent2}, AgentKinds: []string{"a.work"},
			JobFilter: data.JobFilter{Status: data.JobFailed}}},
		{"one agent, an agent kind, queued", data.JobSelection{Kinds: both, Agents: []string{agent1}, AgentKinds: []string{"a.work"},
			JobFilter: data.JobFilter{Status: data.JobQueued}}},
		{"one agent, an agent kind, the other kind", data.JobSelection{Kinds: both, Agents: []string{agent1}, AgentKinds: []string{"a.work"},
			JobFilter: data.JobFilter{Kind: "b.work"}}},
		{"one agent, an agent kind, that kind", data.JobSelection{Kinds: both, Agents: []string{agent1}, AgentKinds: []string{"a.work"},
			JobFilter: data.JobFilter{Kind: "a.work"}}},
		{"two agents, agent kinds, a range", data.JobSelection{Kinds: both, Agents: []string{agent1, agent2}, AgentKinds: both,
			JobFilter: data.JobFilter{From: jobEpoch.Add(2 * time.Minute), To: jobEpoch.Add(10 * time.Minute)}}},
		{"one agent, one readable kind, not an agent kind", data.JobSelection{Kinds: []string{"b.work"}, Agents: []string{agent1}, AgentKinds: []string{"a.work"}}},
	}
	for _, c := range cases {
		var want []string
		for _, j := range all {
			if c.sel.Keeps(&j.Job) {
				want = append(want, j.ID)
			}
		}
		got := walkJobs(t, s, c.name, c.sel)
		if !slices.Equal(got, want) {
			t.Errorf("%s: listed %v, want %v", c.name, got, want)
		}
	}
	if n := len(walkJobs(t, s, "a filter", data.JobSelection{Kinds: both, JobFilter: data.JobFilter{Status: data.JobFailed}})); n != 3 {
		t.Errorf("failed jobs: %d listed, want 3 (the cases above must select something)", n)
	}
	view(t, s, func(tx service.Tx) error {
		_, meta, err := tx.ListJobs(wsIDs[0], data.JobSelection{Kinds: both}, data.PageRequest{PerPage: 2})
		if err != nil || meta.NextCursor == nil {
			t.Fatalf("first page: %+v, %v", meta, err)
		}
		for _, other := range []data.JobSelection{{Kinds: []string{"a.work"}}, {Kinds: both, Agents: []string{agent1}},
			{Kinds: both, JobFilter: data.JobFilter{Status: data.JobQueued}}} {
			if _, _, err := tx.ListJobs(wsIDs[0], other, data.PageRequest{PerPage: 2, Cursor: *meta.NextCursor}); data.ErrorCode(err) != data.EINVALID {
				t.Errorf("a cursor of another selection %+v: %v; want validation_failed", other, err)
			}
		}
		if _, _, err := tx.ListJobs(wsIDs[1], data.JobSelection{Kinds: both}, data.PageRequest{PerPage: 2, Cursor: *meta.NextCursor}); data.ErrorCode(err) != data.EINVALID {
			t.Errorf("a cursor of another workspace: %v; want validation_failed", err)
		}
		return nil
	})
}

// walkJobs lists every page of sel in pages of two and returns the ids in order; at each
// page it checks that the page's prev_cursor leads back to the page before.
func walkJobs(t *testing.T, s service.Store, name string, sel data.JobSelection) []string {
	t.Helper()
	var ids []string
	var prevPage []string
	cursor := ""
	for range 20 {
		var page []*data.JobRecord
		var meta data.Page
		view(t, s, func(tx service.Tx) (err error) {
			page, meta, err = tx.ListJobs(wsIDs[0], sel, data.PageRequest{PerPage: 2, Cursor: cursor})
			return err
		})
		if len(page) > 2 {
			t.Fatalf("%s: a page of %d for per_page 2", name, len(page))
		}
		if cursor != "" && len(page) > 0 && meta.PrevCursor == nil {
			t.Errorf("%s: a page after the first without prev_cursor", name)
		}
		if cursor != "" && meta.PrevCursor != nil && len(page) > 0 {
			var back []*data.JobRecord
			view(t, s, func(tx service.Tx) (err error) {
				back, _, err = tx.ListJobs(wsIDs[0], sel, data.PageRequest{PerPage: 2, Cursor: *meta.PrevCursor})
				return err
			})
			if fmt.Sprint(jobIDs(back)) != fmt.Sprint(prevPage) {
				t.Errorf("%s: prev_cursor read %v, want the page before %v", name, jobIDs(back), prevPage)
			}
		}
		ids = append(ids, jobIDs(page)...)
		prevPage = jobIDs(page)
		if meta.NextCursor == nil {
			return ids
		}
		cursor = *meta.NextCursor
	}
	t.Fatalf("%s: more than 20 pages", name)
	return nil
}
