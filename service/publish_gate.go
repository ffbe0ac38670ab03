package service

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/voiceapi/voiceapi/data"
)

// The publish gate (conventions §22): an agent with required tests publishes only when a
// run of its current draft passed every required test as the test stands now. "The
// current draft" is its revision: a keyed hash of what of its configuration a test can
// observe (data.TestedContent), so what no test observes (a publish, a restore of the same
// configuration, a rename, a rollout, privacy, a voice) leaves a tested draft tested. Each required test counts by
// its latest result in a finished run of that revision; a test changed since (its ETag)
// counts as not run.

// draftRevisionInfo names the draft revisions' key among the keys derived from the secret
// key.
const draftRevisionInfo = "voiceapi draft revision v1"

// draftRevisionPrefix starts a draft revision (c: configuration, 1: TestedContent's first
// encoding). Runs stored before it carry the agent's ETag instead, always in quotes.
const draftRevisionPrefix = "c1-"

// draftRevision is the revision of a draft's configuration c, its api_key opened: an HMAC
// under a key derived from the instance's secret, so the key it covers cannot be guessed
// from a revision any reader of the runs sees, and a key sealed again is the same key.
func (b *base) draftRevision(c data.AgentConfig) (string, error) {
	content, err := data.TestedContent(c)
	if err != nil {
		return "", err
	}
	m := hmac.New(sha256.New, b.revisionKey)
	m.Write(content)
	return draftRevisionPrefix + hex.EncodeToString(m.Sum(nil)[:12]), nil
}

// draftKeys are what a draft's runs were stored under: its revision, and its ETag for the
// runs stored before revisions existed.
type draftKeys struct{ revision, etag string }

// draftKeysOf returns the keys of an agent's draft as loaded (api_key opened).
func (b *base) draftKeysOf(plain *data.StoredAgent) (draftKeys, error) {
	rev, err := b.draftRevision(plain.AgentConfig)
	return draftKeys{revision: rev, etag: data.ETagOf(masked(plain))}, err
}

// PublishGate implements data.TestRunService.
func (s *TestRunService) PublishGate(ctx context.Context, agentID string) (*data.PublishGate, error) {
	var out *data.PublishGate
	err := s.store.View(ctx, func(tx Tx) error {
		_, plain, err := s.agents.load(ctx, tx, agentID)
		if err != nil {
			return err
		}
		keys, err := s.draftKeysOf(plain)
		if err != nil {
			return err
		}
		out, err = publishGate(tx, agentID, keys)
		return err
	})
	return out, err
}

// gateRuns are the runs of the draft, newest first: those of its revision and, stored
// before revisions existed, those of its ETag. An old run whose ETag is the agent's
// current one ran on this very record (the old rule), so it still counts until the
// record changes.
func gateRuns(tx Tx, agentID string, keys draftKeys) ([]*data.StoredTestRun, error) {
	runs, err := tx.TestRunsAt(agentID, keys.revision)
	if err != nil {
		return nil, err
	}
	old, err := tx.TestRunsAt(agentID, keys.etag)
	if err != nil || len(old) == 0 {
		return runs, err
	}
	runs = append(runs, old...)
	// Ids are time-ordered: newest first across both.
	slices.SortFunc(runs, func(a, b *data.StoredTestRun) int { return strings.Compare(b.ID, a.ID) })
	return runs, nil
}

// publishGate reads what a publish of the agent's draft, stored under keys, would meet.
func publishGate(tx Tx, agentID string, keys draftKeys) (*data.PublishGate, error) {
	g := &data.PublishGate{AgentID: agentID, Revision: keys.revision, State: data.GateOpen, Required: []data.GateTest{}}
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
	runs, err := gateRuns(tx, agentID, keys)
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
