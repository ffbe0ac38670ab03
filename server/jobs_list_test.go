package server_test

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/service"
	"github.com/voiceapi/voiceapi/validate"
)

// jobsOfTwoAgents creates agents A and B, queues analysis jobs for each (n for A, one
// for B) and a url fetch job of no agent, and returns the agents and jobs by name, the
// jobs in creation order.
func jobsOfTwoAgents(t *testing.T, s *testkit.Server, n int) (agentA, agentB string, jobs map[string][]string) {
	t.Helper()
	agent := func(name string) string {
		r := s.Do("POST", "/api/v1/agents", s.Owner.Token, map[string]any{"name": name})
		testkit.Expect(t, r, 201)
		return r.Data()["id"].(string)
	}
	agentA, agentB = agent("A"), agent("B")
	jobs = map[string][]string{}
	queue := func(name, kind, agentID string) {
		err := s.Store.Update(context.Background(), func(tx service.Tx) error {
			j, err := s.Svc.Jobs.Enqueue(tx, data.JobEnqueue{WorkspaceID: s.Owner.WorkspaceID, AgentID: agentID, Kind: kind,
				Payload: []byte(`{}`)})
			if err == nil {
				jobs[name] = append(jobs[name], j.ID)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for range n {
		queue("A", service.JobKindAnalyzeCall, agentA)
	}
	queue("B", service.JobKindAnalyzeCall, agentB)
	queue("none", service.JobKindFetchURL, "")
	return agentA, agentB, jobs
}

// listJobIDs lists GET /api/v1/jobs?query as token, every page, and returns the ids.
func listJobIDs(t *testing.T, s *testkit.Server, token, query string) []string {
	t.Helper()
	var ids []string
	path := "/api/v1/jobs?" + query
	for range 50 {
		r := s.Do("GET", path, token, nil)
		testkit.Expect(t, r, 200)
		for _, item := range r.List() {
			ids = append(ids, item.(map[string]any)["id"].(string))
		}
		next, _ := r.Meta()["next_cursor"].(string)
		if next == "" {
			return ids
		}
		q, _ := url.ParseQuery(query)
		q.Set("cursor", next)
		path = "/api/v1/jobs?" + q.Encode()
	}
	t.Fatal("more than 50 pages")
	return nil
}

// newestFirst is ids of several groups in id order, newest first.
func newestFirst(groups ...[]string) []string {
	var out []string
	for _, g := range groups {
		out = append(out, g...)
	}
	slices.Sort(out)
	slices.Reverse(out)
	return out
}

// TestJobListShowsWhatJobShowShows: every caller's list holds exactly the jobs GET
// /jobs/{id} shows it; a key limited to agent A lists neither B's jobs nor, asked for B
// by name, anything that tells they exist, and B's job is not found for it.
func TestJobListShowsWhatJobShowShows(t *testing.T) {
	s := testkit.NewServer(t, nil)
	a, b, jobs := jobsOfTwoAgents(t, s, 2)
	ws := s.Owner.WorkspaceID
	keyOf := func(body map[string]any) string {
		r := s.Do("POST", "/api/v1/api-keys", s.Owner.Token, body)
		testkit.Expect(t, r, 201)
		return r.JSON()["token"].(string)
	}
	limitedToA := keyOf(map[string]any{"name": "runtime A", "agent_ids": []string{a}})
	memberOfA := s.Member("a@example.com", ws, data.RoleMember, []string{data.ModuleCallHistory}, []string{a})
	kbOnly := s.Member("kb@example.com", ws, data.RoleMember, []string{data.ModuleKnowledgeBase}, nil)
	cases := []struct {
		name, token string
		want        []string
	}{
		{"owner", s.Owner.Token, newestFirst(jobs["A"], jobs["B"], jobs["none"])},
		{"key limited to agent A", limitedToA, newestFirst(jobs["A"], jobs["none"])},
		{"member of agent A with call history", memberOfA.Token, newestFirst(jobs["A"])},
		{"member with knowledge bases only", kbOnly.Token, jobs["none"]},
		{"key with call_history:read", keyOf(map[string]any{"name": "ch", "scopes": []string{"call_history:read"}}), newestFirst(jobs["A"], jobs["B"])},
		{"key with calls:runtime", keyOf(map[string]any{"name": "rt", "scopes": []string{data.ScopeCallsRuntime}}), nil},
		{"another workspace's owner", s.NewUser("stranger@example.com", false).Token, nil},
	}
	every := newestFirst(jobs["A"], jobs["B"], jobs["none"])
	for _, c := range cases {
		got := listJobIDs(t, s, c.token, "per_page=2")
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: listed %v, want %v", c.name, got, c.want)
		}
		for _, id := range every {
			r := s.Do("GET", "/api/v1/jobs/"+id, c.token, nil)
			if shown := r.Status == 200; shown != slices.Contains(c.want, id) {
				t.Errorf("%s: GET /jobs/%s is %d, but the list says %v", c.name, id, r.Status, slices.Contains(c.want, id))
			}
		}
	}
	// Asked for agent B by name, the key limited to A gets the answer of an agent with no
	// jobs: an empty page, not a 404 or 403 that would tell B exists.
	r := s.Do("GET", "/api/v1/jobs?agent_id="+b, limitedToA, nil)
	testkit.Expect(t, r, 200)
	if len(r.List()) != 0 || r.Meta()["next_cursor"] != nil {
		t.Errorf("key limited to A, agent_id=B: %s", r.Body)
	}
	unknown := s.Do("GET", "/api/v1/jobs?agent_id=agt_01JD6000000000000000000009", limitedToA, nil)
	if unknown.Status != 200 || string(unknown.Body) != string(r.Body) {
		t.Errorf("an agent that does not exist answers %d %s, B answers %s: they must not differ", unknown.Status, unknown.Body, r.Body)
	}
	if got := listJobIDs(t, s, s.Owner.Token, "agent_id="+b); !slices.Equal(got, jobs["B"]) {
		t.Errorf("owner, agent_id=B: %v, want %v", got, jobs["B"])
	}
}

// TestJobListFiltersAndPages: kind, status, agent_id and the created range narrow the
// list; pages of one follow each other newest first, and a page's prev_cursor leads back.
func TestJobListFiltersAndPages(t *testing.T) {
	s := testkit.NewServer(t, nil)
	a, _, jobs := jobsOfTwoAgents(t, s, 3)
	canceled := jobs["A"][1]
	if err := s.Store.Update(context.Background(), func(tx service.Tx) error {
		_, err := s.Svc.Jobs.Cancel(tx, canceled)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		query string
		want  []string
	}{
		{"kind=" + service.JobKindFetchURL, jobs["none"]},
		{"kind=" + service.JobKindAnalyzeCall + "&agent_id=" + a, newestFirst(jobs["A"])},
		{"status=canceled", []string{canceled}},
		{"status=queued&agent_id=" + a, newestFirst([]string{jobs["A"][0], jobs["A"][2]})},
		{"status=failed", nil},
		{"to=2000-01-01T00:00:00Z", nil},
		{"from=2000-01-01T00:00:00Z&to=2999-01-01T00:00:00Z", newestFirst(jobs["A"], jobs["B"], jobs["none"])},
	}
	for _, c := range cases {
		if got := listJobIDs(t, s, s.Owner.Token, c.query+"&per_page=1"); !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.query, got, c.want)
		}
	}
	first := s.Do("GET", "/api/v1/jobs?per_page=2", s.Owner.Token, nil)
	testkit.Expect(t, first, 200)
	second := s.Do("GET", "/api/v1/jobs?per_page=2&cursor="+url.QueryEscape(first.Meta()["next_cursor"].(string)), s.Owner.Token, nil)
	testkit.Expect(t, second, 200)
	back := s.Do("GET", "/api/v1/jobs?per_page=2&cursor="+url.QueryEscape(second.Meta()["prev_cursor"].(string)), s.Owner.Token, nil)
	if fmt.Sprint(back.List()) != fmt.Sprint(first.List()) || first.Meta()["prev_cursor"] != nil {
		t.Errorf("next then prev: %s, want the first page %s", back.Body, first.Body)
	}
	// A cursor taken under one filter is refused under another.
	other := s.Do("GET", "/api/v1/jobs?per_page=2&status=queued&cursor="+url.QueryEscape(first.Meta()["next_cursor"].(string)), s.Owner.Token, nil)
	if other.Status != 422 || other.FieldErrors()["cursor"] == nil {
		t.Errorf("a cursor under another filter: %d %s", other.Status, other.Body)
	}
}

// TestJobListRefusesBadFilters: each bad parameter is a 422 naming it (all at once), at
// each bound and just past it; nothing is listed.
func TestJobListRefusesBadFilters(t *testing.T) {
	s := testkit.NewServer(t, nil)
	kindOf := func(n int) string { return "a." + strings.Repeat("b", n-2) }
	cases := []struct {
		name, query string
		faults      []string // nil: 200
	}{
		{"per_page at 1", "per_page=1", nil},
		{"per_page at its maximum", fmt.Sprintf("per_page=%d", data.MaxPerPage), nil},
		{"per_page past its maximum", fmt.Sprintf("per_page=%d", data.MaxPerPage+1), []string{"per_page"}},
		{"per_page 0", "per_page=0", []string{"per_page"}},
		{"per_page not a number", "per_page=ten", []string{"per_page"}},
		{"kind at its bound, not registered", "kind=" + kindOf(validate.MaxJobKindLength), []string{"kind"}},
		{"kind past its bound", "kind=" + kindOf(validate.MaxJobKindLength+1), []string{"kind"}},
		{"kind of another form", "kind=ANALYSIS", []string{"kind"}},
		{"kind registered", "kind=" + service.JobKindTestRun, nil},
		{"unknown status", "status=stuck", []string{"status"}},
		{"every status", "status=" + data.JobRunning, nil},
		{"agent_id of another kind of record", "agent_id=kb_01JD6000000000000000000001", []string{"agent_id"}},
		{"from not a time", "from=today", []string{"from"}},
		{"to before from", "from=2026-11-21T10:00:00Z&to=2026-11-21T09:00:00Z", []string{"to"}},
		{"to equal to from", "from=2026-11-21T10:00:00Z&to=2026-11-21T10:00:00Z", []string{"to"}},
		{"a malformed cursor", "cursor=%21%21", []string{"cursor"}},
		{"an unknown parameter", "stauts=failed", []string{"stauts"}},
		{"every fault at once", "kind=x&status=x&agent_id=x&per_page=0&from=x", []string{"kind", "status", "agent_id", "per_page", "from"}},
	}
	for _, c := range cases {
		r := s.Do("GET", "/api/v1/jobs?"+c.query, s.Owner.Token, nil)
		if c.faults == nil {
			if r.Status != 200 {
				t.Errorf("%s: %d %s, want 200", c.name, r.Status, r.Body)
			}
			continue
		}
		fe := r.FieldErrors()
		if r.Status != 422 || r.Code() != data.EINVALID || len(fe) != len(c.faults) {
			t.Errorf("%s: %d %s, want 422 on %v", c.name, r.Status, r.Body, c.faults)
			continue
		}
		for _, f := range c.faults {
			if fe[f] == nil {
				t.Errorf("%s: no fault on %s: %s", c.name, f, r.Body)
			}
		}
	}
}
