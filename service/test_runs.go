package service

import (
	"context"
	"encoding/json"
	"slices"
	"sync/atomic"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/validate"
)

// TestRunOptions configure how this process runs agent tests.
type TestRunOptions struct {
	// Concurrency bounds the test cases (a test's repeats) this process runs at once,
	// across every run it holds: each is a conversation with a model provider.
	// DefaultTestConcurrency when 0.
	Concurrency int
}

// DefaultTestConcurrency is TestRunOptions.Concurrency's default.
const DefaultTestConcurrency = 8

// TestRunService implements data.TestRunService: runs of agent tests as durable jobs
// (conventions §22, §26), and the publish gate's view of them.
type TestRunService struct {
	*base
	agents *AgentService
	conv   *ConversationService
	kbs    *KnowledgeBaseService
	limit  atomic.Pointer[chan struct{}] // the process's case slots
	// onCase, when set (tests), runs before each case, on its worker.
	onCase func(runID, testID string, repeat int)
}

var _ data.TestRunService = (*TestRunService)(nil)

func newTestRuns(b *base, conv *ConversationService, kbs *KnowledgeBaseService) *TestRunService {
	s := &TestRunService{base: b, agents: &AgentService{base: b}, conv: conv, kbs: kbs}
	s.Configure(TestRunOptions{})
	return s
}

// Configure replaces the options: serve sets them from its flags.
func (s *TestRunService) Configure(o TestRunOptions) {
	n := o.Concurrency
	if n <= 0 {
		n = DefaultTestConcurrency
	}
	slots := make(chan struct{}, n)
	s.limit.Store(&slots)
}

// OnCase sets a function that runs before each test case (tests make one slow or count
// them); nil removes it.
func (s *TestRunService) OnCase(f func(runID, testID string, repeat int)) { s.onCase = f }

// testRunPayload names the run a job carries out.
type testRunPayload struct {
	RunID string `json:"run_id"`
}

// StartTestRun implements data.TestRunService: the run, a copy of what it runs and its
// job are written in one transaction.
func (s *TestRunService) StartTestRun(ctx context.Context, agentID string, in data.TestRunCreate) (*data.TestRun, error) {
	p, err := workspaceCaller(ctx)
	if err != nil {
		return nil, err
	}
	refs := func(tx Tx) error {
		row, err := tx.Agent(agentID)
		if err != nil {
			return err
		}
		if err := visible(ctx, agentID, row); err != nil {
			return err
		}
		_, _, err = runTargets(tx, agentID, in)
		return err
	}
	if err := s.checkInputAndRefs(ctx, validate.TestRunCreate(in), refs); err != nil {
		return nil, err
	}
	var out *data.TestRun
	err = s.store.Update(ctx, func(tx Tx) error {
		stored, plain, err := s.agents.load(ctx, tx, agentID)
		if err != nil {
			return err
		}
		data.NoteClaimAgent(ctx, agentID) // a replay checks the agent again
		// Every run pays the models for each case; runs posted faster than they finish
		// would queue the agent's budget away.
		pending, err := pendingJobs(tx, plain.WorkspaceID, JobKindTestRun, agentID, validate.MaxPendingTestRuns)
		if err != nil {
			return err
		}
		if len(pending) >= validate.MaxPendingTestRuns {
			return data.Errorf(data.ECONFLICT, "The agent has %d test runs queued or running, the most it may have: wait for one to finish.", len(pending))
		}
		r := &data.StoredTestRun{TestRun: data.TestRun{ID: s.ids.New(data.PrefixTestRun), WorkspaceID: plain.WorkspaceID,
			AgentID: agentID, Status: data.TestQueued, CreatedBy: p.UserID, CreatedAt: s.timeNow()}}
		v, tests, err := runTargets(tx, agentID, in)
		if err != nil {
			return err
		}
		if v != nil {
			r.AgentVersion, r.Config = &v.VersionNumber, v.AgentConfig
		} else {
			revision, err := s.draftRevision(plain.AgentConfig)
			if err != nil {
				return err
			}
			r.Revision, r.Config = &revision, stored.AgentConfig
		}
		r.Tests = tests
		r.TestIDs = make([]string, len(r.Tests))
		r.Summary = data.TestRunSummary{Tests: len(r.Tests)}
		for i, t := range r.Tests {
			r.TestIDs[i] = t.ID
			r.Summary.Cases += t.Repeat
		}
		payload, _ := json.Marshal(testRunPayload{RunID: r.ID})
		job, err := s.enqueueJob(tx, data.JobEnqueue{WorkspaceID: r.WorkspaceID, AgentID: agentID, Kind: JobKindTestRun,
			Payload: payload, UniqueKey: r.ID})
		if err != nil {
			return err
		}
		r.JobID = job.ID
		if err := tx.PutTestRun(r); err != nil {
			return err
		}
		pub := r.TestRun
		out = &pub
		_, err = s.record(ctx, tx, data.EventTestRunQueued, r.WorkspaceID, out)
		return err
	})
	return out, err
}

// runTargets reads what a run of in runs: the version it names (nil for the draft) and
// the tests. An unknown version and unknown test ids are reported together (one 422); an
// unknown version comes before an agent with no tests at all (409), a fault of the
// request before one of the agent's state.
func runTargets(tx Tx, agentID string, in data.TestRunCreate) (*data.AgentVersion, []data.AgentTest, error) {
	var v *data.AgentVersion
	var versionErr error
	if in.Version.Number > 0 {
		v, versionErr = versionRef(tx, agentID, "version", in.Version.Number)
		if versionErr != nil && (data.ErrorCode(versionErr) != data.EINVALID || !in.TestIDs.Set) {
			return nil, nil, versionErr
		}
	}
	tests, err := testsToRun(tx, agentID, in.TestIDs)
	if err := validate.Combine(versionErr, err); err != nil {
		return nil, nil, err
	}
	return v, tests, nil
}

// testsToRun returns the agent's tests that ids name, in their order (every test of the
// agent, oldest first, when ids is not set).
func testsToRun(tx Tx, agentID string, ids data.Opt[[]string]) ([]data.AgentTest, error) {
	all, err := tx.AgentTests(agentID)
	if err != nil {
		return nil, err
	}
	if !ids.Set {
		if len(all) == 0 {
			return nil, data.Errorf(data.ECONFLICT, "The agent has no tests to run: add one first.")
		}
		out := make([]data.AgentTest, len(all))
		for i, t := range all {
			out[i] = *t
		}
		return out, nil
	}
	var errs validate.Errors
	out := make([]data.AgentTest, 0, len(ids.V))
	for i, id := range ids.V {
		j := slices.IndexFunc(all, func(t *data.AgentTest) bool { return t.ID == id })
		if j < 0 {
			p := validate.Index("test_ids", i)
			errs.Addf(p, "The selected %s is invalid: the agent has no test %s.", p, id)
			continue
		}
		out = append(out, *all[j])
	}
	return out, errs.Err()
}

// loadRun reads a run of a visible agent.
func (s *TestRunService) loadRun(ctx context.Context, tx Tx, agentID, id string) (*data.StoredTestRun, error) {
	if _, _, err := s.agents.load(ctx, tx, agentID); err != nil {
		return nil, err
	}
	r, err := tx.TestRun(id)
	if err != nil {
		return nil, err
	}
	if r == nil || r.AgentID != agentID {
		return nil, data.NotFound("Test run")
	}
	return r, nil
}

// ListTestRuns implements data.TestRunService. A filter is on the status the list shows,
// after reconcileRun: a run its job ended without ending reads error, so a filter on
// error reads the runs stored queued or running too, and one on queued or running drops
// those; such a page can come back short (even empty) with a next_cursor.
func (s *TestRunService) ListTestRuns(ctx context.Context, agentID string, f data.TestRunFilter, req data.PageRequest) ([]*data.TestRun, data.Page, error) {
	if err := checkInput(ctx, validate.TestRunFilter(f)); err != nil {
		return nil, data.Page{}, err
	}
	sel := StateSelection{Filter: f.Status, States: []string{f.Status}}
	if f.Status == data.TestError {
		sel.States = append(sel.States, data.TestQueued, data.TestRunning)
	}
	var list []*data.TestRun
	var page data.Page
	err := s.store.View(ctx, func(tx Tx) error {
		if _, _, err := s.agents.load(ctx, tx, agentID); err != nil {
			return err
		}
		runs, pg, err := tx.TestRunPage(agentID, sel, req)
		if err != nil {
			return err
		}
		page = pg
		list = make([]*data.TestRun, 0, len(runs))
		for _, r := range runs {
			if err := reconcileRun(tx, r); err != nil {
				return err
			}
			if f.Status != "" && r.Status != f.Status {
				continue
			}
			pub := r.TestRun
			list = append(list, &pub)
		}
		return nil
	})
	return list, page, err
}

// TestRun implements data.TestRunService.
func (s *TestRunService) TestRun(ctx context.Context, agentID, id string) (*data.TestRun, error) {
	var out *data.TestRun
	err := s.store.View(ctx, func(tx Tx) error {
		r, err := s.loadRun(ctx, tx, agentID, id)
		if err != nil {
			return err
		}
		if err := reconcileRun(tx, r); err != nil {
			return err
		}
		results, err := tx.TestResults(id)
		if err != nil {
			return err
		}
		out = assembleRun(r, results)
		return nil
	})
	return out, err
}

// reconcileRun shows a run that has not ended as its job stands: how many cases it has
// done, and an error when the job ended without ending the run (it gave up, or was
// canceled).
func reconcileRun(tx Tx, r *data.StoredTestRun) error {
	if data.TestRunFinished(r.Status) {
		return nil
	}
	j, err := tx.Job(r.JobID)
	if err != nil {
		return err
	}
	if j == nil {
		msg := "The run's job is gone: the run never ended."
		r.Status, r.Error = data.TestError, &msg
		return nil
	}
	r.Summary.Done = int(j.Progress.Done)
	if j.Status == data.JobFailed || j.Status == data.JobCanceled {
		lastError := ""
		if j.LastError != nil {
			lastError = *j.LastError
		}
		msg := runJobEnded(j.Status, lastError)
		r.Status, r.Error, r.FinishedAt = data.TestError, &msg, j.FinishedAt
	}
	return nil
}

// runJobEnded is the error of a run whose job ended (status) without ending it.
func runJobEnded(status, lastError string) string {
	msg := "The run's job " + status
	if lastError != "" {
		msg += ": " + lastError
	}
	return msg
}

// assembleRun is a run with its results: one per test, in the run's order, each with its
// repeats, its status and pass rate, and the run's summary counted from them.
func assembleRun(r *data.StoredTestRun, results []*data.TestCaseResult) *data.TestRun {
	out := r.TestRun
	byTest := map[string][]data.TestCaseResult{}
	for _, res := range results {
		byTest[res.TestID] = append(byTest[res.TestID], *res)
	}
	out.Results = make([]data.TestResult, 0, len(r.Tests))
	out.Summary = data.TestRunSummary{Tests: len(r.Tests), Cases: r.Summary.Cases, Done: len(results)}
	for _, t := range r.Tests {
		tr := testResult(t, byTest[t.ID], r.Status)
		switch tr.Status {
		case data.TestPassed:
			out.Summary.Passed++
		case data.TestFailed:
			out.Summary.Failed++
		case data.TestError:
			out.Summary.Error++
		}
		out.Results = append(out.Results, tr)
	}
	return &out
}

// testResult is one test's result from its repeats: queued or running until each has
// ended (error when the run ended without them), then error if one could not be judged,
// failed if one failed, else passed.
func testResult(t data.AgentTest, repeats []data.TestCaseResult, runStatus string) data.TestResult {
	slices.SortFunc(repeats, func(a, b data.TestCaseResult) int { return a.Repeat - b.Repeat })
	tr := data.TestResult{TestID: t.ID, Name: t.Name, TestRevision: data.ETagOf(t), Required: t.RequiredForPublish,
		Repeats: repeats, Status: data.TestPassed}
	if tr.Repeats == nil {
		tr.Repeats = []data.TestCaseResult{}
	}
	passed := 0
	for _, rep := range repeats {
		switch rep.Status {
		case data.TestPassed:
			passed++
		case data.TestFailed:
			if tr.Status == data.TestPassed {
				tr.Status = data.TestFailed
			}
		case data.TestError:
			tr.Status = data.TestError
		}
	}
	if len(repeats) > 0 {
		tr.PassRate = float64(passed) / float64(len(repeats))
	}
	if len(repeats) < t.Repeat {
		switch {
		case data.TestRunFinished(runStatus):
			tr.Status = data.TestError
		case runStatus == data.TestRunning:
			tr.Status = data.TestRunning
		default:
			tr.Status = data.TestQueued
		}
	}
	return tr
}
