package bolt

import (
	"context"
	"crypto/rand"
	"fmt"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

const listWS = "ws_01JD6000000000000000000001"

// storeJobs stores n jobs of listWS, one a millisecond from t0, and n of another
// workspace; the oldest of listWS's is failed, the rest succeeded. It returns listWS's
// ids, oldest first.
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
					status := data.JobSucceeded
					if i == 0 {
						status = data.JobFailed
					}
					j := &data.JobRecord{Job: data.Job{ID: gen.New(data.PrefixJob), WorkspaceID: ws, Kind: "a.work", Status: status,
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

// TestJobListScanBound: a filter that matches only the oldest of more jobs than one page
// looks at answers an empty page with a next_cursor, and the page after finds the job:
// a page stays bounded however rare its matches, and a walk still reaches them all.
func TestJobListScanBound(t *testing.T) {
	db := openInternal(t, &clock{t: time.Now()})
	ids := storeJobs(t, db, maxJobListScan+5)
	sel := data.JobSelection{Kinds: []string{"a.work"}, JobFilter: data.JobFilter{Status: data.JobFailed}}
	first, page := listJobsPage(t, db, sel, data.PageRequest{PerPage: 15})
	if len(first) != 0 || page.NextCursor == nil {
		t.Fatalf("first page: %d jobs, next %v; want none yet and a next_cursor", len(first), page.NextCursor)
	}
	second, page := listJobsPage(t, db, sel, data.PageRequest{PerPage: 15, Cursor: *page.NextCursor})
	if len(second) != 1 || second[0].ID != ids[0] || page.NextCursor != nil || page.PrevCursor == nil {
		t.Fatalf("second page: %v, %+v; want the failed job, no next_cursor, a prev_cursor", jobIDsOf(second), page)
	}
	all, _ := listJobsPage(t, db, data.JobSelection{Kinds: []string{"a.work"}}, data.PageRequest{PerPage: 100})
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
// as many): unfiltered, and filtered by a status only the oldest job has (the scan bound
// answers it). docs/performance.md records the figures.
func BenchmarkListJobs(b *testing.B) {
	for _, n := range []int{1_000, 20_000} {
		db := openInternal(b, &clock{t: time.Now()})
		storeJobs(b, db, n)
		for _, c := range []struct {
			name string
			sel  data.JobSelection
		}{
			{"all", data.JobSelection{Kinds: []string{"a.work"}}},
			{"failed", data.JobSelection{Kinds: []string{"a.work"}, JobFilter: data.JobFilter{Status: data.JobFailed}}},
		} {
			b.Run(fmt.Sprintf("%s/jobs=%d", c.name, n), func(b *testing.B) {
				for b.Loop() {
					listJobsPage(b, db, c.sel, data.PageRequest{PerPage: 15})
				}
			})
		}
	}
}
