package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

func init() {
	suites = append(suites, suite{"test_runs_prune", testTestRunsPrune})
}

// testTestRunsPrune: FinishedTestRunIDs lists an agent's finished runs newest first (not
// those queued or running, not another agent's); DeleteTestRun removes a run with its
// results and its entries in the agent's list and the draft's (the gate's read).
func testTestRunsPrune(t *testing.T, open Opener) {
	s := open(t)
	g := stepIDs()
	t0 := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	const ws, agent, other = "ws_1", "agt_01JD6000000000000000000001", "agt_01JD6000000000000000000002"
	test := *storedTest(g, ws, agent, "first", t0)
	rev := `"aaa"`
	var runs []*data.StoredTestRun
	for i, status := range []string{data.TestPassed, data.TestFailed, data.TestRunning, data.TestError, data.TestQueued} {
		r := storedRun(g, ws, agent, &rev, nil, []data.AgentTest{test}, t0.Add(time.Duration(i)*time.Second))
		r.Status = status
		if data.TestRunFinished(status) {
			end := data.NewTime(t0.Add(time.Minute))
			r.StartedAt, r.FinishedAt = &end, &end
		} else if status == data.TestRunning {
			start := data.NewTime(t0.Add(time.Minute))
			r.StartedAt = &start
		}
		runs = append(runs, r)
	}
	elsewhere := storedRun(g, ws, other, &rev, nil, []data.AgentTest{test}, t0)
	end := data.NewTime(t0.Add(time.Minute))
	elsewhere.Status, elsewhere.StartedAt, elsewhere.FinishedAt = data.TestPassed, &end, &end
	update(t, s, func(tx service.Tx) error {
		for _, r := range append(runs, elsewhere) {
			if err := tx.PutTestRun(r); err != nil {
				return err
			}
			if err := tx.PutTestResult(r.ID, &data.TestCaseResult{TestID: test.ID, Repeat: 1, Status: data.TestPassed,
				Criteria: []data.CriterionVerdict{}, Transcript: []data.ConversationItem{}, Variables: map[string]any{}, StartedAt: end, FinishedAt: end}); err != nil {
				return err
			}
		}
		return nil
	})
	finished := func() []string {
		var ids []string
		view(t, s, func(tx service.Tx) (err error) {
			ids, err = tx.FinishedTestRunIDs(agent)
			return err
		})
		return ids
	}
	if got, want := finished(), []string{runs[3].ID, runs[1].ID, runs[0].ID}; !slices.Equal(got, want) {
		t.Errorf("finished runs: %v, want %v (newest first, finished only)", got, want)
	}
	update(t, s, func(tx service.Tx) error { return tx.DeleteTestRun(runs[1].ID) })
	update(t, s, func(tx service.Tx) error { return tx.DeleteTestRun("trun_none") })
	if got, want := finished(), []string{runs[3].ID, runs[0].ID}; !slices.Equal(got, want) {
		t.Errorf("finished runs after a delete: %v, want %v", got, want)
	}
	view(t, s, func(tx service.Tx) error {
		if r, err := tx.TestRun(runs[1].ID); err != nil || r != nil {
			t.Errorf("the deleted run: %+v, %v", r, err)
		}
		if res, err := tx.TestResults(runs[1].ID); err != nil || len(res) != 0 {
			t.Errorf("the deleted run's results: %d, %v", len(res), err)
		}
		at, err := tx.TestRunsAt(agent, rev)
		if err != nil || len(at) != 4 || slices.ContainsFunc(at, func(r *data.StoredTestRun) bool { return r.ID == runs[1].ID }) {
			t.Errorf("the draft's runs after the delete: %d, %v; want the 4 others", len(at), err)
		}
		page, _, err := tx.TestRunPage(agent, service.StateSelection{}, data.PageRequest{PerPage: 10})
		if err != nil || len(page) != 4 {
			t.Errorf("the agent's runs after the delete: %d, %v; want 4", len(page), err)
		}
		if res, err := tx.TestResults(runs[0].ID); err != nil || len(res) != 1 {
			t.Errorf("a kept run's results: %d, %v", len(res), err)
		}
		return nil
	})
}
