package service_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/cli"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/llmtest"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/service"
)

// heldAtLimit is a model stand-in that holds every answer until limit requests have been
// under way at once (or a wait long enough to show they never will be), then a little
// longer, so that a runner past its bound would have sent more meanwhile; it records the
// most requests there ever were at once.
type heldAtLimit struct {
	limit   int
	mu      sync.Mutex
	now     int
	peak    int
	once    sync.Once
	reached chan struct{}
}

func (m *heldAtLimit) respond(llmtest.Request) llmtest.Reply {
	m.mu.Lock()
	m.now++
	if m.now > m.peak {
		m.peak = m.now
	}
	if m.now >= m.limit {
		m.once.Do(func() { close(m.reached) })
	}
	m.mu.Unlock()
	select {
	case <-m.reached:
		time.Sleep(50 * time.Millisecond) // room for a case past the bound to start
	case <-time.After(10 * time.Second):
	}
	m.mu.Lock()
	m.now--
	m.mu.Unlock()
	return llmtest.Text("Welcome to the test kitchen.")
}

// TestTestRunCasesBoundedByTheLimit: a run's cases go to the model in parallel, as many at
// once as the process's case limit (--test-concurrency) and never more. The model holds
// its answers until the limit is reached and a little after, so a runner that ran cases
// one at a time would never reach it, and one past its bound would show more at once.
func TestTestRunCasesBoundedByTheLimit(t *testing.T) {
	const limit = 3
	model := &heldAtLimit{limit: limit, reached: make(chan struct{})}
	stand := llmtest.New(t, data.LLMInternal)
	stand.Respond(model.respond)
	env := testkit.New(t, nil)
	svc := env.Svc
	svc.Conversations.Configure(cli.ConversationOptions(cli.LLMSettings{AllowURLPrefixes: []string{stand.URL + "/"}}))
	svc.TestRuns.Configure(service.TestRunOptions{Concurrency: limit})
	ctx := owner(t, env, "limit@example.com")
	first := "user"
	agent, err := svc.Agents.CreateAgent(ctx, data.AgentCreate{Name: data.Some("Kitchen"), LLMConfig: data.Some(llmPatch(stand.LLMConfig())),
		PromptConfig: data.Some(data.PromptConfigPatch{FirstSpeaker: data.Some(first)})})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		if _, err := svc.AgentTests.CreateAgentTest(ctx, agent.ID, data.AgentTestCreate{Name: fmt.Sprint("test ", i),
			User: data.TestUser{Script: []string{"hello"}}, Repeat: data.Some(2),
			Criteria: []data.Criterion{{Type: data.CriterionSays, Pattern: "Welcome"}}}); err != nil {
			t.Fatal(err)
		}
	}
	run, err := svc.TestRuns.StartTestRun(ctx, agent.ID, data.TestRunCreate{})
	if err != nil {
		t.Fatal(err)
	}
	runner := svc.Jobs.NewRunner(service.RunnerOptions{Workers: 1, Kinds: []string{service.JobKindTestRun}})
	if n, err := runner.RunDue(context.Background()); err != nil || n != 1 {
		t.Fatalf("ran %d jobs: %v", n, err)
	}
	got, err := svc.TestRuns.TestRun(ctx, agent.ID, run.ID)
	if err != nil || got.Status != data.TestPassed || got.Summary.Done != 8 {
		t.Fatalf("run: %v %+v", err, got)
	}
	model.mu.Lock()
	defer model.mu.Unlock()
	if model.peak != limit {
		t.Errorf("the model was asked for %d answers at once, want the limit, %d", model.peak, limit)
	}
}

// TestTestRunEndsWhenItsJobFailsForGood: a run whose job's last attempt never ended (its
// worker died) is failed when claimed again; the run ends with it, error, saying why, with
// one test_run.completed, and a later pass records no other. Without it the run's readers
// saw an error while those waiting for its event heard nothing, ever.
func TestTestRunEndsWhenItsJobFailsForGood(t *testing.T) {
	stand := llmtest.New(t, data.LLMInternal)
	env := testkit.New(t, nil)
	svc := env.Svc
	svc.Conversations.Configure(cli.ConversationOptions(cli.LLMSettings{AllowURLPrefixes: []string{stand.URL + "/"}}))
	ctx := owner(t, env, "gaveup@example.com")
	agent, run := greetsRun(t, svc, ctx, data.AgentCreate{Name: data.Some("Kitchen"), LLMConfig: data.Some(llmPatch(stand.LLMConfig()))})
	// Workers that die: each claim commits, then nothing more is heard of it, until no
	// attempt is left.
	now := time.Now()
	for range 4 {
		if err := env.Store.Update(context.Background(), func(tx service.Tx) error {
			_, _, err := tx.ClaimJobs(data.JobClaim{Kinds: []string{service.JobKindTestRun}, Owner: "dead", Now: now, LeaseUntil: now.Add(time.Minute), Limit: 1})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		now = now.Add(time.Minute)
	}
	runner := svc.Jobs.NewRunner(service.RunnerOptions{Workers: 1, Kinds: []string{service.JobKindTestRun}, Now: func() time.Time { return now }})
	for pass := range 2 {
		if n, err := runner.RunDue(context.Background()); err != nil || n != 1-pass {
			t.Fatalf("pass %d ran %d jobs: %v", pass, n, err)
		}
	}
	got, err := svc.TestRuns.TestRun(ctx, agent.ID, run.ID)
	if err != nil || got.Status != data.TestError || got.Error == nil || !strings.Contains(*got.Error, "did not end") {
		t.Fatalf("run: %v %+v; want error, saying its job's attempt did not end", err, got)
	}
	var completed []data.TestRun
	if err := env.Store.View(context.Background(), func(tx service.Tx) error {
		return tx.EventsNewestFirst(agent.WorkspaceID, func(ev *data.Event) (bool, error) {
			if ev.Type == data.EventTestRunCompleted {
				var r data.TestRun
				if err := json.Unmarshal(ev.Data, &r); err != nil {
					return false, err
				}
				completed = append(completed, r)
			}
			return true, nil
		})
	}); err != nil {
		t.Fatal(err)
	}
	if len(completed) != 1 || completed[0].ID != run.ID || completed[0].Status != data.TestError || completed[0].Error == nil ||
		*completed[0].Error != *got.Error || completed[0].Summary.Error != 1 {
		t.Fatalf("test_run.completed events %+v; want one, the run ended error as it reads", completed)
	}
}

// greetsRun creates the agent, its one test "greets" (says "hello", expects "Welcome") and
// starts a run of it.
func greetsRun(t *testing.T, svc *service.Services, ctx context.Context, in data.AgentCreate) (*data.Agent, *data.TestRun) {
	t.Helper()
	agent, err := svc.Agents.CreateAgent(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.AgentTests.CreateAgentTest(ctx, agent.ID, data.AgentTestCreate{Name: "greets",
		User: data.TestUser{Script: []string{"hello"}}, Criteria: []data.Criterion{{Type: data.CriterionSays, Pattern: "Welcome"}}}); err != nil {
		t.Fatal(err)
	}
	run, err := svc.TestRuns.StartTestRun(ctx, agent.ID, data.TestRunCreate{})
	if err != nil {
		t.Fatal(err)
	}
	return agent, run
}

// TestTestRunListFilterReadsTheReconciledStatus: the run list's status filter is on
// the status the list shows. A run stored queued whose job was canceled (so it will never
// end) reads error: listed under error, not under queued; a run still queued stays
// under queued.
func TestTestRunListFilterReadsTheReconciledStatus(t *testing.T) {
	env := testkit.New(t, nil)
	svc := env.Svc
	ctx := owner(t, env, "filter@example.com")
	agent, dead := greetsRun(t, svc, ctx, data.AgentCreate{Name: data.Some("Kitchen")})
	alive, err := svc.TestRuns.StartTestRun(ctx, agent.ID, data.TestRunCreate{})
	if err != nil {
		t.Fatal(err)
	}
	if err := env.Store.Update(context.Background(), func(tx service.Tx) error {
		_, err := tx.CancelJob(dead.JobID, time.Now())
		return err
	}); err != nil {
		t.Fatal(err)
	}
	ids := func(status string) []string {
		t.Helper()
		runs, _, err := svc.TestRuns.ListTestRuns(ctx, agent.ID, data.TestRunFilter{Status: status}, data.PageRequest{})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range runs {
			if status != "" && r.Status != status {
				t.Errorf("status=%s listed a run reading %s", status, r.Status)
			}
			out = append(out, r.ID)
		}
		return out
	}
	if got := ids(data.TestError); len(got) != 1 || got[0] != dead.ID {
		t.Errorf("error: %v, want the run whose job was canceled, %s", got, dead.ID)
	}
	if got := ids(data.TestQueued); len(got) != 1 || got[0] != alive.ID {
		t.Errorf("queued: %v, want the run still queued, %s", got, alive.ID)
	}
	if got := ids(""); len(got) != 2 {
		t.Errorf("every run: %v, want both", got)
	}
	if _, _, err := svc.TestRuns.ListTestRuns(ctx, agent.ID, data.TestRunFilter{Status: "failing"}, data.PageRequest{}); data.ErrorCode(err) != data.EINVALID {
		t.Errorf("an unknown status from a caller other than the query string: %v, want validation_failed", err)
	}
}
