package service_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/service"
)

// BenchmarkAgentDeleteCutsKeptAnswers: an agent's delete with n answers kept for its
// conversations' starts and messages, each cut to its claim in the delete's transaction
// (docs/performance.md, "An agent's delete"). Either engine (VOICEAPI_TEST_BACKEND).
func BenchmarkAgentDeleteCutsKeptAnswers(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			env := testkit.New(b, nil)
			ctx := owner(b, env, "bench@example.com")
			body := make([]byte, 2048) // a start's answer: its variables and opening, sealed
			for b.Loop() {
				b.StopTimer()
				agent, err := env.Svc.Agents.CreateAgent(ctx, data.AgentCreate{Name: data.Some("Greeter")})
				if err != nil {
					b.Fatal(err)
				}
				keepAgentAnswers(b, env, agent.ID, n, body)
				b.StartTimer()
				if err := env.Svc.Agents.DeleteAgent(ctx, agent.ID); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkAgentCutKeptAnswersJob: the job agent.cut_kept_answers of an agent deleted
// with n answers of 2 KiB kept for its conversations (the delete, untimed, cut the first
// 1,000), timed as it cuts the rest, 1,000 a transaction (docs/performance.md, "An
// agent's delete"). Either engine (VOICEAPI_TEST_BACKEND).
func BenchmarkAgentCutKeptAnswersJob(b *testing.B) {
	for _, n := range []int{10000, 40000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			env := testkit.New(b, nil)
			ctx := owner(b, env, "bench@example.com")
			body := make([]byte, 2048)
			runner := env.Svc.Jobs.NewRunner(service.RunnerOptions{Workers: 1, Kinds: []string{service.JobKindCutKeptAnswers}})
			for b.Loop() {
				b.StopTimer()
				agent, err := env.Svc.Agents.CreateAgent(ctx, data.AgentCreate{Name: data.Some("Greeter")})
				if err != nil {
					b.Fatal(err)
				}
				keepAgentAnswers(b, env, agent.ID, n, body)
				if err := env.Svc.Agents.DeleteAgent(ctx, agent.ID); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				if ran, err := runner.RunDue(context.Background()); err != nil || ran != 1 {
					b.Fatalf("ran %d jobs: %v; want the delete's one", ran, err)
				}
			}
		})
	}
}

// keepAgentAnswers keeps n answers with body for agent's conversations, ten a
// conversation, 500 a transaction.
func keepAgentAnswers(b *testing.B, env *testkit.Env, agent string, n int, body []byte) {
	now := data.NewTime(time.Now())
	for i := 0; i < n; i += 500 {
		if err := env.Store.Update(context.Background(), func(tx service.Tx) error {
			for j := i; j < min(i+500, n); j++ {
				if err := tx.PutIdempotentResponse(1, fmt.Sprintf("%s-%d", agent, j), &data.IdempotentResponse{Status: 200, Body: body,
					CreatedAt: now, AgentID: agent, ConversationID: fmt.Sprintf("conv_%d", j/10)}); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			b.Fatal(err)
		}
	}
}
