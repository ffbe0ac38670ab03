package bolt

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// Buckets of agent tests (conventions §22): the tests and an index of them by agent; the
// runs, an index of them by agent and one by the draft revision they ran on
// ("<agent id>\x00<revision>\x00<run id>", the publish gate's read); and the runs' results,
// one per test and repeat ("<run id>\x00<test id>\x00<2-byte repeat>").
var (
	bucketAgentTests      = []byte("agent_tests")
	bucketAgentTestsByAgt = []byte("agent_tests_by_agent")
	bucketTestRuns        = []byte("test_runs")
	bucketTestRunsByAgent = []byte("test_runs_by_agent")
	bucketTestRunsByDraft = []byte("test_runs_by_revision")
	bucketTestRunResults  = []byte("test_run_results")
)

func init() {
	allBuckets = append(allBuckets, bucketAgentTests, bucketAgentTestsByAgt, bucketTestRuns, bucketTestRunsByAgent,
		bucketTestRunsByDraft, bucketTestRunResults)
	// A workspace's delete deletes its agents one by one, and so reaches this hook.
	agentDeleteHooks = append(agentDeleteHooks, func(_ *DB, tx *bbolt.Tx, _, agentID string) error {
		return deleteAgentTests(tx, agentID)
	})
}

func revisionScope(agentID, revision string) string { return agentID + "\x00" + revision }

func testResultKey(runID, testID string, repeat int) []byte {
	k := make([]byte, 0, len(runID)+len(testID)+4)
	k = append(k, runID...)
	k = append(k, 0)
	k = append(k, testID...)
	k = append(k, 0)
	return binary.BigEndian.AppendUint16(k, uint16(repeat))
}

// AgentTest implements service.AgentTestTx.
func (t tx) AgentTest(id string) (*data.AgentTest, error) {
	var out data.AgentTest
	found, err := getJSON(t.b.Bucket(bucketAgentTests), []byte(id), &out)
	if err != nil || !found {
		return nil, err
	}
	return &out, nil
}

// AgentTests implements service.AgentTestTx.
func (t tx) AgentTests(agentID string) ([]*data.AgentTest, error) {
	ids := scopeIDs(t.b.Bucket(bucketAgentTestsByAgt), agentID)
	return t.agentTestsOf(ids)
}

func (t tx) agentTestsOf(ids []string) ([]*data.AgentTest, error) {
	out := make([]*data.AgentTest, 0, len(ids))
	for _, id := range ids {
		at, err := t.AgentTest(id)
		if err != nil {
			return nil, err
		}
		if at == nil {
			return nil, fmt.Errorf("agent test %s is listed but not stored", id)
		}
		out = append(out, at)
	}
	return out, nil
}

// AgentTestPage implements service.AgentTestTx.
func (t tx) AgentTestPage(agentID string, req data.PageRequest) ([]*data.AgentTest, data.Page, error) {
	ids, page, err := t.db.page(t.b, bucketAgentTestsByAgt, agentID, req)
	if err != nil {
		return nil, page, err
	}
	list, err := t.agentTestsOf(ids)
	return list, page, err
}

// PutAgentTest implements service.AgentTestTx.
func (t tx) PutAgentTest(at *data.AgentTest) error {
	if err := indexPut(t.b.Bucket(bucketAgentTestsByAgt), at.AgentID, at.ID); err != nil {
		return err
	}
	return putJSON(t.b.Bucket(bucketAgentTests), []byte(at.ID), at)
}

// DeleteAgentTest implements service.AgentTestTx.
func (t tx) DeleteAgentTest(at *data.AgentTest) error {
	if err := indexDelete(t.b.Bucket(bucketAgentTestsByAgt), at.AgentID, at.ID); err != nil {
		return err
	}
	return t.b.Bucket(bucketAgentTests).Delete([]byte(at.ID))
}

// TestRun implements service.AgentTestTx.
func (t tx) TestRun(id string) (*data.StoredTestRun, error) { return getTestRun(t.b, id) }

func getTestRun(b *bbolt.Tx, id string) (*data.StoredTestRun, error) {
	var out data.StoredTestRun
	found, err := getJSON(b.Bucket(bucketTestRuns), []byte(id), &out)
	if err != nil || !found {
		return nil, err
	}
	return &out, nil
}

func (t tx) testRunsOf(ids []string) ([]*data.StoredTestRun, error) {
	out := make([]*data.StoredTestRun, 0, len(ids))
	for _, id := range ids {
		r, err := t.TestRun(id)
		if err != nil {
			return nil, err
		}
		if r == nil {
			return nil, fmt.Errorf("test run %s is listed but not stored", id)
		}
		out = append(out, r)
	}
	return out, nil
}

// TestRunPage implements service.AgentTestTx. A filter reads each run the walk meets:
// an agent keeps few (service.AgentTestTx.TestRunPage), so no index by status is kept.
func (t tx) TestRunPage(agentID string, sel service.StateSelection, req data.PageRequest) ([]*data.StoredTestRun, data.Page, error) {
	spec := listSpec{index: bucketTestRunsByAgent, scope: agentID}
	if sel.Filter != "" {
		spec.filter = "status=" + sel.Filter
		spec.keep = func(id string) bool {
			r, err := getTestRun(t.b, id)
			return err == nil && r != nil && slices.Contains(sel.States, r.Status)
		}
	}
	ids, page, err := t.db.list(t.b, spec, req)
	if err != nil {
		return nil, page, err
	}
	list, err := t.testRunsOf(ids)
	return list, page, err
}

// TestRunsAt implements service.AgentTestTx.
func (t tx) TestRunsAt(agentID, revision string) ([]*data.StoredTestRun, error) {
	ids := scopeIDs(t.b.Bucket(bucketTestRunsByDraft), revisionScope(agentID, revision))
	for i, j := 0, len(ids)-1; i < j; i, j = i+1, j-1 {
		ids[i], ids[j] = ids[j], ids[i]
	}
	return t.testRunsOf(ids)
}

// PutTestRun implements service.AgentTestTx.
func (t tx) PutTestRun(r *data.StoredTestRun) error {
	if err := indexPut(t.b.Bucket(bucketTestRunsByAgent), r.AgentID, r.ID); err != nil {
		return err
	}
	if r.Revision != nil {
		if err := indexPut(t.b.Bucket(bucketTestRunsByDraft), revisionScope(r.AgentID, *r.Revision), r.ID); err != nil {
			return err
		}
	}
	rec := *r
	rec.Results = nil // stored apart
	return putJSON(t.b.Bucket(bucketTestRuns), []byte(r.ID), &rec)
}

// PutTestResult implements service.AgentTestTx.
func (t tx) PutTestResult(runID string, r *data.TestCaseResult) error {
	return putJSON(t.b.Bucket(bucketTestRunResults), testResultKey(runID, r.TestID, r.Repeat), r)
}

// TestResults implements service.AgentTestTx.
func (t tx) TestResults(runID string) ([]*data.TestCaseResult, error) {
	prefix := append([]byte(runID), 0)
	var out []*data.TestCaseResult
	c := t.b.Bucket(bucketTestRunResults).Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		var r data.TestCaseResult
		if err := jsonUnmarshal(v, &r); err != nil {
			return nil, fmt.Errorf("decoding test result %q: %w", k, err)
		}
		out = append(out, &r)
	}
	return out, nil
}

// deleteAgentTests removes an agent's tests, runs and results, in its delete.
func deleteAgentTests(tx *bbolt.Tx, agentID string) error {
	byAgent := tx.Bucket(bucketAgentTestsByAgt)
	for _, id := range scopeIDs(byAgent, agentID) {
		if err := tx.Bucket(bucketAgentTests).Delete([]byte(id)); err != nil {
			return err
		}
	}
	if err := deletePrefix(byAgent, indexKey(agentID, "")); err != nil {
		return err
	}
	runsByAgent := tx.Bucket(bucketTestRunsByAgent)
	for _, id := range scopeIDs(runsByAgent, agentID) {
		if err := deletePrefix(tx.Bucket(bucketTestRunResults), append([]byte(id), 0)); err != nil {
			return err
		}
		if err := tx.Bucket(bucketTestRuns).Delete([]byte(id)); err != nil {
			return err
		}
	}
	if err := deletePrefix(runsByAgent, indexKey(agentID, "")); err != nil {
		return err
	}
	return deletePrefix(tx.Bucket(bucketTestRunsByDraft), append([]byte(agentID), 0))
}

// FinishedTestRunIDs implements service.AgentTestTx, from the agent's runs (each read for
// its status).
func (t tx) FinishedTestRunIDs(agentID string) ([]string, error) {
	ids := scopeIDs(t.b.Bucket(bucketTestRunsByAgent), agentID)
	var out []string
	for i := len(ids) - 1; i >= 0; i-- {
		r, err := t.TestRun(ids[i])
		if err != nil {
			return nil, err
		}
		if r != nil && data.TestRunFinished(r.Status) {
			out = append(out, r.ID)
		}
	}
	return out, nil
}

// DeleteTestRun implements service.AgentTestTx.
func (t tx) DeleteTestRun(id string) error {
	r, err := t.TestRun(id)
	if err != nil || r == nil {
		return err
	}
	if err := deletePrefix(t.b.Bucket(bucketTestRunResults), append([]byte(id), 0)); err != nil {
		return err
	}
	if err := indexDelete(t.b.Bucket(bucketTestRunsByAgent), r.AgentID, id); err != nil {
		return err
	}
	if r.Revision != nil {
		if err := indexDelete(t.b.Bucket(bucketTestRunsByDraft), revisionScope(r.AgentID, *r.Revision), id); err != nil {
			return err
		}
	}
	return t.b.Bucket(bucketTestRuns).Delete([]byte(id))
}
