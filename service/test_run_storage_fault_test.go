package service_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/voiceapi/voiceapi/cli"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/llmtest"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/service"
)

// knowledgeFaultTx is a transaction whose reads of a knowledge base fail with the error
// fault holds, while it holds one: a test case's knowledge lookup meets it.
type knowledgeFaultTx struct {
	service.Tx
	fault *atomic.Pointer[error]
}

func (t knowledgeFaultTx) KnowledgeBase(id string) (*data.KnowledgeBase, error) {
	if err := t.fault.Load(); err != nil {
		return nil, *err
	}
	return t.Tx.KnowledgeBase(id)
}

// TestTestRunCaseKnowledgeFaultJudgedAsStorage: a test case whose knowledge lookup meets
// a storage fault is judged by the runner's one rule (failureOf): a lasting one (a row
// that does not decode) fails the run's job at its first attempt, and the run ends
// error naming it; a healing one (the database unreachable) queues the job again. Before,
// every such fault was retried for the run's whole attempt budget. Both engines.
func TestTestRunCaseKnowledgeFaultJudgedAsStorage(t *testing.T) {
	stand := llmtest.New(t, data.LLMInternal)
	stand.Respond(func(llmtest.Request) llmtest.Reply { return llmtest.Text("Welcome to the test kitchen.") })
	engine := testkit.OpenEngine(t)
	var fault atomic.Pointer[error]
	svc := servicesOn(t, wrappedTxStore{engine, func(tx service.Tx) service.Tx { return knowledgeFaultTx{tx, &fault} }}, engine, nil)
	svc.Conversations.Configure(cli.ConversationOptions(cli.LLMSettings{AllowURLPrefixes: []string{stand.URL + "/"}}))
	u := mustUser(t, svc, "kbfault@example.com")
	ctx := testkit.As(u)
	kb, err := svc.KnowledgeBases.CreateKnowledgeBase(ctx, data.KnowledgeBaseCreate{Name: "Menu",
		Texts: []data.TextInput{{Title: "Soup", Content: "Today's soup is tomato."}}})
	if err != nil {
		t.Fatal(err)
	}
	cfg := llmPatch(stand.LLMConfig())
	cfg.KnowledgeBaseIDs = data.Some([]string{kb.ID})

	var row struct{}
	lasting := fmt.Errorf("decoding knowledge base %s: %w", kb.ID, json.Unmarshal([]byte(`{"id":`), &row))
	healing := fmt.Errorf("%w: dial tcp: connection refused", data.ErrStorageUnavailable)
	for _, c := range []struct {
		name      string
		fault     error
		job, run  string
		jobFailed int
	}{
		{"lasting", lasting, data.JobFailed, data.TestError, 1},
		{"healing", healing, data.JobQueued, data.TestRunning, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			agent, run := greetsRun(t, svc, ctx, data.AgentCreate{Name: data.Some("Kitchen " + c.name), LLMConfig: data.Some(cfg)})
			fault.Store(&c.fault)
			defer fault.Store(nil)
			runner := svc.Jobs.NewRunner(service.RunnerOptions{Workers: 1, Kinds: []string{service.JobKindTestRun}, Jitter: noJitter})
			if n, err := runner.RunDue(context.Background()); err != nil || n != 1 {
				t.Fatalf("ran %d jobs: %v", n, err)
			}
			fault.Store(nil)
			j := jobByID(t, engine, run.JobID)
			if j.Status != c.job || j.Attempt != 1 || j.LastError == nil || !strings.Contains(*j.LastError, c.fault.Error()) {
				t.Errorf("the run's job: %s after attempt %d, error %q; want %s after attempt 1, naming %q",
					j.Status, j.Attempt, deref(j.LastError), c.job, c.fault)
			}
			if failed := jobFailedOf(t, engine, u.PersonalWorkspaceID, j.ID); len(failed) != c.jobFailed {
				t.Errorf("job.failed events: %d, want %d", len(failed), c.jobFailed)
			}
			got, err := svc.TestRuns.TestRun(ctx, agent.ID, run.ID)
			if err != nil || got.Status != c.run {
				t.Fatalf("run: %v %+v; want %s", err, got, c.run)
			}
			if c.run == data.TestError && (got.Error == nil || !strings.Contains(*got.Error, c.fault.Error())) {
				t.Errorf("the run's error %q does not name the fault", deref(got.Error))
			}
		})
	}
}
