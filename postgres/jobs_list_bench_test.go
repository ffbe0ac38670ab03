package postgres_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/postgres"
	"github.com/voiceapi/voiceapi/service"
)

// BenchmarkListJobs reads a page of 15 of a workspace's 20,000 jobs (beside another
// workspace's 20,000), unfiltered and by a status only its oldest job has: each filter
// seeks its index of migration 0019, so the rare filter costs a page too. The oldest 16
// are of a kind of their own, c.rare, of no agent: asked for by the kind filter
// (rare_kind) and by a caller who may read that kind only (rare_kind_caller). The other
// jobs, a.work, are agents': one in 100 agt_mine's, one in 1,000 agt_few's, the rest seven
// other agents'. limited is a caller limited to agt_mine, limited_few one limited to
// agt_few, a.work being an agent's kind. Each case runs its statement many times, so the
// server's generic plan for it is measured too.
// docs/performance.md records the figures.
func BenchmarkListJobs(b *testing.B) {
	db := testkit.OpenPostgres(b, nil)
	ctx := context.Background()
	const n = 20000
	for _, ws := range []string{"ws_1", "ws_2"} {
		if _, err := db.Pool().Exec(ctx, `INSERT INTO jobs (id, workspace_id, kind, agent_id, payload, status, attempt, max_attempts, run_at, created_at, finished_at)
			SELECT 'job_' || $2 || lpad(i::text, 9, '0'), $2, CASE WHEN i <= 16 THEN 'c.rare' ELSE 'a.work' END,
				CASE WHEN i <= 16 THEN NULL WHEN i % 100 = 0 THEN 'agt_mine' WHEN i % 1000 = 555 THEN 'agt_few' ELSE 'agt_' || (i % 7) END,
				'', CASE WHEN i = 1 THEN 'failed' ELSE 'succeeded' END, 1, 1, now(), now(), now()
			FROM generate_series(1, $1) i`, n, ws); err != nil {
			b.Fatal(err)
		}
	}
	db.Pool().Exec(ctx, `VACUUM ANALYZE jobs`)
	kinds := []string{"a.work", "c.rare"}
	for _, c := range []struct {
		name string
		sel  data.JobSelection
		want int
	}{
		{"all", data.JobSelection{Kinds: kinds}, 15},
		{"failed", data.JobSelection{Kinds: kinds, JobFilter: data.JobFilter{Status: data.JobFailed}}, 1},
		{"rare_kind", data.JobSelection{Kinds: kinds, JobFilter: data.JobFilter{Kind: "c.rare"}}, 15},
		{"rare_kind_caller", data.JobSelection{Kinds: []string{"c.rare"}}, 15},
		{"limited", data.JobSelection{Kinds: kinds, Agents: []string{"agt_mine"}, AgentKinds: []string{"a.work"}}, 15},
		{"limited_few", data.JobSelection{Kinds: kinds, Agents: []string{"agt_few"}, AgentKinds: []string{"a.work"}}, 15},
	} {
		b.Run(c.name, func(b *testing.B) { benchJobPage(b, db, c.sel, c.want) })
	}
}

// benchJobPage reads ws_1's first page of 15 jobs sel selects, of want jobs, b.N times.
func benchJobPage(b *testing.B, db *postgres.DB, sel data.JobSelection, want int) {
	for b.Loop() {
		err := db.View(context.Background(), func(tx service.Tx) error {
			list, _, err := tx.ListJobs("ws_1", sel, data.PageRequest{PerPage: 15})
			if err == nil && len(list) != want {
				err = fmt.Errorf("page of %d, want %d", len(list), want)
			}
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkListJobsWindow reads the page of a workspace's jobs created in a time window
// (JobFilter.From and To): 5 of them, after 20,000 older ones and before 20,000 newer ones
// of the workspace, beside 20,000 of another workspace in the window; unfiltered (all)
// and by a status they share with the older ones (failed), for a caller who reads two
// kinds (one would be the page's filter, jobList). Each case runs its statement
// many times, so the server's generic plan for it is measured too.
// docs/performance.md records the figures.
func BenchmarkListJobsWindow(b *testing.B) {
	db := testkit.OpenPostgres(b, nil)
	ctx := context.Background()
	from, to := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	if _, err := db.Pool().Exec(ctx, `INSERT INTO jobs (id, workspace_id, kind, payload, status, attempt, max_attempts, run_at, created_at, finished_at)
		SELECT prefix || lpad(i::text, 9, '0') || ws, ws, 'a.work', '', 'failed', 1, 1, now(), now(), now()
		FROM (VALUES ('job_00', 'ws_1', 20000), ($1, 'ws_1', 5), ($2, 'ws_1', 20000), ($1, 'ws_2', 20000)) AS f(prefix, ws, n)
			CROSS JOIN LATERAL generate_series(1, n) i`, data.IDBound(data.PrefixJob, from), data.IDBound(data.PrefixJob, to)); err != nil {
		b.Fatal(err)
	}
	db.Pool().Exec(ctx, `VACUUM ANALYZE jobs`)
	window := data.JobFilter{From: from, To: to}
	failed := window
	failed.Status = data.JobFailed
	for _, c := range []struct {
		name string
		f    data.JobFilter
	}{{"all", window}, {"failed", failed}} {
		b.Run(c.name, func(b *testing.B) {
			benchJobPage(b, db, data.JobSelection{Kinds: []string{"a.work", "b.sweep"}, JobFilter: c.f}, 5)
		})
	}
}
