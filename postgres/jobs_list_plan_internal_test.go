package postgres

import (
	"context"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// TestJobListPagesSeekTheirFilter: a page of jobs with one filter (status, kind, agent)
// reads per_page+1 rows of that filter's index (0019_jobs_list.sql) however many jobs
// precede it, and a page without a filter at most per_page+1 of each kind the caller may
// read, in the plan as sent and in the generic plan the server keeps for a prepared
// statement after a few runs (checkAgentsPagePlan plans both). The generic plan, not
// knowing the filter's value, walked jobs_pkey back from the cursor and passed over
// every job of other values (9,983 rows for the second page of failed ones, the oldest
// 16 of 20,000; 19,984 for a caller reading one kind only): the filter is now the first
// column of the page's order (keyset.within), and the kinds are walked apart
// (keyset.each), which no plan can serve from jobs_pkey without a sort.
func TestJobListPagesSeekTheirFilter(t *testing.T) {
	db := openInternal(t)
	const perPage = 15
	if err := db.Update(context.Background(), func(stx service.Tx) error {
		// In each workspace the oldest 16 jobs are agt_rare's, of kind c.rare, failed; the
		// rest spread over ten agents (a.work) and no agent (b.sweep), succeeded.
		_, err := stx.(*tx).exec(`INSERT INTO jobs (id, workspace_id, kind, agent_id, payload, status, attempt, max_attempts, run_at, created_at, finished_at)
			SELECT 'job_' || lpad(i::text, 9, '0') || ws, ws,
				CASE WHEN i <= 16 THEN 'c.rare' WHEN i % 2 = 0 THEN 'a.work' ELSE 'b.sweep' END,
				CASE WHEN i <= 16 THEN 'agt_rare' WHEN i % 2 = 0 THEN 'agt_' || (i % 10) ELSE NULL END,
				'', CASE WHEN i <= 16 THEN 'failed' ELSE 'succeeded' END, 1, 1, now(), now(), now()
			FROM generate_series(1, 20000) i CROSS JOIN (VALUES ('ws_1'), ('ws_2')) w(ws); ANALYZE jobs`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	kinds := []string{"a.work", "b.sweep", "c.rare"}
	page := perPage + 1
	for _, c := range []struct {
		name    string
		sel     data.JobSelection
		index   string
		maxRows int
	}{
		{"every job", data.JobSelection{Kinds: kinds}, "jobs_by_workspace", page},
		{"failed jobs", data.JobSelection{Kinds: kinds, JobFilter: data.JobFilter{Status: data.JobFailed}}, "jobs_by_status", page},
		{"queued jobs", data.JobSelection{Kinds: kinds, JobFilter: data.JobFilter{Status: data.JobQueued}}, "jobs_by_status", page},
		{"one kind's jobs", data.JobSelection{Kinds: kinds, JobFilter: data.JobFilter{Kind: "c.rare"}}, "jobs_by_kind", page},
		{"one agent's jobs", data.JobSelection{Kinds: kinds, JobFilter: data.JobFilter{AgentID: "agt_rare"}}, "jobs_by_agent", page},
		{"a caller reading one kind", data.JobSelection{Kinds: []string{"c.rare"}}, "jobs_by_kind", page},
	} {
		checkAgentsPagePlan(t, db, agentsPageCase{name: c.name, ks: jobList("ws_1", c.sel), middle: "job_000010000ws_1", index: c.index, maxRows: c.maxRows}, perPage)
	}
}
