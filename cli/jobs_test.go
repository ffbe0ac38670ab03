package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/cli"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/service"
)

// jobsServer is a server with agents A and B, an analysis job of each and a url fetch
// job of no agent; A's job ran once and failed with an error and some progress.
type jobsServer struct {
	*testkit.Server
	t              *testing.T
	agentA, agentB string
	jobA, jobB     string
	fetch          string
}

func newJobsServer(t *testing.T) *jobsServer {
	t.Helper()
	s := &jobsServer{Server: testkit.NewServer(t, nil), t: t}
	agent := func(name string) string {
		r := s.Do("POST", "/api/v1/agents", s.Owner.Token, map[string]any{"name": name})
		testkit.Expect(t, r, 201)
		return r.Data()["id"].(string)
	}
	s.agentA, s.agentB = agent("Alpha"), agent("Bravo")
	s.jobA = s.queue(service.JobKindAnalyzeCall, s.agentA)
	s.jobB = s.queue(service.JobKindAnalyzeCall, s.agentB)
	s.fetch = s.queue(service.JobKindFetchURL, "")
	now := time.Now()
	err := s.Store.Update(context.Background(), func(tx service.Tx) error {
		claimed, _, err := tx.ClaimJobs(data.JobClaim{Kinds: []string{service.JobKindAnalyzeCall}, Owner: "test", Now: now.Add(time.Second),
			LeaseUntil: now.Add(time.Minute), Limit: 10})
		for _, j := range claimed {
			if j.ID != s.jobA || err != nil {
				continue
			}
			if _, err = tx.SetJobProgress(j.ID, j.Lease(), data.JobProgress{Done: 3, Total: 7}, ""); err == nil {
				_, err = tx.FinishJob(j.ID, j.Lease(), data.JobOutcome{Status: data.JobFailed, At: now.Add(2 * time.Second), Error: "groq: 401 invalid api key"})
			}
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func (s *jobsServer) queue(kind, agentID string) string {
	s.t.Helper()
	var id string
	err := s.Store.Update(context.Background(), func(tx service.Tx) error {
		j, err := s.Svc.Jobs.Enqueue(tx, data.JobEnqueue{WorkspaceID: s.Owner.WorkspaceID, AgentID: agentID, Kind: kind, Payload: []byte(`{}`)})
		if j != nil {
			id = j.ID
		}
		return err
	})
	if err != nil {
		s.t.Fatal(err)
	}
	return id
}

// voiceapi runs the command line with token against the server.
func (s *jobsServer) voiceapi(token string, args ...string) (string, error) {
	var out, errOut bytes.Buffer
	root := cli.NewRootCommand(&out, &errOut)
	root.SetArgs(append(args, "--server", s.URL, "--token", token))
	err := root.ExecuteContext(context.Background())
	return out.String() + errOut.String(), err
}

// listedIDs reads `jobs list --json` output: one job a line.
func listedIDs(t *testing.T, out string) []string {
	t.Helper()
	var ids []string
	for line := range strings.Lines(out) {
		var j data.Job
		if err := json.Unmarshal([]byte(line), &j); err != nil {
			t.Fatalf("a line that is not a job: %q (%v)", line, err)
		}
		ids = append(ids, j.ID)
	}
	return ids
}

// TestJobsListAndShow: `voiceapi jobs list` shows the failing job with its attempt,
// progress and error, filters by kind, status and agent (by name), and `jobs show`
// prints one job.
func TestJobsListAndShow(t *testing.T) {
	s := newJobsServer(t)
	owner := s.Owner.Token
	out, err := s.voiceapi(owner, "jobs", "list")
	if err != nil || !strings.Contains(out, "LAST ERROR") || len(strings.Split(strings.TrimSpace(out), "\n")) != 4 {
		t.Fatalf("jobs list: %v\n%s", err, out)
	}
	for _, want := range []string{s.jobA + "  analysis.call", "failed", "1/6", "3/7", "groq: 401 invalid api key", s.fetch} {
		if !strings.Contains(out, want) {
			t.Errorf("jobs list lacks %q:\n%s", want, out)
		}
	}
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"--json"}, []string{s.fetch, s.jobB, s.jobA}},
		{[]string{"--json", "--status", "failed"}, []string{s.jobA}},
		{[]string{"--json", "--kind", service.JobKindFetchURL}, []string{s.fetch}},
		{[]string{"--json", "--agent", "Bravo"}, []string{s.jobB}},
		{[]string{"--json", "--agent", s.agentA, "--status", "queued"}, nil},
		{[]string{"--json", "--to", "2000-01-01T00:00:00Z"}, nil},
	}
	for _, c := range cases {
		out, err := s.voiceapi(owner, append([]string{"jobs", "list"}, c.args...)...)
		if got := listedIDs(t, out); err != nil || strings.Join(got, ",") != strings.Join(c.want, ",") {
			t.Errorf("jobs list %v: %v, %v; want %v", c.args, got, err, c.want)
		}
	}
	out, err = s.voiceapi(owner, "jobs", "show", s.jobA)
	for _, want := range []string{"status:      failed", "attempt:     1 of 6", "progress:    3/7", "last error:  groq: 401 invalid api key", "agent:       " + s.agentA, "finished:"} {
		if err != nil || !strings.Contains(out, want) {
			t.Errorf("jobs show lacks %q: %v\n%s", want, err, out)
		}
	}
	out, err = s.voiceapi(owner, "jobs", "show", s.fetch, "--json")
	var j data.Job
	if err != nil || json.Unmarshal([]byte(out), &j) != nil || j.ID != s.fetch || j.Status != data.JobQueued {
		t.Errorf("jobs show --json: %v\n%s", err, out)
	}
	if out, err := s.voiceapi(owner, "jobs", "list", "--status", "stuck"); err == nil || !strings.Contains(out, "status") {
		t.Errorf("an unknown status: %v\n%s", err, out)
	}
}

// TestJobsCommandsHoldAKeysAgents: a key limited to agent A lists A's job and the job of
// no agent, nothing for B asked by id, and B's job is not found by show.
func TestJobsCommandsHoldAKeysAgents(t *testing.T) {
	s := newJobsServer(t)
	r := s.Do("POST", "/api/v1/api-keys", s.Owner.Token, map[string]any{"name": "A only", "agent_ids": []string{s.agentA}})
	testkit.Expect(t, r, 201)
	limited := r.JSON()["token"].(string)
	out, err := s.voiceapi(limited, "jobs", "list", "--json")
	if got := listedIDs(t, out); err != nil || strings.Join(got, ",") != s.fetch+","+s.jobA {
		t.Errorf("limited jobs list: %v, %v; want %s and %s", got, err, s.fetch, s.jobA)
	}
	out, err = s.voiceapi(limited, "jobs", "list", "--json", "--agent", s.agentB)
	if err != nil || out != "" {
		t.Errorf("limited jobs list --agent B: %v %q; want nothing", err, out)
	}
	out, err = s.voiceapi(limited, "jobs", "list")
	if err != nil || strings.Contains(out, s.jobB) || strings.Contains(out, s.agentB) {
		t.Errorf("limited jobs list shows B: %v\n%s", err, out)
	}
	if out, err := s.voiceapi(limited, "jobs", "show", s.jobB); err == nil || !strings.Contains(out, "not found") || strings.Contains(out, s.agentB) {
		t.Errorf("limited jobs show B: %v\n%s", err, out)
	}
	if out, err := s.voiceapi(limited, "jobs", "show", s.jobA); err != nil || !strings.Contains(out, s.jobA) {
		t.Errorf("limited jobs show A: %v\n%s", err, out)
	}
}
