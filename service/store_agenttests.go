package service

import "github.com/voiceapi/voiceapi/data"

// AgentTestTx stores agent tests and their runs (conventions §22): tests by agent, runs by
// agent and by the draft revision they ran on (the publish gate's read), and each run's
// results apart, one per test and repeat, so that a run records a result as it comes
// without rewriting the others. An agent's delete removes its tests, runs and results;
// so does its workspace's.
type AgentTestTx interface {
	// AgentTest returns the test with id in any workspace, nil when there is none.
	AgentTest(id string) (*data.AgentTest, error)
	// AgentTests returns every test of the agent, oldest first.
	AgentTests(agentID string) ([]*data.AgentTest, error)
	// AgentTestPage returns one newest-first page of the agent's tests.
	AgentTestPage(agentID string, req data.PageRequest) ([]*data.AgentTest, data.Page, error)
	// PutAgentTest stores a new test or replaces a stored one.
	PutAgentTest(t *data.AgentTest) error
	// DeleteAgentTest removes a test (the results of runs that ran it stay).
	DeleteAgentTest(t *data.AgentTest) error

	// TestRun returns the run with id in any workspace, without results, nil when none.
	TestRun(id string) (*data.StoredTestRun, error)
	// TestRunPage returns one newest-first page of the agent's runs, those sel selects
	// (an agent keeps few runs: validate.MaxKeptTestRuns finished, MaxPendingTestRuns
	// more).
	TestRunPage(agentID string, sel StateSelection, req data.PageRequest) ([]*data.StoredTestRun, data.Page, error)
	// TestRunsAt returns the agent's runs of the draft revision, newest first.
	TestRunsAt(agentID, revision string) ([]*data.StoredTestRun, error)
	// PutTestRun stores a new run or replaces a stored one (its revision and agent never
	// change).
	PutTestRun(r *data.StoredTestRun) error
	// FinishedTestRunIDs returns the ids of the agent's finished runs (passed, failed or
	// error), newest first.
	FinishedTestRunIDs(agentID string) ([]string, error)
	// DeleteTestRun removes a run, its results and its index entries; nothing when there
	// is no run id.
	DeleteTestRun(id string) error
	// PutTestResult stores the result of one repeat of a test in a run, replacing one
	// stored for the same test and repeat.
	PutTestResult(runID string, r *data.TestCaseResult) error
	// TestResults returns a run's results, by test id and then repeat.
	TestResults(runID string) ([]*data.TestCaseResult, error)
}
