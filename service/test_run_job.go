package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/voiceapi/voiceapi/agenttest"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/llm"
	"github.com/voiceapi/voiceapi/redact"
)

// JobKindTestRun is the job that runs one test run: every test and repeat it names, each
// result stored as it ends, so a run taken over after a crash goes on where it stopped.
const JobKindTestRun = "agent.test_run"

// testRunAttempts bounds a run's job: a provider failing transiently (429, 5xx, a
// timeout) is tried again after a backoff, and on the last attempt its cases are
// recorded as errors instead.
const testRunAttempts = 4

func (s *TestRunService) jobKind() JobKind {
	return JobKind{Name: JobKindTestRun, Module: data.ModuleAgents, Handle: s.runJob, MaxAttempts: testRunAttempts,
		Backoff: ExponentialBackoff(5*time.Second, 5*time.Minute), Failed: s.endRunOfFailedJob}
}

// endRunOfFailedJob ends, with its job failed for good, a run that job left unended: error,
// saying why (as reads showed it already: reconcileRun), with its test_run.completed, so
// whoever waits for that event hears of the run.
func (s *TestRunService) endRunOfFailedJob(ctx context.Context, tx Tx, job *data.JobRecord, out data.JobOutcome) error {
	var p testRunPayload
	if err := json.Unmarshal(job.Payload, &p); err != nil {
		return nil // the payload names no run (the handler failed on it the same way)
	}
	r, err := tx.TestRun(p.RunID)
	if err != nil || r == nil || data.TestRunFinished(r.Status) {
		return err
	}
	results, err := tx.TestResults(r.ID)
	if err != nil {
		return err
	}
	msg, at := runJobEnded(out.Status, out.Error), data.NewTime(out.At)
	r.Status, r.Error, r.FinishedAt = data.TestError, &msg, &at
	full := assembleRun(r, results)
	r.Summary = full.Summary
	return s.storeCompleted(tx, r, full.Results)
}

// storeCompleted stores r ended, records its test_run.completed and prunes the agent's
// finished runs past those kept.
func (s *TestRunService) storeCompleted(tx Tx, r *data.StoredTestRun, results []data.TestResult) error {
	if err := tx.PutTestRun(r); err != nil {
		return err
	}
	if _, err := s.recordAs(tx, systemActor, data.EventTestRunCompleted, r.WorkspaceID, completedEvent(r, results)); err != nil {
		return err
	}
	return s.pruneFinishedRuns(tx, r.AgentID)
}

// testCase is one repeat of one test.
type testCase struct {
	test   data.AgentTest
	repeat int
}

// runJob is the handler of JobKindTestRun. Run again after a crash, it finds the results
// stored so far and runs only the cases without one; a run already ended is left as it is.
func (s *TestRunService) runJob(ctx context.Context, run *JobRun) error {
	var p testRunPayload
	if err := json.Unmarshal(run.Job.Payload, &p); err != nil {
		return fmt.Errorf("the job's payload: %w", err)
	}
	r, done, err := s.beginRun(ctx, run, p.RunID)
	if err != nil || r == nil {
		return err
	}
	var pending []testCase
	for _, t := range r.Tests {
		for rep := 1; rep <= t.Repeat; rep++ {
			if !done[caseKey(t.ID, rep)] {
				pending = append(pending, testCase{t, rep})
			}
		}
	}
	runner, buildErr := s.runner(ctx, r)
	if buildErr != nil && storageFault(buildErr) {
		return buildErr // not the cases': the runner judges it (failureOf)
	}
	// A case's error is scrubbed as the job's own is (scrubJobError): every reader of the
	// run sees it.
	var secrets []string
	if err := s.store.View(ctx, func(tx Tx) (err error) { secrets, err = s.jobSecrets(tx, run.Job); return err }); err != nil {
		return err
	}
	scrubbedCaseError := func(tc testCase, err error, now data.Time) *data.TestCaseResult {
		res := caseError(tc, err, now)
		*res.Error = redact.Secrets(*res.Error, secrets...)
		return res
	}
	c := &caseRecorder{s: s, run: run, r: r, done: len(done)}
	failure := s.runCases(ctx, run, pending, func(ctx context.Context, tc testCase) error {
		if s.onCase != nil {
			s.onCase(r.ID, tc.test.ID, tc.repeat)
		}
		if buildErr != nil {
			return c.record(ctx, scrubbedCaseError(tc, buildErr, s.timeNow()))
		}
		res, err := runner.Run(ctx, tc.test, tc.repeat)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			switch {
			case storageFault(err):
				return err // the knowledge lookup's, say: the runner judges it (failureOf)
			case retryableProvider(err) && !run.LastAttempt():
				return Transient(err)
			}
			res = scrubbedCaseError(tc, err, s.timeNow())
		}
		return c.record(ctx, res)
	})
	if err := ctx.Err(); err != nil {
		return err
	}
	if errors.Is(failure, errTestRunGone) {
		return nil
	}
	if failure != nil {
		return failure
	}
	return s.finishRun(ctx, run, r.ID)
}

// caseKey names a case among a run's results.
func caseKey(testID string, repeat int) string { return fmt.Sprintf("%s/%d", testID, repeat) }

// retryableProvider reports whether a case's failure is a provider's that may pass when
// tried later: its 408, 429, 5xx or timeout. Its refusal (401, a bad model) will not.
func retryableProvider(err error) bool {
	var le *llm.Error
	return errors.As(err, &le) && le.Retryable
}

// storageFault reports whether a case's failure is neither a provider's nor the case's
// own (a data error): a fault of the storage it read (its knowledge lookup), which the
// job returns as it is, for the runner's one rule of every kind (failureOf): one that
// heals by itself runs the job again, a lasting one fails it at once, and the run with it.
func storageFault(err error) bool {
	var le *llm.Error
	var de *data.Error
	return !errors.As(err, &le) && !errors.As(err, &de)
}

// caseError is a case that could not be judged: status error with the failure's message
// (a provider's names it, its status and its message, never a credential).
func caseError(tc testCase, err error, now data.Time) *data.TestCaseResult {
	msg := data.ErrorMessage(err)
	var de *data.Error
	if !errors.As(err, &de) {
		msg = "The test could not be run: " + err.Error()
	}
	return &data.TestCaseResult{TestID: tc.test.ID, Repeat: tc.repeat, Status: data.TestError, Error: &msg,
		Criteria: []data.CriterionVerdict{}, Transcript: []data.ConversationItem{}, Variables: map[string]any{},
		StartedAt: now, FinishedAt: now}
}

// runCases runs the cases in parallel, each holding one of the process's case slots, and
// returns the first failure (nil when none): a transient one, or a storage fault, which
// the runner judges (failureOf). After one, no further case starts: the job runs again
// after its backoff and takes up the cases left, or fails.
func (s *TestRunService) runCases(ctx context.Context, run *JobRun, cases []testCase, do func(context.Context, testCase) error) error {
	slots := *s.limit.Load()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	stopped := func() bool {
		mu.Lock()
		defer mu.Unlock()
		return first != nil
	}
	for _, tc := range cases {
		acquired := false
		select {
		case slots <- struct{}{}:
			acquired = true
		case <-ctx.Done():
		}
		if ctx.Err() != nil || stopped() {
			if acquired {
				<-slots
			}
			break
		}
		wg.Go(func() {
			defer func() { <-slots }()
			if err := do(ctx, tc); err != nil {
				mu.Lock()
				if first == nil {
					first = err
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if errors.Is(first, ErrJobLeaseLost) {
		run.lose() // results can no longer be stored: stop, and leave the job to its holder
	}
	return first
}

// caseRecorder stores a run's results as they come, each with the job's progress in one
// transaction that holds the job's lease, and tells each on the event stream.
type caseRecorder struct {
	s    *TestRunService
	run  *JobRun
	r    *data.StoredTestRun
	mu   sync.Mutex
	done int
}

func (c *caseRecorder) record(ctx context.Context, res *data.TestCaseResult) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	done := c.done + 1
	err := c.s.store.Update(context.WithoutCancel(ctx), func(tx Tx) error {
		// The case ran outside any transaction, for seconds: an agent deleted meanwhile
		// took the run along, and no result may be stored under a run that is gone.
		if r, err := tx.TestRun(c.r.ID); err != nil || r == nil || data.TestRunFinished(r.Status) {
			return cmpErr(err, errTestRunGone)
		}
		held, err := tx.SetJobProgress(c.run.Job.ID, c.run.lease, data.JobProgress{Done: int64(done), Total: int64(c.r.Summary.Cases)}, "")
		if err != nil {
			return err
		}
		if !held {
			return ErrJobLeaseLost
		}
		if err := tx.PutTestResult(c.r.ID, res); err != nil {
			return err
		}
		ev := progressEvent{TestRun: c.r.TestRun, Result: progressResult{TestID: res.TestID, Repeat: res.Repeat, Status: res.Status}}
		ev.Summary.Done = done
		_, err = c.s.recordAs(tx, systemActor, data.EventTestRunProgress, c.r.WorkspaceID, ev)
		return err
	})
	// A storage fault that heals (TransientStorage, judged by the runner) runs the job
	// again, which redoes this case.
	if err == nil {
		c.done = done
	}
	return err
}

// errTestRunGone stops a run's cases once the run has ended or is gone (its agent was
// deleted): the job then ends with nothing left to do.
var errTestRunGone = errors.New("the test run has ended or is gone")

// systemActor is the actor of what a job records.
var systemActor = data.Actor{Type: "system"}

// progressEvent is test_run.progress's data: the run, and the case that just ended.
type progressEvent struct {
	data.TestRun
	Result progressResult `json:"result"`
}

type progressResult struct {
	TestID string `json:"test_id"`
	Repeat int    `json:"repeat"`
	Status string `json:"status"`
}

// beginRun marks the run running (test_run.started, once) while the job's lease holds,
// and returns it with its stored results by case; nil when the run has ended or is gone.
func (s *TestRunService) beginRun(ctx context.Context, run *JobRun, id string) (*data.StoredTestRun, map[string]bool, error) {
	var r *data.StoredTestRun
	done := map[string]bool{}
	err := s.store.Update(ctx, func(tx Tx) error {
		var err error
		if r, err = tx.TestRun(id); err != nil || r == nil || data.TestRunFinished(r.Status) {
			r = nil
			return err
		}
		results, err := tx.TestResults(id)
		if err != nil {
			return err
		}
		clear(done)
		for _, res := range results {
			done[caseKey(res.TestID, res.Repeat)] = true
		}
		if r.Status == data.TestRunning {
			return nil
		}
		held, err := tx.SetJobProgress(run.Job.ID, run.lease, data.JobProgress{Done: int64(len(results)), Total: int64(r.Summary.Cases)}, "")
		if err != nil || !held {
			return cmpErr(err, ErrJobLeaseLost)
		}
		now := s.timeNow()
		r.Status, r.StartedAt = data.TestRunning, &now
		if err := tx.PutTestRun(r); err != nil {
			return err
		}
		_, err = s.recordAs(tx, systemActor, data.EventTestRunStarted, r.WorkspaceID, r.TestRun)
		return err
	})
	if errors.Is(err, ErrJobLeaseLost) {
		run.lose()
	}
	return r, done, err
}

func cmpErr(err, otherwise error) error {
	if err != nil {
		return err
	}
	return otherwise
}

// finishRun ends the run from its stored results (passed, failed or error) and records
// test_run.completed, while the job's lease holds.
func (s *TestRunService) finishRun(ctx context.Context, run *JobRun, id string) error {
	err := s.store.Update(context.WithoutCancel(ctx), func(tx Tx) error {
		r, err := tx.TestRun(id)
		if err != nil || r == nil || data.TestRunFinished(r.Status) {
			return err
		}
		held, err := tx.SetJobProgress(run.Job.ID, run.lease, data.JobProgress{Done: int64(r.Summary.Cases), Total: int64(r.Summary.Cases)}, "")
		if err != nil || !held {
			return cmpErr(err, ErrJobLeaseLost)
		}
		results, err := tx.TestResults(id)
		if err != nil {
			return err
		}
		now := s.timeNow()
		// Ended: a test short of repeats (none should be) counts as an error.
		r.Status, r.FinishedAt = data.TestError, &now
		full := assembleRun(r, results)
		r.Summary = full.Summary
		r.Status = data.TestPassed
		switch {
		case r.Summary.Error > 0:
			r.Status = data.TestError
		case r.Summary.Failed > 0:
			r.Status = data.TestFailed
		}
		return s.storeCompleted(tx, r, full.Results)
	})
	if errors.Is(err, ErrJobLeaseLost) {
		run.lose()
		return err
	}
	return err
}

// completedEvent is test_run.completed's data: the run with each test's verdict, without
// the repeats (their transcripts are read with the run).
func completedEvent(r *data.StoredTestRun, results []data.TestResult) data.TestRun {
	out := r.TestRun
	out.Results = make([]data.TestResult, len(results))
	for i, tr := range results {
		tr.Repeats = []data.TestCaseResult{}
		out.Results[i] = tr
	}
	return out
}

// runner builds the runner of r's configuration: the agent's model, the simulation model
// (the workspace's setting, else the agent's own), the knowledge retriever.
func (s *TestRunService) runner(ctx context.Context, r *data.StoredTestRun) (*agenttest.Runner, error) {
	models := s.conv.options().Models
	if models == nil {
		return nil, data.Errorf(data.EUNAVAILABLE, "This server has no language model client configured: tests cannot run.")
	}
	cfg := r.Config
	var err error
	if cfg, err = s.agents.open(cfg); err != nil {
		return nil, err
	}
	agentModel, err := models(cfg.LLMConfig)
	if err != nil {
		return nil, err
	}
	sim, err := s.simulation(ctx, r.WorkspaceID, cfg.LLMConfig)
	if err != nil {
		return nil, err
	}
	simModel, err := models(sim.LLMConfig())
	if err != nil {
		return nil, err
	}
	settings := agenttest.Settings{Temperature: sim.Temperature}
	if sim.MaxTokens != nil {
		settings.MaxTokens = *sim.MaxTokens
	}
	runner := &agenttest.Runner{Config: cfg, Agent: agentModel, Simulator: simModel, SimulatorSettings: settings,
		RunID: r.ID, Now: s.now}
	if len(cfg.LLMConfig.KnowledgeBaseIDs) > 0 {
		runner.Retriever = &agentRetriever{kbs: s.kbs, workspaceID: r.WorkspaceID, cfg: &cfg}
	}
	return runner, nil
}
