package server_test

import (
	"context"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/service"
)

// The test runs' examples (testing-agents.md), on the restaurant agent of the agent tests'
// fixture (bookingFixture), run by a job runner as serve runs one.

// runEnv is the env as the agent tests' helpers take it, with a job runner running until
// the check ends.
func (e *docEnv) runEnv(t *testing.T) *testsEnv {
	t.Helper()
	te := &testsEnv{convEnv: e.convEnv, fixture: bookingFixture()}
	e.stand.Respond(te.fixture.Respond)
	runner := e.Svc.Jobs.NewRunner(service.RunnerOptions{Poll: 20 * time.Millisecond, Lease: 5 * time.Second})
	runner.Start(context.Background())
	t.Cleanup(func() { runner.Stop(context.Background()) })
	return te
}

// bookingTests gives a booking agent testing-agents.md's two outcomes: "books a table"
// passes, "mentions the terrace" fails; both are required and repeated twice.
func bookingTests(t *testing.T, te *testsEnv, agentID string) {
	t.Helper()
	for _, test := range []map[string]any{
		scripted("books a table", []string{"A table for two, please.", "Thanks, bye"},
			map[string]any{"type": "tool_called", "name": "book", "arguments": map[string]any{"people": 2}}),
		scripted("mentions the terrace", []string{"A table for two, please.", "Thanks, bye"},
			map[string]any{"type": "says", "pattern": "(?i)terrace"}),
	} {
		test["required_for_publish"], test["repeat"] = true, 2
		te.createTest(t, agentID, test)
	}
}

// testRunAnswer checks testing-agents.md's run against a run of those tests.
func testRunAnswer(e *docEnv, t *testing.T, reqs []docRequest) {
	te := e.runEnv(t)
	agent := te.bookingAgent(t, "Trattoria")
	bookingTests(t, te, agent)
	run := te.run(t, agent, nil)
	r := e.Do("GET", "/api/v1/agents/"+agent+"/test-runs/"+run["id"].(string), e.tok, nil)
	testkit.Expect(t, r, 200)
	expectShape(t, reqs[0].body, r, true)
}

// testsFailedAnswer checks testing-agents.md's 409 against a publish after that run.
func testsFailedAnswer(e *docEnv, t *testing.T, reqs []docRequest) {
	te := e.runEnv(t)
	agent := te.bookingAgent(t, "Trattoria")
	bookingTests(t, te, agent)
	te.run(t, agent, nil)
	r := te.publish(t, e.tok, agent, false, 409)
	if r.Code() != "tests_failed" {
		t.Errorf("code %q, the doc shows tests_failed", r.Code())
	}
	expectShape(t, reqs[0].body, r, true)
}
