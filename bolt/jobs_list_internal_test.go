package bolt

import (
	"context"
	"crypto/rand"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

const listWS = "ws_01JD6000000000000000000001"

// Agents and kinds of storeJobs' jobs: the oldest job of each workspace is the only one
// of its status (failed), its agent and its kind.
const (
	busyAgent = "agt_01JD6000000000000000000001"
	rareAgent = "agt_01JD6000000000000000000002"
)

var listKinds = []string{"a.work", "b.work"}

// storeJobs stores n jobs of listWS, one a millisecond from t0, and n of another
// workspace; the oldest of listWS's is failed, of kind b.work and for rareAgent, the rest
// succeeded, of kind a.work and for busyAgent. It returns listWS's ids, oldest first.
func storeJobs(t testing.TB, db *DB, n int) []string {
	t.Helper()
	t0 := time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC)
	at := t0
	gen := &data.IDGen{Now: func() time.Time { return at }, Rand: rand.Reader}
	var ids []string
	const batch = 1000
	for start := 0; start < n; start += batch {
		err := db.Update(context.Background(), func(tx service.Tx) error {
			for i := start; i < min(start+batch, n); i++ {
				at = t0.Add(time.Duration(i) * time.Millisecond)
				for _, ws := range []string{listWS, "ws_01JD6000000000000000000002"} {
					status, kind, agent := data.JobSucceeded, "a.work", busyAgent
					if i == 0 {
						status, kind, agent = data.JobFailed, "b.work", rareAgent
					}
					j := &data.JobRecord{Job: data.Job{ID: gen.New(data.PrefixJob), WorkspaceID: ws, AgentID: &agent, Kind: kind, Status: status,
						Attempt: 1, MaxAttempts: 1, RunAt: data.NewTime(at), CreatedAt: data.NewTime(at), FinishedAt: data.NewTime(at).Ptr()}}
					if _, err := tx.EnqueueJob(j); err != nil {
						return err
					}
					if ws == listWS {
						ids = append(ids, j.ID)
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return ids
}

func listJobsPage(t testing.TB, db *DB, sel data.JobSelection, req data.PageRequest) ([]*data.JobRecord, data.Page) {
	t.Helper()
	var list []*data.JobRecord
	var page data.Page
	if err := db.View(context.Background(), func(tx service.Tx) (err error) {
		list, page, err = tx.ListJobs(listWS, sel, req)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return list, page
}

// TestJobListBeyondTheScanBound: over one file of more jobs than a page may pass over
// (storeJobs, maxJobListScan+5 a workspace), filled once for both checks since the fill
// is most of their time (about 25 s each under -race), a rare filter fills its page and
// a caller limited to many agents passes the others' jobs uncounted.
func TestJobListBeyondTheScanBound(t *testing.T) {
	db := openInternal(t, &clock{t: time.Now()})
	ids := storeJobs(t, db, maxJobListScan+5)
	t.Run("rare filter fills its page", func(t *testing.T) { checkRareFilterFillsItsPage(t, db, ids) })
	t.Run("many agents pass others uncounted", func(t *testing.T) { checkManyAgentsPassOthersUncounted(t, db, ids) })
}

// checkRareFilterFillsItsPage (TestJobListBeyondTheScanBound): among more jobs than a
// page may pass over (maxJobListScan), a filter that only the oldest job matches,
// whichever filter it is, lists that job on its first page, with no next_cursor: the
// walk reads its own index scopes, not the workspace's jobs. So does a caller limited to
// the rare agent, who also sees no job of another agent.
func checkRareFilterFillsItsPage(t *testing.T, db *DB, ids []string) {
	for name, sel := range map[string]data.JobSelection{
		"status":                  {Kinds: listKinds, JobFilter: data.JobFilter{Status: data.JobFailed}},
		"agent":                   {Kinds: listKinds, JobFilter: data.JobFilter{AgentID: rareAgent}},
		"kind":                    {Kinds: listKinds, JobFilter: data.JobFilter{Kind: "b.work"}},
		"readable kind":           {Kinds: []string{"b.work"}},
		"caller's agent":          {Kinds: listKinds, Agents: []string{rareAgent}},
		"status and agent":        {Kinds: listKinds, JobFilter: data.JobFilter{Status: data.JobFailed, AgentID: rareAgent}},
		"status, caller's agent":  {Kinds: listKinds, Agents: []string{rareAgent}, JobFilter: data.JobFilter{Status: data.JobFailed}},
		"status within its range": {Kinds: listKinds, JobFilter: data.JobFilter{Status: data.JobFailed, To: time.Date(2026, 6, 1, 9, 0, 1, 0, time.UTC)}},
	} {
		first, page := listJobsPage(t, db, sel, data.PageRequest{PerPage: 15})
		if len(first) != 1 || first[0].ID != ids[0] || page.NextCursor != nil || page.PrevCursor != nil {
			t.Errorf("%s: %v, %+v; want the oldest job alone, no cursor", name, jobIDsOf(first), page)
		}
	}
	all, _ := listJobsPage(t, db, data.JobSelection{Kinds: listKinds}, data.PageRequest{PerPage: 100})
	if len(all) != 100 || all[0].ID != ids[len(ids)-1] {
		t.Errorf("unfiltered first page: %d jobs starting %v; want 100 from the newest", len(all), jobIDsOf(all[:1]))
	}
}

func jobIDsOf(list []*data.JobRecord) []string {
	var out []string
	for _, j := range list {
		out = append(out, j.ID)
	}
	return out
}

// BenchmarkListJobs: one page of 15 of a workspace holding n jobs (and another holding
// as many): unfiltered, and filtered by a status, an agent, or a caller's agents that
// only the oldest job has. docs/performance.md records the figures.
func BenchmarkListJobs(b *testing.B) {
	for _, n := range []int{1_000, 20_000} {
		db := openInternal(b, &clock{t: time.Now()})
		storeJobs(b, db, n)
		for _, c := range []struct {
			name string
			sel  data.JobSelection
		}{
			{"all", data.JobSelection{Kinds: listKinds}},
			{"failed", data.JobSelection{Kinds: listKinds, JobFilter: data.JobFilter{Status: data.JobFailed}}},
			{"rare_agent", data.JobSelection{Kinds: listKinds, JobFilter: data.JobFilter{AgentID: rareAgent}}},
			{"limited_to_rare_agent", data.JobSelection{Kinds: listKinds, Agents: []string{rareAgent}}},
		} {
			b.Run(fmt.Sprintf("%s/jobs=%d", c.name, n), func(b *testing.B) {
				for b.Loop() {
					listJobsPage(b, db, c.sel, data.PageRequest{PerPage: 15})
				}
			})
		}
	}
}

// TestJobListPassesOverOtherPendingStatus: queued and running jobs share their index
// scopes (jobs_index.go), so a list of either passes over the other's entries, at most
// maxJobListPass a page. Whatever the bound and the page size, walking a list by
// next_cursor, and back by prev_cursor from its last page, lists exactly the jobs of the
// status, newest first, each once, though a page may end early (even empty) at the bound.
func TestJobListPassesOverOtherPendingStatus(t *testing.T) {
	c := &clock{t: time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC)}
	db := openInternal(t, c)
	// Oldest first: r for a job claimed (running), q for one left queued.
	const pattern = "rqqqrqqqqqqrrqrq"
	want := map[string][]string{}
	for _, p := range pattern {
		runAt := c.t.Add(time.Hour)
		if p == 'r' {
			runAt = c.t.Add(-time.Hour)
		}
		j := &data.JobRecord{Job: data.Job{ID: db.ids.New(data.PrefixJob), WorkspaceID: listWS, Kind: "a.work", Status: data.JobQueued,
			MaxAttempts: 3, RunAt: data.NewTime(runAt), CreatedAt: data.NewTime(c.t)}}
		if err := db.Update(context.Background(), func(tx service.Tx) error { _, err := tx.EnqueueJob(j); return err }); err != nil {
			t.Fatal(err)
		}
		status := map[rune]string{'r': data.JobRunning, 'q': data.JobQueued}[p]
		want[status] = append([]string{j.ID}, want[status]...) // newest first
	}
	if err := db.Update(context.Background(), func(tx service.Tx) error {
		_, _, err := tx.ClaimJobs(data.JobClaim{Kinds: listKinds, Owner: "r1", Now: c.t, LeaseUntil: c.t.Add(time.Minute), Limit: 100})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer func(was int) { maxJobListPass = was }(maxJobListPass)
	for _, pass := range []int{1, 2, 3, 5, 100} {
		maxJobListPass = pass
		for perPage := 1; perPage <= 3; perPage++ {
			for _, status := range []string{data.JobQueued, data.JobRunning} {
				sel := data.JobSelection{Kinds: listKinds, JobFilter: data.JobFilter{Status: status}}
				var forward, back []string
				list, page := listJobsPage(t, db, sel, data.PageRequest{PerPage: perPage})
				forward = append(forward, jobIDsOf(list)...)
				for n := 0; page.NextCursor != nil && n < 50; n++ {
					list, page = listJobsPage(t, db, sel, data.PageRequest{PerPage: perPage, Cursor: *page.NextCursor})
					forward = append(forward, jobIDsOf(list)...)
				}
				back = jobIDsOf(list)
				for n := 0; page.PrevCursor != nil && n < 50; n++ {
					list, page = listJobsPage(t, db, sel, data.PageRequest{PerPage: perPage, Cursor: *page.PrevCursor})
					back = append(jobIDsOf(list), back...)
				}
				if !slices.Equal(forward, want[status]) || !slices.Equal(back, want[status]) {
					t.Errorf("%s, per_page %d, bound %d: forward %v, back %v; want %v", status, perPage, pass, forward, back, want[status])
				}
			}
		}
	}
}

// BenchmarkListPendingJobs: the first page of 15 queued, and of 15 running, jobs of a
// workspace whose 15 oldest jobs are running and the n after them queued: the running
// page's worst case, as its entries share their scope with the queue's (jobs_index.go)
// and it passes over all n. docs/performance.md records the figures.
func BenchmarkListPendingJobs(b *testing.B) {
	for _, n := range []int{1_000, 20_000} {
		c := &clock{t: time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC)}
		db := openInternal(b, c)
		const running = 15
		for start := 0; start < running+n; start += 1000 {
			if err := db.Update(context.Background(), func(tx service.Tx) error {
				for i := start; i < min(start+1000, running+n); i++ {
					j := &data.JobRecord{Job: data.Job{ID: db.ids.New(data.PrefixJob), WorkspaceID: listWS, Kind: "a.work", Status: data.JobQueued,
						MaxAttempts: 3, RunAt: data.NewTime(c.t), CreatedAt: data.NewTime(c.t)}}
					if i < running {
						until := data.NewTime(c.t.Add(time.Hour))
						j.Status, j.Attempt, j.LeaseOwner, j.LeaseUntil = data.JobRunning, 1, "r1", &until
					}
					if _, err := tx.EnqueueJob(j); err != nil {
						return err
					}
				}
				return nil
			}); err != nil {
				b.Fatal(err)
			}
		}
		for _, status := range []string{data.JobQueued, data.JobRunning} {
			sel := data.JobSelection{Kinds: listKinds, JobFilter: data.JobFilter{Status: status}}
			b.Run(fmt.Sprintf("%s/queued=%d", status, n), func(b *testing.B) {
				for b.Loop() {
					if list, _ := listJobsPage(b, db, sel, data.PageRequest{PerPage: 15}); len(list) != 15 {
						b.Fatalf("%d jobs, want 15", len(list))
					}
				}
			})
		}
	}
}
