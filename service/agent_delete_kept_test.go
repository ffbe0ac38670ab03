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

// TestAgentDeleteCutsKeptAnswersInBatches: an agent's delete cuts the answers kept with
// it to their claims (its conversations' and every other, a call's start), the first
// service.AgentKeptCutBatch in its own transaction, and queues agent.cut_kept_answers for
// the rest, which cuts them all, batch after batch; an answer of another agent, and one about no agent, stay
// as kept. Both engines.
func TestAgentDeleteCutsKeptAnswersInBatches(t *testing.T) {
	env := testkit.New(t, nil)
	ctx := owner(t, env, "cut@example.com")
	var agents []string
	for _, name := range []string{"Greeter", "Other"} {
		a, err := env.Svc.Agents.CreateAgent(ctx, data.AgentCreate{Name: data.Some(name)})
		if err != nil {
			t.Fatal(err)
		}
		agents = append(agents, a.ID)
	}
	agent, other := agents[0], agents[1]
	// The job's run cuts a full batch, then the one past it: a run that stopped after one
	// batch would leave that one whole.
	n := 2*service.AgentKeptCutBatch + 1
	now := data.NewTime(time.Now())
	put := func(tx service.Tx, key, agentID, conv string) error {
		return tx.PutIdempotentResponse(1, key, &data.IdempotentResponse{Status: 200, Body: []byte("words"), CreatedAt: now,
			AgentID: agentID, ConversationID: conv})
	}
	if err := env.Store.Update(context.Background(), func(tx service.Tx) error {
		for i := range n {
			if err := put(tx, fmt.Sprint("turn-", i), agent, fmt.Sprint("conv_", i/10)); err != nil {
				return err
			}
		}
		if err := put(tx, "other's turn", other, "conv_x"); err != nil {
			return err
		}
		if err := put(tx, "webhook", "", ""); err != nil {
			return err
		}
		return put(tx, "call start", agent, "")
	}); err != nil {
		t.Fatal(err)
	}
	kept := func(key string) *data.IdempotentResponse {
		t.Helper()
		var r *data.IdempotentResponse
		if err := env.Store.View(context.Background(), func(tx service.Tx) (err error) {
			r, err = tx.IdempotentResponse(1, key)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return r
	}
	keys := []string{"call start"}
	for i := range n {
		keys = append(keys, fmt.Sprint("turn-", i))
	}
	whole := func() (left int) {
		t.Helper()
		for _, key := range keys {
			r := kept(key)
			if r == nil {
				t.Fatalf("%s: gone; want kept (its claim at least)", key)
			}
			if r.Status != 0 || r.AgentID != agent {
				left++
			}
		}
		return left
	}

	if err := env.Svc.Agents.DeleteAgent(ctx, agent); err != nil {
		t.Fatal(err)
	}
	if left := whole(); left != len(keys)-service.AgentKeptCutBatch {
		t.Fatalf("after the delete's transaction, %d answers kept whole; want %d", left, len(keys)-service.AgentKeptCutBatch)
	}
	runner := env.Svc.Jobs.NewRunner(service.RunnerOptions{Workers: 1, Kinds: []string{service.JobKindCutKeptAnswers}})
	if ran, err := runner.RunDue(context.Background()); err != nil || ran != 1 {
		t.Fatalf("ran %d jobs: %v; want the delete's one", ran, err)
	}
	if left := whole(); left != 0 {
		t.Errorf("after the job, %d answers kept whole; want none", left)
	}
	for _, key := range []string{"other's turn", "webhook"} {
		if r := kept(key); r == nil || r.Status != 200 {
			t.Errorf("%q after the delete: %+v; want it kept as it was", key, r)
		}
	}
}
