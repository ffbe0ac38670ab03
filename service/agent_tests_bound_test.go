package service_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/service"
	"github.com/voiceapi/voiceapi/validate"
)

// TestAgentTestsPerAgentBound: an agent holds at most validate.MaxTestsPerAgent tests. The
// last one up to the bound is created; past it a create is a conflict (docs/api.md) and
// stores nothing, and of creates racing for the last place exactly one gets it. Runs on
// both engines (VOICEAPI_TEST_BACKEND=postgres).
func TestAgentTestsPerAgentBound(t *testing.T) {
	env := testkit.New(t, nil)
	svc := env.Svc
	ctx := owner(t, env, "bound@example.com")
	agent, err := svc.Agents.CreateAgent(ctx, data.AgentCreate{Name: data.Some("Kitchen")})
	if err != nil {
		t.Fatal(err)
	}
	testNamed := func(name string) data.AgentTestCreate {
		return data.AgentTestCreate{Name: name, User: data.TestUser{Script: []string{"hello"}},
			Criteria: []data.Criterion{{Type: data.CriterionSays, Pattern: "Welcome"}}}
	}
	for i := range validate.MaxTestsPerAgent - 1 {
		if _, err := svc.AgentTests.CreateAgentTest(ctx, agent.ID, testNamed(fmt.Sprint("test ", i))); err != nil {
			t.Fatalf("test %d of %d: %v", i+1, validate.MaxTestsPerAgent, err)
		}
	}

	const racers = 4
	errs := make([]error, racers)
	var wg sync.WaitGroup
	for i := range racers {
		wg.Go(func() {
			_, errs[i] = svc.AgentTests.CreateAgentTest(ctx, agent.ID, testNamed(fmt.Sprint("racer ", i)))
		})
	}
	wg.Wait()
	created := 0
	for i, err := range errs {
		switch data.ErrorCode(err) {
		case "":
			created++
		case data.ECONFLICT:
		default:
			t.Errorf("racer %d: %v, want success or %s", i, err, data.ECONFLICT)
		}
	}
	if created != 1 {
		t.Errorf("%d of %d creates racing for the last place succeeded, want 1", created, racers)
	}

	if _, err := svc.AgentTests.CreateAgentTest(ctx, agent.ID, testNamed("one too many")); data.ErrorCode(err) != data.ECONFLICT {
		t.Errorf("past the bound: %v, want %s", err, data.ECONFLICT)
	}
	if n := countAgentTests(t, env, agent.ID); n != validate.MaxTestsPerAgent {
		t.Errorf("the agent holds %d tests, want %d", n, validate.MaxTestsPerAgent)
	}
}

// countAgentTests reads the agent's tests from storage.
func countAgentTests(t *testing.T, env *testkit.Env, agentID string) int {
	t.Helper()
	var n int
	err := env.Store.View(t.Context(), func(tx service.Tx) error {
		tests, err := tx.AgentTests(agentID)
		n = len(tests)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}
