package storetest

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

func init() {
	suites = append(suites, suite{"agent_tests", testAgentTests}, suite{"test_runs", testTestRuns},
		suite{"agent_tests_cascade", testAgentTestsCascade}, suite{"workspace_simulation", testWorkspaceSimulation})
}

func storedTest(g *data.IDGen, ws, agent, name string, at time.Time) *data.AgentTest {
	temp := data.AgentTest{
		ID: g.New(data.PrefixAgentTest), WorkspaceID: ws, AgentID: agent, Name: name,
		User: data.TestUser{Script: []string{"Hi", "Book a table for 2"}}, Variables: map[string]any{"shop": "Acme", "n": json.Number("2")},
		MaxTurns: 5, Mocks: map[string]data.ToolMock{"book": {Status: 200, Body: map[string]any{"ok": true}}},
		Criteria: []data.Criterion{
			{Type: data.CriterionToolCalled, Name: "book", Arguments: map[string]any{"people": json.Number("2")}}, // numbers kept as written (data.JSONObject),
			{Type: data.CriterionVariableEquals, Name: "vip", Value: true},
			{Type: data.CriterionSays, Pattern: `(?i)booked`},
		},
		RequiredForPublish: true, Repeat: 3, CreatedAt: data.NewTime(at), UpdatedAt: data.NewTime(at),
	}
	return &temp
}

func testAgentTests(t *testing.T, open Opener) {
	s := open(t)
	g := stepIDs()
	t0 := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	const ws, agent, other = "ws_1", "agt_01JD6000000000000000000001", "agt_01JD6000000000000000000002"
	a, b := storedTest(g, ws, agent, "first", t0), storedTest(g, ws, agent, "second", t0)
	b.User = data.TestUser{Persona: "An impatient caller", Goal: "Cancel the booking"}
	c := storedTest(g, ws, other, "elsewhere", t0)
	update(t, s, func(tx service.Tx) error {
		for _, x := range []*data.AgentTest{a, b, c} {
			if err := tx.PutAgentTest(x); err != nil {
				return err
			}
		}
		return nil
	})
	view(t, s, func(tx service.Tx) error {
		got, err := tx.AgentTest(a.ID)
		if err != nil || !reflect.DeepEqual(got, a) {
			t.Errorf("AgentTest =\n%+v, %v\nwant\n%+v", got, err, a)
		}
		if none, err := tx.AgentTest("tst_01JD6ZZZZZZZZZZZZZZZZZZZZZ"); none != nil || err != nil {
			t.Errorf("an absent test = %+v, %v", none, err)
		}
		all, err := tx.AgentTests(agent)
		if err != nil || len(all) != 2 || all[0].ID != a.ID || all[1].ID != b.ID {
			t.Errorf("AgentTests = %v, %v; want the agent's two, oldest first", testIDs(all), err)
		}
		page, meta, err := tx.AgentTestPage(agent, data.PageRequest{PerPage: 1})
		if err != nil || len(page) != 1 || page[0].ID != b.ID || meta.NextCursor == nil {
			t.Fatalf("first page = %v %+v, %v; want the newest with a next cursor", testIDs(page), meta, err)
		}
		next, meta, err := tx.AgentTestPage(agent, data.PageRequest{PerPage: 1, Cursor: *meta.NextCursor})
		if err != nil || len(next) != 1 || next[0].ID != a.ID || meta.NextCursor != nil {
			t.Errorf("second page = %v %+v, %v", testIDs(next), meta, err)
		}
		return nil
	})
	// Replace, then delete.
	a.Name, a.RequiredForPublish, a.UpdatedAt = "renamed", false, data.NewTime(t0.Add(time.Minute))
	update(t, s, func(tx service.Tx) error { return tx.PutAgentTest(a) })
	update(t, s, func(tx service.Tx) error { return tx.DeleteAgentTest(b) })
	view(t, s, func(tx service.Tx) error {
		got, _ := tx.AgentTest(a.ID)
		if got == nil || got.Name != "renamed" || got.RequiredForPublish {
			t.Errorf("after the replace: %+v", got)
		}
		if gone, _ := tx.AgentTest(b.ID); gone != nil {
			t.Errorf("a deleted test is still stored: %+v", gone)
		}
		all, err := tx.AgentTests(agent)
		if err != nil || len(all) != 1 {
			t.Errorf("AgentTests after a delete = %v, %v", testIDs(all), err)
		}
		return nil
	})
}

func testIDs(list []*data.AgentTest) []string {
	out := make([]string, len(list))
	for i, x := range list {
		out[i] = x.ID
	}
	return out
}

func storedRun(g *data.IDGen, ws, agent string, revision *string, version *int, tests []data.AgentTest, at time.Time) *data.StoredTestRun {
	ids := make([]string, len(tests))
	for i, x := range tests {
		ids[i] = x.ID
	}
	return &data.StoredTestRun{
		TestRun: data.TestRun{ID: g.New(data.PrefixTestRun), WorkspaceID: ws, AgentID: agent, AgentVersion: version, Revision: revision,
			Status: data.TestQueued, TestIDs: ids, Summary: data.TestRunSummary{Tests: len(tests), Cases: 3 * len(tests)},
			JobID: g.New(data.PrefixJob), CreatedBy: "usr_1", CreatedAt: data.NewTime(at)},
		Config: data.DefaultAgentConfig(), Tests: tests,
	}
}

func testTestRuns(t *testing.T, open Opener) {
	s := open(t)
	g := stepIDs()
	t0 := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	const ws, agent = "ws_1", "agt_01JD6000000000000000000001"
	test := *storedTest(g, ws, agent, "first", t0)
	rev1, rev2, version := `"aaa"`, `"bbb"`, 3
	r1 := storedRun(g, ws, agent, &rev1, nil, []data.AgentTest{test}, t0)
	r2 := storedRun(g, ws, agent, &rev1, nil, []data.AgentTest{test}, t0.Add(time.Second))
	r3 := storedRun(g, ws, agent, &rev2, nil, []data.AgentTest{test}, t0.Add(2*time.Second))
	r4 := storedRun(g, ws, agent, nil, &version, []data.AgentTest{test}, t0.Add(3*time.Second))
	update(t, s, func(tx service.Tx) error {
		for _, r := range []*data.StoredTestRun{r1, r2, r3, r4} {
			if err := tx.PutTestRun(r); err != nil {
				return err
			}
		}
		return nil
	})
	view(t, s, func(tx service.Tx) error {
		got, err := tx.TestRun(r1.ID)
		if err != nil || !reflect.DeepEqual(got, r1) {
			t.Errorf("TestRun =\n%+v, %v\nwant\n%+v", got, err, r1)
		}
		at, err := tx.TestRunsAt(agent, rev1)
		if err != nil || len(at) != 2 || at[0].ID != r2.ID || at[1].ID != r1.ID {
			t.Errorf("TestRunsAt(rev1) = %d runs, %v; want r2 then r1", len(at), err)
		}
		if none, _ := tx.TestRunsAt(agent, `"zzz"`); len(none) != 0 {
			t.Errorf("runs at an unknown revision: %d", len(none))
		}
		page, meta, err := tx.TestRunPage(agent, service.StateSelection{}, data.PageRequest{PerPage: 3})
		if err != nil || len(page) != 3 || page[0].ID != r4.ID || meta.NextCursor == nil {
			t.Errorf("TestRunPage = %d runs (first %v), %+v, %v", len(page), page[0].ID, meta, err)
		}
		return nil
	})
	checkTestResults(t, s, r1, r2, test, t0)
}

// checkTestResults moves r1 on and stores its results, one of them twice (the second
// replaces it) and one with a NUL in its transcript, which survives.
func checkTestResults(t *testing.T, s service.Store, r1, r2 *data.StoredTestRun, test data.AgentTest, t0 time.Time) {
	now := data.NewTime(t0.Add(time.Minute))
	r1.Status, r1.StartedAt = data.TestRunning, &now
	reason := "stop\x00here"
	res := []*data.TestCaseResult{
		{TestID: test.ID, Repeat: 2, Status: data.TestFailed, Criteria: []data.CriterionVerdict{{Criterion: test.Criteria[0], Reason: "never called",
			Evidence: &data.TestEvidence{Item: 1, Content: "Booked"}}}, Transcript: []data.ConversationItem{{Role: data.ItemUser, Content: reason, CreatedAt: now}},
			Variables: map[string]any{"vip": true}, EndReason: data.EndUserEnded, Usage: data.TokenUsage{InputTokens: 10, OutputTokens: 2},
			Latency: data.TestLatency{TotalP50: 120, TotalMax: 300}, StartedAt: now, FinishedAt: now},
		{TestID: test.ID, Repeat: 1, Status: data.TestPassed, Criteria: []data.CriterionVerdict{}, Transcript: []data.ConversationItem{},
			Variables: map[string]any{}, StartedAt: now, FinishedAt: now},
	}
	update(t, s, func(tx service.Tx) error {
		if err := tx.PutTestRun(r1); err != nil {
			return err
		}
		for _, x := range res {
			if err := tx.PutTestResult(r1.ID, x); err != nil {
				return err
			}
		}
		return tx.PutTestResult(r1.ID, res[1]) // the same case again replaces it
	})
	view(t, s, func(tx service.Tx) error {
		got, _ := tx.TestRun(r1.ID)
		if got.Status != data.TestRunning || got.StartedAt == nil || !got.StartedAt.Equal(now.Time) {
			t.Errorf("the run after its start: %s %v", got.Status, got.StartedAt)
		}
		results, err := tx.TestResults(r1.ID)
		if err != nil || len(results) != 2 || results[0].Repeat != 1 || results[1].Repeat != 2 {
			t.Fatalf("TestResults = %d, %v; want repeats 1 and 2 in order", len(results), err)
		}
		want := *res[0]
		want.Transcript = []data.ConversationItem{{Role: data.ItemUser, Content: results[1].Transcript[0].Content, CreatedAt: now}}
		if c := results[1].Transcript[0].Content; c != reason && c != "stop\uFFFDhere" {
			t.Errorf("a NUL in a transcript came back as %q", c)
		}
		if !reflect.DeepEqual(results[1], &want) {
			t.Errorf("result =\n%+v\nwant\n%+v", results[1], &want)
		}
		if others, _ := tx.TestResults(r2.ID); len(others) != 0 {
			t.Errorf("another run has %d results", len(others))
		}
		return nil
	})
}

func testAgentTestsCascade(t *testing.T, open Opener) {
	s := open(t)
	g := stepIDs()
	t0 := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	gone, kept := wsIDs[0], wsIDs[1]
	agents := []string{"agt_01JD6000000000000000000001", "agt_01JD6000000000000000000002", "agt_01JD6000000000000000000003"}
	owner := []string{gone, gone, kept}
	rev := `"r"`
	var tests []*data.AgentTest
	var runs []*data.StoredTestRun
	update(t, s, func(tx service.Tx) error {
		for _, ws := range []string{gone, kept} {
			if err := tx.PutWorkspace(&data.WorkspaceRecord{Workspace: data.Workspace{ID: ws, Name: "W"}}); err != nil {
				return err
			}
		}
		for i, id := range agents {
			if err := tx.PutAgent(storedAgent(id, owner[i], data.AgentStatusDraft), ""); err != nil {
				return err
			}
			at := storedTest(g, owner[i], id, "t", t0)
			r := storedRun(g, owner[i], id, &rev, nil, []data.AgentTest{*at}, t0)
			tests, runs = append(tests, at), append(runs, r)
			for _, err := range []error{tx.PutAgentTest(at), tx.PutTestRun(r),
				tx.PutTestResult(r.ID, &data.TestCaseResult{TestID: at.ID, Repeat: 1, Status: data.TestPassed})} {
				if err != nil {
					return err
				}
			}
		}
		return nil
	})
	// The first agent's delete takes its tests, runs and results; then the workspace's
	// delete takes the second's; the other workspace's agent keeps everything.
	update(t, s, func(tx service.Tx) error {
		a, err := tx.Agent(agents[0])
		if err != nil || a == nil {
			return err
		}
		return tx.DeleteAgent(a)
	})
	check := func(i int, want bool) {
		t.Helper()
		view(t, s, func(tx service.Tx) error {
			at, _ := tx.AgentTest(tests[i].ID)
			r, _ := tx.TestRun(runs[i].ID)
			results, _ := tx.TestResults(runs[i].ID)
			byRev, _ := tx.TestRunsAt(agents[i], rev)
			all, _ := tx.AgentTests(agents[i])
			if has := at != nil; has != want || (r != nil) != want || (len(results) == 1) != want || (len(byRev) == 1) != want || (len(all) == 1) != want {
				t.Errorf("agent %d: test %v, run %v, %d results, %d runs at its revision, %d tests; want them kept: %v", i, at != nil, r != nil, len(results), len(byRev), len(all), want)
			}
			return nil
		})
	}
	check(0, false)
	check(1, true)
	update(t, s, func(tx service.Tx) error { return tx.DeleteWorkspace(gone) })
	check(1, false)
	check(2, true)
}

func testWorkspaceSimulation(t *testing.T, open Opener) {
	s := open(t)
	temp, key := 0.3, "sealed-key"
	sim := &data.SimulationModel{Provider: data.LLMMistral, Model: "mistral-small-latest", Temperature: &temp, APIKey: &key}
	w := &data.WorkspaceRecord{Workspace: data.Workspace{ID: wsIDs[0], Name: "W", Privacy: data.WorkspacePrivacy{}.Normalized(), Simulation: sim}}
	update(t, s, func(tx service.Tx) error { return tx.PutWorkspace(w) })
	view(t, s, func(tx service.Tx) error {
		got, err := tx.Workspace(wsIDs[0])
		if err != nil || got == nil || !reflect.DeepEqual(got.Simulation, sim) {
			t.Errorf("simulation = %+v, %v; want %+v", got, err, sim)
		}
		return nil
	})
	w.Simulation = nil
	update(t, s, func(tx service.Tx) error { return tx.PutWorkspace(w) })
	view(t, s, func(tx service.Tx) error {
		got, _ := tx.Workspace(wsIDs[0])
		if got.Simulation != nil {
			t.Errorf("a cleared simulation came back: %+v", got.Simulation)
		}
		return nil
	})
}
