package server_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/server"
	"github.com/voiceapi/voiceapi/service"
)

// urlFetchJob creates a knowledge base with one url source as s's owner and returns the
// id of the fetch job that came with it (no runner runs in s: it stays queued).
func urlFetchJob(t *testing.T, s *testkit.Server) string {
	t.Helper()
	testkit.Expect(t, s.Do("POST", "/api/v1/knowledge-bases", s.Owner.Token, map[string]any{"name": "Web", "urls": []string{"https://example.com/a"}}), 201)
	var jobs []*data.JobRecord
	if err := s.Store.View(context.Background(), func(tx service.Tx) (err error) {
		jobs, _, err = tx.Jobs(s.Owner.WorkspaceID, data.PageRequest{})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 1 || jobs[0].Kind != service.JobKindFetchURL {
		t.Fatalf("jobs after adding a url: %+v", jobs)
	}
	return jobs[0].ID
}

// TestJobShowAndWhoMayReadIt: GET /api/v1/jobs/{job_id} shows a job to the callers who
// hold its kind's module (and read scope); everyone else, another workspace's member
// included, gets not_found, as for an id that does not exist.
func TestJobShowAndWhoMayReadIt(t *testing.T) {
	s := testkit.NewServer(t, nil)
	id := urlFetchJob(t, s)
	ws := s.Owner.WorkspaceID
	r := s.Do("GET", "/api/v1/jobs/"+id, s.Owner.Token, nil)
	testkit.Expect(t, r, 200)
	d := r.Data()
	if d["id"] != id || d["kind"] != service.JobKindFetchURL || d["status"] != data.JobQueued || d["attempt"] != 0.0 ||
		d["max_attempts"] != 5.0 || d["workspace_id"] != ws || d["last_error"] != nil || d["started_at"] != nil ||
		d["finished_at"] != nil || d["agent_id"] != nil || d["run_at"] == nil || d["created_at"] == nil {
		t.Errorf("job: %s", r.Body)
	}
	if p, _ := d["progress"].(map[string]any); p["done"] != 0.0 || p["total"] != 0.0 {
		t.Errorf("progress: %v", d["progress"])
	}
	for _, hidden := range []string{"payload", "lease_owner", "lease_until", "unique_key", "checkpoint"} {
		if _, ok := d[hidden]; ok {
			t.Errorf("the job shows %s: %s", hidden, r.Body)
		}
	}
	if r.Header.Get("ETag") == "" {
		t.Error("no ETag on a single record")
	}
	withKB := s.Member("kb@example.com", ws, data.RoleMember, []string{data.ModuleKnowledgeBase}, nil)
	agentsOnly := s.Member("agents@example.com", ws, data.RoleDeveloper, []string{data.ModuleAgents}, nil)
	stranger := s.NewUser("stranger@example.com", false)
	cases := []struct {
		name, token string
		want        int
	}{
		{"member with knowledge_base", withKB.Token, 200},
		{"developer without knowledge_base", agentsOnly.Token, 404},
		{"key with knowledge_base:read", keyWithScopes(t, s, data.ReadScope(data.ModuleKnowledgeBase)), 200},
		{"key with knowledge_base:write", keyWithScopes(t, s, data.WriteScope(data.ModuleKnowledgeBase)), 200},
		{"key with agents:read", keyWithScopes(t, s, data.ReadScope(data.ModuleAgents)), 404},
		{"key with calls:runtime", keyWithScopes(t, s, data.ScopeCallsRuntime), 404},
		{"another workspace's owner", stranger.Token, 404},
	}
	for _, c := range cases {
		r := s.Do("GET", "/api/v1/jobs/"+id, c.token, nil)
		if r.Status != c.want || c.want == 404 && r.Code() != data.ENOTFOUND {
			t.Errorf("%s: %d %s, want %d", c.name, r.Status, r.Body, c.want)
		}
	}
	for _, bad := range []string{"job_01JD6ZZZZZZZZZZZZZZZZZZZZZ", "job_x", strings.Replace(id, "job_", "src_", 1)} {
		if r := s.Do("GET", "/api/v1/jobs/"+bad, s.Owner.Token, nil); r.Status != 404 {
			t.Errorf("GET /api/v1/jobs/%s: %d", bad, r.Status)
		}
	}
	testkit.Expect(t, s.Do("GET", "/api/v1/jobs/"+id, "", nil), 401)
}

// TestJobMetrics: /metrics names every kind's queue depth, running count and oldest due
// age, and the runs this process ended by outcome.
func TestJobMetrics(t *testing.T) {
	s := testkit.NewServer(t, nil)
	urlFetchJob(t, s)
	r := s.Do("GET", "/metrics", s.Owner.Token, nil)
	testkit.Expect(t, r, 200)
	body := string(r.Body)
	for _, want := range []string{
		`voiceapi_job_queue_depth{kind="knowledge_base.fetch_url"} 1`,
		`voiceapi_jobs_running{kind="knowledge_base.fetch_url"} 0`,
		`voiceapi_job_oldest_due_age_seconds{kind="knowledge_base.fetch_url"}`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

// fakeJobs is a data.JobService reporting fixed figures, or failing to read the queues.
type fakeJobs struct {
	data.JobService
	queuesErr error
}

func (f fakeJobs) JobQueues(context.Context) ([]data.JobQueueStat, error) {
	if f.queuesErr != nil {
		return nil, f.queuesErr
	}
	return []data.JobQueueStat{{Kind: "agent_test.run", Queued: 3, Running: 2, OldestDueAge: 1500 * time.Millisecond}}, nil
}

func (f fakeJobs) JobRuns() []data.JobRunCount {
	return []data.JobRunCount{{Kind: "agent_test.run", Outcome: service.JobOutcomeRetried, Count: 4}}
}

// TestJobMetricsSeries: the figures the job service reports become the series; a queue
// read that fails leaves the queue series out of that scrape (a gap, not a zero) and the
// run counts in.
func TestJobMetricsSeries(t *testing.T) {
	scrape := func(jobs data.JobService) string {
		rec := httptest.NewRecorder()
		server.New(server.Services{Jobs: jobs}, server.Config{}).MetricsHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
		return rec.Body.String()
	}
	body := scrape(fakeJobs{})
	for _, want := range []string{
		`voiceapi_job_queue_depth{kind="agent_test.run"} 3`,
		`voiceapi_jobs_running{kind="agent_test.run"} 2`,
		`voiceapi_job_oldest_due_age_seconds{kind="agent_test.run"} 1.5`,
		`voiceapi_job_runs_total{kind="agent_test.run",outcome="retried"} 4`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	body = scrape(fakeJobs{queuesErr: errors.New("the database is down")})
	if strings.Contains(body, "voiceapi_job_queue_depth{") || !strings.Contains(body, `voiceapi_job_runs_total{kind="agent_test.run",outcome="retried"} 4`) {
		t.Errorf("with the queues unreadable: %s", body)
	}
}
