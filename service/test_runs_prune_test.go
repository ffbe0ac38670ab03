package service_test

import (
	"context"
	"slices"
	"testing"

	"github.com/voiceapi/voiceapi/cli"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/llmtest"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/service"
	"github.com/voiceapi/voiceapi/validate"
)

// keptRunsWorld is an agent answering "Welcome" with a required test "greets" and
// another test "other", on the test backend.
type keptRunsWorld struct {
	svc           *service.Services
	stand         *llmtest.Server
	ctx           context.Context
	agent         *data.Agent
	greets, other string
}

func newKeptRunsWorld(t *testing.T) *keptRunsWorld {
	t.Helper()
	stand := llmtest.New(t, data.LLMInternal)
	stand.Respond(func(llmtest.Request) llmtest.Reply { return llmtest.Text("Welcome to the test kitchen.") })
	env := testkit.New(t, nil)
	svc := env.Svc
	svc.Conversations.Configure(cli.ConversationOptions(cli.LLMSettings{AllowURLPrefixes: []string{stand.URL + "/"}}))
	ctx := owner(t, env, "kept@example.com")
	agent, err := svc.Agents.CreateAgent(ctx, data.AgentCreate{Name: data.Some("Kitchen"), LLMConfig: data.Some(llmPatch(stand.LLMConfig())),
		PromptConfig: data.Some(data.PromptConfigPatch{FirstSpeaker: data.Some("user")})})
	if err != nil {
		t.Fatal(err)
	}
	w := &keptRunsWorld{svc: svc, stand: stand, ctx: ctx, agent: agent}
	for _, c := range []struct {
		name     string
		required bool
		id       *string
	}{{"greets", true, &w.greets}, {"other", false, &w.other}} {
		test, err := svc.AgentTests.CreateAgentTest(ctx, agent.ID, data.AgentTestCreate{Name: c.name, RequiredForPublish: c.required,
			User: data.TestUser{Script: []string{"hello"}}, Criteria: []data.Criterion{{Type: data.CriterionSays, Pattern: "Welcome"}}})
		if err != nil {
			t.Fatal(err)
		}
		*c.id = test.ID
	}
	return w
}

// runs starts n runs of the tests and runs them to their end, as many at once as the
// pending bound allows, and returns their ids in the order they were asked for.
func (w *keptRunsWorld) runs(t *testing.T, n int, testID string) []string {
	t.Helper()
	var ids []string
	for len(ids) < n {
		batch := min(n-len(ids), validate.MaxPendingTestRuns)
		for range batch {
			run, err := w.svc.TestRuns.StartTestRun(w.ctx, w.agent.ID, data.TestRunCreate{TestIDs: data.Some([]string{testID})})
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, run.ID)
		}
		runner := w.svc.Jobs.NewRunner(service.RunnerOptions{Workers: batch, Kinds: []string{service.JobKindTestRun}, Jitter: noJitter})
		if ran, err := runner.RunDue(context.Background()); err != nil || ran != batch {
			t.Fatalf("ran %d of %d runs: %v", ran, batch, err)
		}
	}
	return ids
}

// storedRuns are the ids of the agent's runs as the list shows them, newest first.
func (w *keptRunsWorld) storedRuns(t *testing.T) []string {
	t.Helper()
	var ids []string
	req := data.PageRequest{PerPage: 100}
	for {
		runs, page, err := w.svc.TestRuns.ListTestRuns(w.ctx, w.agent.ID, data.TestRunFilter{}, req)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range runs {
			if !data.TestRunFinished(r.Status) {
				t.Errorf("run %s is %s after its job ended", r.ID, r.Status)
			}
			ids = append(ids, r.ID)
		}
		if page.NextCursor == nil {
			return ids
		}
		req.Cursor = *page.NextCursor
	}
}

// checkKept checks the agent keeps exactly the newest MaxKeptTestRuns of runs (oldest
// first) and the gate's run, and that the gate still reads that run.
func (w *keptRunsWorld) checkKept(t *testing.T, runs []string, gateRun string) {
	t.Helper()
	want := append([]string{gateRun}, runs[len(runs)-validate.MaxKeptTestRuns:]...) // oldest first
	slices.Reverse(want)
	if got := w.storedRuns(t); !slices.Equal(got, want) {
		t.Errorf("%d runs kept, want %d: the newest %d and the gate's (%s)\n got %v\nwant %v", len(got), len(want), validate.MaxKeptTestRuns, gateRun, got, want)
	}
	g, err := w.svc.TestRuns.PublishGate(w.ctx, w.agent.ID)
	if err != nil {
		t.Fatal(err)
	}
	if g.State != data.GateOpen || len(g.Required) != 1 || g.Required[0].RunID == nil || *g.Required[0].RunID != gateRun {
		t.Errorf("the gate after pruning: %+v, want open on %s", g, gateRun)
	}
}

// TestFinishedTestRunsKept: an agent keeps its newest validate.MaxKeptTestRuns finished
// runs, and always the run the publish gate reads (here the oldest, the one run of the
// required test), however many finish after it; two runs finishing at once (their
// model answers held until both ask) keep exactly as many.
func TestFinishedTestRunsKept(t *testing.T) {
	w := newKeptRunsWorld(t)
	gateRun := w.runs(t, 1, w.greets)[0]
	others := w.runs(t, validate.MaxKeptTestRuns+3, w.other)
	w.checkKept(t, others, gateRun)

	held := &heldAtLimit{limit: 2, reached: make(chan struct{})}
	w.stand.Respond(held.respond)
	others = append(others, w.runs(t, 2, w.other)...)
	held.mu.Lock()
	if held.peak != 2 {
		t.Errorf("the two runs asked the model %d at once, want 2 (finishing together)", held.peak)
	}
	held.mu.Unlock()
	w.checkKept(t, others, gateRun)
}
