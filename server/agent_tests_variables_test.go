package server_test

import (
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
)

// TestTestRunFillsDefaultVariables: a test run fills the agent's {{variables}} as a
// conversation and a call start do, its default_variables under the test's own, so a
// test need not repeat what the agent defaults (docs/runtime.md, "How variables are
// filled"). A run that ignored them ended every such test in error, holding the gate.
func TestTestRunFillsDefaultVariables(t *testing.T) {
	e := newTestsEnv(t)
	agent := e.bookingAgent(t, "Trattoria")
	testkit.Expect(t, e.Do("PUT", "/api/v1/agents/"+agent, e.tok, map[string]any{
		"prompt_config": map[string]any{"default_variables": map[string]any{"shop": "Bistro"}}}), 200)
	body := scripted("greets", []string{"hello"}, map[string]any{"type": "says", "pattern": "Bistro here"})
	delete(body, "variables")
	body["required_for_publish"] = true
	e.createTest(t, agent, body)
	run := e.run(t, agent, nil)
	if run["status"] != data.TestPassed {
		t.Fatalf("the run is %v, want passed: %v", run["status"], run["results"])
	}
	e.publish(t, e.tok, agent, false, 204)
}
