package service

import (
	"context"
	"fmt"
	"strings"

	"github.com/voiceapi/voiceapi/data"
)

// The publish gate (conventions §22): an agent with required tests publishes only when a
// run of its current draft, the revision its ETag names, passed every required test as
// the test stands now. Each required test counts by its latest result in a finished run
// of that revision; a test changed since (its ETag) counts as not run.

// PublishGate implements data.TestRunService.
func (s *TestRunService) PublishGate(ctx context.Context, agentID string) (*data.PublishGate, error) {
	var out *data.PublishGate
	err := s.store.View(ctx, func(tx Tx) error {
		_, plain, err := s.agents.load(ctx, tx, agentID)
		if err != nil {
			return err
		}
		out, err = publishGate(tx, agentID, data.ETagOf(masked(plain)))
		return err
	})
	return out, err
}

// publishGate reads what a publish of the agent's draft at revision would meet.
func publishGate(tx Tx, agentID, revision string) (*data.PublishGate, error) {
	g := &data.PublishGate{AgentID: agentID, Revision: revision, State: data.GateOpen, Required: []data.GateTest{}}
	tests, err := tx.AgentTests(agentID)
	if err != nil {
		return nil, err
	}
	want := map[string]string{} // required test id → its ETag now
	for _, t := range tests {
		if t.RequiredForPublish {
			want[t.ID] = data.ETagOf(t)
			g.Required = append(g.Required, data.GateTest{TestID: t.ID, Name: t.Name, Status: data.GateNotRun})
		}
	}
	if len(want) == 0 {
		return g, nil
	}
	runs, err := tx.TestRunsAt(agentID, revision)
	if err != nil {
		return nil, err
	}
	left := len(want)
	for _, r := range runs { // newest first: a test's latest result decides
		if left == 0 {
			break
		}
		if !data.TestRunFinished(r.Status) {
			continue
		}
		results, err := tx.TestResults(r.ID)
		if err != nil {
			return nil, err
		}
		full := assembleRun(r, results)
		for _, tr := range full.Results {
			i := gateIndex(g, tr.TestID)
			if i < 0 || g.Required[i].RunID != nil || want[tr.TestID] != tr.TestRevision {
				continue
			}
			runID := r.ID
			g.Required[i].Status, g.Required[i].RunID = tr.Status, &runID
			left--
		}
	}
	for _, t := range g.Required {
		switch {
		case t.Status == data.TestFailed || t.Status == data.TestError:
			g.State = data.GateTestsFailed
		case t.Status == data.GateNotRun && g.State == data.GateOpen:
			g.State = data.GateTestsRequired
		}
	}
	return g, nil
}

func gateIndex(g *data.PublishGate, testID string) int {
	for i, t := range g.Required {
		if t.TestID == testID {
			return i
		}
	}
	return -1
}

// gateError is the 409 of a closed gate, naming the tests that stop it.
func gateError(g *data.PublishGate) error {
	var names []string
	for _, t := range g.Required {
		if t.Status == data.TestPassed {
			continue
		}
		if g.State == data.GateTestsFailed && t.Status == data.GateNotRun {
			continue
		}
		n := fmt.Sprintf("%q (%s", t.Name, t.Status)
		if t.RunID != nil {
			n += " in " + *t.RunID
		}
		names = append(names, n+")")
	}
	const how = "Run the tests on this draft (POST /api/v1/agents/{agent_id}/test-runs), or publish with {\"force\": true} (owners and admins)."
	if g.State == data.GateTestsFailed {
		return data.Errorf(data.ETESTSFAILED, "Required tests did not pass on this draft: %s. %s", strings.Join(names, ", "), how)
	}
	return data.Errorf(data.ETESTSREQUIRED, "Required tests have not passed on this draft (revision %s): %s. %s", g.Revision, strings.Join(names, ", "), how)
}
