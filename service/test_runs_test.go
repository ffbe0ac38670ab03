package service_test

import (
	"context"
	"fmt"
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
