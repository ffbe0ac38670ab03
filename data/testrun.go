package data

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
)

// PrefixTestRun starts the id of a test run (conventions §3, §22).
const PrefixTestRun = "trun_"

// Statuses of a test run, and of each test and repeat in it. A run is queued, then
// running, then passed (every test passed), failed (a test failed) or error (a test could
// not be judged: a provider failed, a variable was missing). A repeat is passed, failed or
// error; a test passes when every one of its repeats does.
const (
	TestQueued  = "queued"
	TestRunning = "running"
	TestPassed  = "passed"
	TestFailed  = "failed"
	TestError   = "error"
)

// TestRunStatuses lists every status of a run, in the order of its life.
var TestRunStatuses = []string{TestQueued, TestRunning, TestPassed, TestFailed, TestError}

// TestRunFinished reports whether a run's status is final.
func TestRunFinished(status string) bool {
	return status == TestPassed || status == TestFailed || status == TestError
}

// TestRunFilter is the filter of an agent's run list (GET
// /api/v1/agents/{agent_id}/test-runs?status=).
type TestRunFilter struct {
	// Status is one of TestRunStatuses, as the list shows it; "" lists every run.
	Status string
}

// Error codes of the publish gate (conventions §22): 409 both.
const (
	// ETESTSREQUIRED is a publish of an agent with required tests that no run of its
	// current draft has passed.
	ETESTSREQUIRED = "tests_required"
	// ETESTSFAILED is a publish whose draft's last run of some required test did not pass.
	ETESTSFAILED = "tests_failed"
)

// TestRun is a run of an agent's tests on one revision of it (conventions §22): the draft
// as it was when the run was asked for, or a published version.
type TestRun struct {
	ID          string `json:"id"`
	WorkspaceID string `json:"workspace_id"`
	AgentID     string `json:"agent_id"`
	// AgentVersion is the version run; nil for the draft.
	AgentVersion *int `json:"agent_version"`
	// Revision is the draft's revision the run ran on: a keyed hash of what of its
	// configuration a test can observe (TestedContent), "c1-" and 24 hex digits; runs
	// stored before revisions existed hold the agent's ETag then. nil for a version. The
	// publish gate counts only runs of the draft's current revision.
	Revision *string `json:"revision"`
	Status   string  `json:"status"`
	// TestIDs are the tests run, in the order run.
	TestIDs []string       `json:"test_ids"`
	Summary TestRunSummary `json:"summary"`
	// JobID is the background job running it (GET /api/v1/jobs/{job_id}).
	JobID string `json:"job_id"`
	// Error says why a run ended in error as a whole (its job gave up); nil otherwise.
	Error *string `json:"error"`
	// Results are the tests' results, in the order of TestIDs: only on a single run.
	Results    []TestResult `json:"results,omitempty"`
	CreatedBy  string       `json:"created_by"`
	CreatedAt  Time         `json:"created_at"`
	StartedAt  *Time        `json:"started_at"`
	FinishedAt *Time        `json:"finished_at"`
}

// TestRunSummary counts a run's tests by outcome and its cases (a test's repeats) done.
type TestRunSummary struct {
	Tests  int `json:"tests"`
	Passed int `json:"passed"`
	Failed int `json:"failed"`
	Error  int `json:"error"`
	Cases  int `json:"cases"`
	Done   int `json:"done"`
}

// TestResult is one test's result in a run: its verdict over its repeats.
type TestResult struct {
	TestID string `json:"test_id"`
	Name   string `json:"name"`
	// TestRevision is the test's ETag as run: the publish gate counts a result only while
	// the test is unchanged.
	TestRevision string `json:"test_revision"`
	Required     bool   `json:"required"`
	// Status is queued or running until every repeat has ended, then passed, failed or
	// error.
	Status string `json:"status"`
	// PassRate is the share of its repeats that passed, 0 to 1, of those ended.
	PassRate float64          `json:"pass_rate"`
	Repeats  []TestCaseResult `json:"repeats"`
}

// TestCaseResult is one repeat of a test: the conversation it had, each criterion's
// verdict, the usage and the latencies.
type TestCaseResult struct {
	TestID string `json:"test_id"`
	Repeat int    `json:"repeat"`
	Status string `json:"status"`
	// Error says why the repeat could not be judged (a provider's failure, a missing
	// variable); nil when it was.
	Error    *string            `json:"error"`
	Criteria []CriterionVerdict `json:"criteria"`
	// Transcript is the conversation's items: the caller's turns, the agent's replies,
	// the tools' results.
	Transcript []ConversationItem `json:"transcript"`
	// Variables are the conversation's at its end: the test's and those tools set.
	Variables map[string]any `json:"variables"`
	// EndReason is why the conversation ended (TestEndReasons).
	EndReason string `json:"end_reason"`
	// Usage counts the agent's tokens; SimulationUsage the simulated caller's and judge's.
	Usage           TokenUsage  `json:"usage"`
	SimulationUsage TokenUsage  `json:"simulation_usage"`
	Latency         TestLatency `json:"latency_ms"`
	StartedAt       Time        `json:"started_at"`
	FinishedAt      Time        `json:"finished_at"`
}

// CriterionVerdict is one criterion's verdict with what shows it: the transcript item
// that matched (or broke) it, and for a judge its reason.
type CriterionVerdict struct {
	Criterion Criterion `json:"criterion"`
	Passed    bool      `json:"passed"`
	// Evidence is the item the verdict rests on; nil when none does (a tool never called).
	Evidence *TestEvidence `json:"evidence"`
	// Reason says why, in words.
	Reason string `json:"reason"`
}

// TestEvidence points at a transcript item: its index and its content.
type TestEvidence struct {
	Item    int    `json:"item"`
	Content string `json:"content"`
}

// TestLatency sums up the agent's reply latencies in a repeat, in milliseconds.
type TestLatency struct {
	FirstTokenP50 int64 `json:"first_token_p50"`
	FirstTokenMax int64 `json:"first_token_max"`
	TotalP50      int64 `json:"total_p50"`
	TotalMax      int64 `json:"total_max"`
}

// StoredTestRun is a run as storage keeps it: the record, and what it runs, copied when it
// was asked for so the run is of that revision whatever changes meanwhile: the
// configuration (api_key sealed) and the tests.
type StoredTestRun struct {
	TestRun
	Config AgentConfig `json:"config"`
	Tests  []AgentTest `json:"tests"`
}

// TestRunVersion is "draft" or a version number; the zero value is the draft.
type TestRunVersion struct {
	Number int // 0 for the draft
}

// UnmarshalJSON reads "draft" or a version number of at least 1.
func (v *TestRunVersion) UnmarshalJSON(b []byte) error {
	if string(b) == `"draft"` {
		*v = TestRunVersion{}
		return nil
	}
	var n int
	if err := json.Unmarshal(b, &n); err != nil || n < 1 {
		return errors.New(`it must be "draft" or a version number of at least 1`)
	}
	*v = TestRunVersion{Number: n}
	return nil
}

// MarshalJSON writes "draft" or the number.
func (v TestRunVersion) MarshalJSON() ([]byte, error) {
	if v.Number > 0 {
		return []byte(strconv.Itoa(v.Number)), nil
	}
	return []byte(`"draft"`), nil
}

// TestRunCreate is the body of POST /api/v1/agents/{agent_id}/test-runs: the revision to
// run (the draft by default) and the tests (every test of the agent when absent).
type TestRunCreate struct {
	Version TestRunVersion `json:"version"`
	TestIDs Opt[[]string]  `json:"test_ids"`
}

// Publish gate states (PublishGate.State).
const (
	// GateOpen: the agent has no required test, or a run of its current draft passed
	// every one.
	GateOpen = "open"
	// GateTestsRequired and GateTestsFailed are the 409 codes a publish would get.
	GateTestsRequired = ETESTSREQUIRED
	GateTestsFailed   = ETESTSFAILED
)

// PublishGate is what a publish of the agent's draft would meet now (conventions §22).
type PublishGate struct {
	AgentID string `json:"agent_id"`
	// Revision is the draft's current revision (TestRun.Revision): the one a run must
	// have passed.
	Revision string `json:"revision"`
	State    string `json:"state"`
	// Required are the agent's required tests, each with its latest result on this
	// revision.
	Required []GateTest `json:"required"`
}

// GateTest is a required test as the gate sees it: the status of its latest result on the
// draft's revision (not_run when none), and the run that gave it.
type GateTest struct {
	TestID string  `json:"test_id"`
	Name   string  `json:"name"`
	Status string  `json:"status"`
	RunID  *string `json:"run_id"`
}

// GateNotRun is a required test's gate status when no finished run of the revision has
// run it as it is now.
const GateNotRun = "not_run"

// TestRunService runs agent tests in the caller's workspace. An agent the caller may not
// see is not_found, and so are its runs.
type TestRunService interface {
	// StartTestRun queues a run of the agent's tests (or of in.TestIDs) on its draft or a
	// version, as a background job, and returns it queued. Errors: not_found (agent),
	// forbidden (the right to write agents), validation_failed (a version the agent lacks,
	// test_ids naming no test of the agent), conflict (an agent without tests).
	StartTestRun(ctx context.Context, agentID string, in TestRunCreate) (*TestRun, error)
	// ListTestRuns returns a page of the agent's runs, newest first, without results,
	// those in f.Status only when given. Errors: not_found, validation_failed (status,
	// per_page, cursor).
	ListTestRuns(ctx context.Context, agentID string, f TestRunFilter, p PageRequest) ([]*TestRun, Page, error)
	// TestRun returns one run with its results. Errors: not_found.
	TestRun(ctx context.Context, agentID, id string) (*TestRun, error)
	// PublishGate says whether the agent's draft may be published now. Errors: not_found.
	PublishGate(ctx context.Context, agentID string) (*PublishGate, error)
}
