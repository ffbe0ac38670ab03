package service_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/bolt"
	"github.com/voiceapi/voiceapi/cli"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/llmtest"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/llm"
	"github.com/voiceapi/voiceapi/service"
)

// inFlight counts the completions under way across every model client it wraps, and the
// most there ever were at once.
type inFlight struct{ now, peak atomic.Int64 }

type countedModel struct {
	llm.Client
	n *inFlight
}

func (m countedModel) Complete(ctx context.Context, req llm.Request, onText func(string) error) (*llm.Reply, error) {
	cur := m.n.now.Add(1)
	for {
		p := m.n.peak.Load()
		if cur <= p || m.n.peak.CompareAndSwap(p, cur) {
			break
		}
	}
	defer m.n.now.Add(-1)
	return m.Client.Complete(ctx, req, onText)
}

// BenchmarkTestRun100x3 runs 100 tests of 3 repeats each (300 cases, one model answer
// each: a scripted caller's single turn, criteria decided without a model) against a
// stand-in model over HTTP that answers every request in 50 ms, with the process's case
// limit (--test-concurrency) at 4, 8, 16 and 32, the bbolt file fsynced as served. One
// iteration is one run, claimed and run to its end by a job runner (RunDue). It reports
// the run's wall time, the most completions in flight at once (the worker's concurrency:
// the limit, when the model is what bounds it) and the cases a second.
func BenchmarkTestRun100x3(b *testing.B) {
	for _, limit := range []int{4, 8, 16, 32} {
		b.Run(fmt.Sprintf("concurrency=%d", limit), func(b *testing.B) {
			stand := llmtest.New(b, data.LLMInternal)
			stand.Respond(func(llmtest.Request) llmtest.Reply {
				r := llmtest.Text("Welcome to the test kitchen.")
				r.Delay = 50 * time.Millisecond
				return r
			})
			db := testkit.OpenDB(b, func(o *bolt.Options) { o.NoSync = false })
			svc := servicesOn(b, db, db, nil)
			counter := &inFlight{}
			opts := cli.ConversationOptions(cli.LLMSettings{AllowURLPrefixes: []string{stand.URL + "/"}})
			models := opts.Models
			opts.Models = func(c data.LLMConfig) (llm.Client, error) {
				m, err := models(c)
				return countedModel{m, counter}, err
			}
			svc.Conversations.Configure(opts)
			svc.TestRuns.Configure(service.TestRunOptions{Concurrency: limit})
			u := mustUser(b, svc, "bench@example.com")
			ctx := ownerCtx(u.ID, u.PersonalWorkspaceID)
			cfg := stand.LLMConfig()
			first := "user"
			agent, err := svc.Agents.CreateAgent(ctx, data.AgentCreate{Name: data.Some("Kitchen"), LLMConfig: data.Some(llmPatch(cfg)),
				PromptConfig: data.Some(data.PromptConfigPatch{FirstSpeaker: data.Some(first)})})
			if err != nil {
				b.Fatal(err)
			}
			for i := range 100 {
				_, err := svc.AgentTests.CreateAgentTest(ctx, agent.ID, data.AgentTestCreate{Name: fmt.Sprint("test ", i),
					User: data.TestUser{Script: []string{"hello"}}, Repeat: data.Some(3),
					Criteria: []data.Criterion{{Type: data.CriterionSays, Pattern: "Welcome"}, {Type: data.CriterionMaxLatencyMS, Value: 10000.0}}})
				if err != nil {
					b.Fatal(err)
				}
			}
			runner := svc.Jobs.NewRunner(service.RunnerOptions{Workers: 1, Kinds: []string{service.JobKindTestRun}})
			var wall time.Duration
			b.ResetTimer()
			for range b.N {
				run, err := svc.TestRuns.StartTestRun(ctx, agent.ID, data.TestRunCreate{})
				if err != nil {
					b.Fatal(err)
				}
				start := time.Now()
				if n, err := runner.RunDue(context.Background()); err != nil || n != 1 {
					b.Fatalf("ran %d jobs: %v", n, err)
				}
				wall += time.Since(start)
				got, err := svc.TestRuns.TestRun(ctx, agent.ID, run.ID)
				if err != nil || got.Status != data.TestPassed || got.Summary.Done != 300 {
					b.Fatalf("run: %v %s %+v", err, got.Status, got.Summary)
				}
			}
			b.StopTimer()
			secs := wall.Seconds() / float64(b.N)
			b.ReportMetric(secs, "s/run")
			b.ReportMetric(float64(counter.peak.Load()), "max_in_flight")
			b.ReportMetric(300/secs, "cases/s")
		})
	}
}

// llmPatch is an llm_config as a create's patch.
func llmPatch(c data.LLMConfig) data.LLMConfigPatch {
	p := data.LLMConfigPatch{Provider: data.Some(c.Provider), Model: data.Some(c.Model), BaseURL: data.Some(c.BaseURL)}
	if c.Temperature != nil {
		p.Temperature = data.Some(*c.Temperature)
	}
	return p
}
