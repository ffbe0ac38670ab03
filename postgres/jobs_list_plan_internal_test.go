package postgres

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// TestJobListPagesSeekTheirFilter: a page of jobs with one filter (status, kind, agent)
// reads per_page+1 rows of that filter's index (0019_jobs_list.sql) however many jobs
// precede it, and a page without a filter per_page+1 of the workspace's jobs, in the plan
// as sent and in the generic plan the server keeps for a prepared statement after a few
// runs (checkAgentsPagePlan plans both). The generic plan, not knowing the filter's
// value, walked jobs_pkey back from the cursor and passed over every job of other values
// (9,983 rows for the second page of failed ones, the oldest 16 of 20,000; 19,984 for a
// caller reading one kind only): the filter, or the caller's one kind, is now the first
// column of the page's order (keyset.within), which no plan can serve from jobs_pkey
// without a sort.
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
		// Every job in the window: the workspace pinned (jobList) still orders the page,
		// which an equality did not (the plan as sent walked jobs_pkey).
		{"every job of a time window", data.JobSelection{Kinds: kinds, JobFilter: data.JobFilter{From: time.UnixMilli(1)}}, "jobs_by_workspace", page},
		{"failed jobs", data.JobSelection{Kinds: kinds, JobFilter: data.JobFilter{Status: data.JobFailed}}, "jobs_by_status", page},
		{"queued jobs", data.JobSelection{Kinds: kinds, JobFilter: data.JobFilter{Status: data.JobQueued}}, "jobs_by_status", page},
		{"one kind's jobs", data.JobSelection{Kinds: kinds, JobFilter: data.JobFilter{Kind: "c.rare"}}, "jobs_by_kind", page},
		{"one agent's jobs", data.JobSelection{Kinds: kinds, JobFilter: data.JobFilter{AgentID: "agt_rare"}}, "jobs_by_agent", page},
		{"a caller reading one kind", data.JobSelection{Kinds: []string{"c.rare"}}, "jobs_by_kind", page},
	} {
		checkAgentsPagePlan(t, db, agentsPageCase{name: c.name, ks: jobList("ws_1", c.sel), middle: "job_000010000ws_1", index: c.index, maxRows: c.maxRows}, perPage)
	}
}

// TestLimitedJobListWalksEachAgent: a page for a caller limited to some agents walks each
// of its agents' jobs apart on jobs_by_agent, and the jobs of no agent kind by kind on
// jobs_by_kind (keyset.walks), reading at most per_page+1 of each walk however many jobs
// of other agents lie between: here the other agents' jobs outnumber the caller's agent's
// 98 to 1 (and those of no agent 98 to 1). The one agent_id = ANY(…) over the workspace's
// jobs passed over every other agent's job between the cursor and the page's end (735 to
// 784 rows for a page of 15; 1,568 for a caller reading one kind, which read
// jobs_by_kind). Planned as sent and generic (checkAgentsPagePlan).
func TestLimitedJobListWalksEachAgent(t *testing.T) {
	db := openInternal(t)
	const perPage = 15
	if err := db.Update(context.Background(), func(stx service.Tx) error {
		// In each workspace one job in 100 is agt_mine's (a.work, failed), one in 100 is of no
		// agent (b.sweep, failed), the rest are other agents' (a.work, succeeded).
		_, err := stx.(*tx).exec(`INSERT INTO jobs (id, workspace_id, kind, agent_id, payload, status, attempt, max_attempts, run_at, created_at, finished_at)
			SELECT 'job_' || lpad(i::text, 9, '0') || ws, ws,
				CASE WHEN i % 100 = 50 THEN 'b.sweep' ELSE 'a.work' END,
				CASE WHEN i % 100 = 0 THEN 'agt_mine' WHEN i % 100 = 50 THEN NULL ELSE 'agt_other' || (i % 7) END,
				'', CASE WHEN i % 50 = 0 THEN 'failed' ELSE 'succeeded' END, 1, 1, now(), now(), now()
			FROM generate_series(1, 20000) i CROSS JOIN (VALUES ('ws_1'), ('ws_2')) w(ws); ANALYZE jobs`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	kinds, agentKinds := []string{"a.work", "b.sweep"}, []string{"a.work"}
	limited := func(agents []string, f data.JobFilter) data.JobSelection {
		return data.JobSelection{Kinds: kinds, Agents: agents, AgentKinds: agentKinds, JobFilter: f}
	}
	mine, page := []string{"agt_mine"}, perPage+1
	for _, c := range []struct {
		name    string
		sel     data.JobSelection
		index   string
		maxRows int
	}{
		{"a limited caller's jobs", limited(mine, data.JobFilter{}), "jobs_by_agent", 2 * page},
		{"a caller limited to two agents", limited([]string{"agt_mine", "agt_none"}, data.JobFilter{}), "jobs_by_agent", 2 * page},
		// A status is a condition on the walks' rows. Failed being rare (2%), the planner
		// expects a walk to pass over 50 jobs for each it keeps and may read the agent's,
		// and the kind's, 200 whole by bitmap instead: never the other agents' 19,600.
		{"a limited caller's failed jobs", limited(mine, data.JobFilter{Status: data.JobFailed}), "jobs_by_agent", 200},
		{"a limited caller's jobs of an agent kind", limited(mine, data.JobFilter{Kind: "a.work"}), "jobs_by_agent", page},
		{"a limited caller's jobs of no agent's kind", limited(mine, data.JobFilter{Kind: "b.sweep"}), "jobs_by_kind", page},
		{"a limited caller reading an agent kind only", data.JobSelection{Kinds: agentKinds, Agents: mine, AgentKinds: agentKinds}, "jobs_by_agent", page},
	} {
		checkAgentsPagePlan(t, db, agentsPageCase{name: c.name, ks: jobList("ws_1", c.sel), middle: "job_000010000ws_1", index: c.index, maxRows: c.maxRows}, perPage)
	}
}

// TestLimitedJobListWalksUpToTheBound: a limited caller's page walks apart up to
// data.MaxJobListWalks walks (an agent each, and each kind of no agent), the bound the
// bbolt engine merges its scopes under; past it, one range of the workspace's jobs with
// the agents checked on each (jobWalks).
func TestLimitedJobListWalksUpToTheBound(t *testing.T) {
	agents := func(n int) []string {
		list := make([]string, n)
		for i := range list {
			list[i] = fmt.Sprintf("agt_%d", i)
		}
		return list
	}
	kinds, agentKinds := []string{"a.work", "b.sweep"}, []string{"a.work"}
	for _, c := range []struct {
		agents int
		walked bool
	}{{data.MaxJobListWalks - 1, true}, {data.MaxJobListWalks, false}} {
		ks := jobList("ws_1", data.JobSelection{Kinds: kinds, Agents: agents(c.agents), AgentKinds: agentKinds})
		if walked := ks.walks != nil; walked != c.walked {
			t.Errorf("%d agents and a kind of no agent: walked apart %v, want %v", c.agents, walked, c.walked)
		}
	}
}

// TestLimitedJobListWalksWhereAgentKindsAreRare: an agent's walk reads per_page+1 of its
// jobs where the agents' kinds are rare among the workspace's (one job in 25; the rest
// are of no agent): the walk's kind condition is a CASE (walk.within), so the planner
// does not take the kinds' share of the table for their share of the agent's jobs (all
// of them). As "kind = ANY(…)" it expected the walk to pass over most of the agent's jobs
// and read them all by bitmap and sorted them: 399 to 800 rows for a page of 15.
func TestLimitedJobListWalksWhereAgentKindsAreRare(t *testing.T) {
	db := openInternal(t)
	const perPage = 15
	if err := db.Update(context.Background(), func(stx service.Tx) error {
		_, err := stx.(*tx).exec(`INSERT INTO jobs (id, workspace_id, kind, agent_id, payload, status, attempt, max_attempts, run_at, created_at, finished_at)
			SELECT 'job_' || lpad(i::text, 9, '0') || ws, ws,
				CASE WHEN i % 25 = 0 THEN 'a.work' ELSE 'b.sweep' END,
				CASE WHEN i % 25 = 0 THEN 'agt_mine' ELSE NULL END,
				'', 'succeeded', 1, 1, now(), now(), now()
			FROM generate_series(1, 20000) i CROSS JOIN (VALUES ('ws_1'), ('ws_2')) w(ws); ANALYZE jobs`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	sel := data.JobSelection{Kinds: []string{"a.work"}, Agents: []string{"agt_mine"}, AgentKinds: []string{"a.work"}}
	checkAgentsPagePlan(t, db, agentsPageCase{name: "an agent's jobs of a rare kind", ks: jobList("ws_1", sel), middle: "job_000010000ws_1",
		index: "jobs_by_agent", maxRows: perPage + 1}, perPage)
}

// TestJobListPagesStopAtTheirWindow: a page of jobs created from a time (JobFilter.From,
// an id bound after the filter's column in its index) ends its index scan at that bound,
// however many of the filter's jobs are older: here 5 jobs of the window after 20,000
// older ones of the same agent, kind and status. The filter's column compared as a range
// alone, the generic plan's scan was bounded only by it and read on through every older
// job of the filter's value (222 pages, 240 for a limited caller's walks); pinned
// (pinned), 4 to 23 in all.
// Planned as sent and generic, the first page.
func TestJobListPagesStopAtTheirWindow(t *testing.T) {
	db := openInternal(t)
	from := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	if err := db.Update(context.Background(), func(stx service.Tx) error {
		_, err := stx.(*tx).exec(`INSERT INTO jobs (id, workspace_id, kind, agent_id, payload, status, attempt, max_attempts, run_at, created_at, finished_at)
			SELECT CASE WHEN i <= 20000 THEN 'job_00' ELSE $1 END || lpad(i::text, 9, '0') || ws, ws,
				'a.work', 'agt_1', '', 'failed', 1, 1, now(), now(), now()
			FROM generate_series(1, 20005) i CROSS JOIN (VALUES ('ws_1'), ('ws_2')) w(ws)`, data.IDBound(data.PrefixJob, from))
		if err == nil {
			_, err = stx.(*tx).exec(`ANALYZE jobs`)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	kinds, window := []string{"a.work", "b.sweep"}, data.JobFilter{From: from}
	filtered := func(f data.JobFilter) data.JobFilter { f.From = from; return f }
	for _, c := range []struct {
		name string
		sel  data.JobSelection
	}{
		{"failed jobs", data.JobSelection{Kinds: kinds, JobFilter: filtered(data.JobFilter{Status: data.JobFailed})}},
		{"one kind's jobs", data.JobSelection{Kinds: kinds, JobFilter: filtered(data.JobFilter{Kind: "a.work"})}},
		{"one agent's jobs", data.JobSelection{Kinds: kinds, JobFilter: filtered(data.JobFilter{AgentID: "agt_1"})}},
		{"a caller reading one kind", data.JobSelection{Kinds: []string{"a.work"}, JobFilter: window}},
		{"a limited caller's jobs", data.JobSelection{Kinds: kinds, Agents: []string{"agt_1"}, AgentKinds: []string{"a.work"}, JobFilter: window}},
	} {
		ks := jobList("ws_1", c.sel)
		for _, generic := range []bool{false, true} {
			plan := plannedExplain(t, db, generic, func(x *tx) (string, []any, error) {
				q, err := x.pageQuery(ks, data.PageRequest{PerPage: 15})
				return q.sql, q.args, err
			})
			checkPlanPages(t, fmt.Sprintf("%s (generic %v)", c.name, generic), plan, 24)
		}
	}
}

// TestJobListPagesWithoutAFilterStopAtTheirWindow: a page of a workspace's jobs created
// in a time window (JobFilter.From and To, bounds on id after the workspace in
// jobs_by_workspace) and no filter reads the window's jobs of its workspace alone: here
// 5, after 20,000 older ones and before 20,000 newer ones of the same workspace, beside
// 20,000 of another workspace inside the window. Its first page, a page older and a page
// newer than the window's middle job and both cursors' checks (pagePlans), as sent and
// generic. The workspace compared as a range alone, the scan was bounded by it alone and
// read on through the workspace's older or newer jobs (125 to 191 pages); pinned in
// order (pinnedInOrder), 4 or 5.
func TestJobListPagesWithoutAFilterStopAtTheirWindow(t *testing.T) {
	db := openInternal(t)
	from, to := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	if err := db.Update(context.Background(), func(stx service.Tx) error {
		_, err := stx.(*tx).exec(`INSERT INTO jobs (id, workspace_id, kind, payload, status, attempt, max_attempts, run_at, created_at, finished_at)
			SELECT prefix || lpad(i::text, 9, '0') || ws, ws, 'a.work', '', 'succeeded', 1, 1, now(), now(), now()
			FROM (VALUES ('job_00', 'ws_1', 20000), ($1, 'ws_1', 5), ($2, 'ws_1', 20000), ($1, 'ws_2', 20000)) AS f(prefix, ws, n)
				CROSS JOIN LATERAL generate_series(1, n) i`, data.IDBound(data.PrefixJob, from), data.IDBound(data.PrefixJob, to))
		if err == nil {
			_, err = stx.(*tx).exec(`ANALYZE jobs`)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	ks := jobList("ws_1", data.JobSelection{Kinds: []string{"a.work", "b.sweep"}, JobFilter: data.JobFilter{From: from, To: to}})
	middle := data.IDBound(data.PrefixJob, from) + "000000003ws_1"
	for i, plan := range pagePlans(t, db, ks, middle, 15) {
		checkPlanPages(t, fmt.Sprintf("statement %d", i), plan, 12)
	}
}
