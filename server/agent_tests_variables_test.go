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

// TestAgentTestFromARoutedCall: a test made from a call that a number routed carries the
// number's variables under the call's own, as the call ran with them, so it runs rather
// than ending in error for a variable the number gave. A caller who may not read numbers
// gets the call's own variables only.
func TestAgentTestFromARoutedCall(t *testing.T) {
	e := newTestsEnv(t)
	agent := e.bookingAgent(t, "Trattoria")
	testkit.Expect(t, e.Do("PUT", "/api/v1/agents/"+agent, e.tok, map[string]any{
		"prompt_config": map[string]any{"prompt": "You take bookings for {{shop}} in {{city}}."}}), 200)
	e.publish(t, e.tok, agent, false, 204)
	testkit.Expect(t, e.Do("POST", "/api/v1/numbers", e.tok, map[string]any{"phone_number": "+14155550123", "provider": "twilio",
		"inbound_agent_id": agent, "variables": map[string]any{"shop": "Pizzeria", "city": "Rome", "floor": 2}}), 201)
	start := e.Do("POST", "/api/v1/calls/start", e.tok, map[string]any{"direction": "inbound", "to_number": "+14155550123",
		"variables": map[string]any{"shop": "Trattoria", "party": 4, "vip": true}})
	testkit.Expect(t, start, 201)
	callID := start.Data()["call"].(map[string]any)["id"].(string)
	testkit.Expect(t, e.Do("PUT", "/api/v1/calls/"+callID, e.tok, map[string]any{"status": "ended",
		"transcript": []map[string]any{{"role": "user", "content": "hello", "start_ms": 0}}}), 200)

	r := e.Do("POST", "/api/v1/agents/"+agent+"/tests/from-call/"+callID, e.tok, nil)
	testkit.Expect(t, r, 201)
	// Numbers too: they are stored as JSON numbers, and were dropped as no scalar.
	if vars := r.Data()["variables"].(map[string]any); vars["shop"] != "Trattoria" || vars["city"] != "Rome" ||
		vars["floor"] != 2.0 || vars["party"] != 4.0 || vars["vip"] != true {
		t.Fatalf("the test's variables are %v, want the call's over the number's", vars)
	}
	run := e.run(t, agent, map[string]any{"test_ids": []string{r.Data()["id"].(string)}})
	if run["status"] != data.TestPassed {
		t.Errorf("the test from the call is %v, want passed: %v", run["status"], run["results"])
	}

	dev := e.Member("dev@example.com", e.Owner.WorkspaceID, data.RoleDeveloper, []string{data.ModuleAgents, data.ModuleCallHistory}, nil)
	r = e.Do("POST", "/api/v1/agents/"+agent+"/tests/from-call/"+callID, dev.Token, nil)
	testkit.Expect(t, r, 201)
	if vars := r.Data()["variables"].(map[string]any); len(vars) != 3 || vars["shop"] != "Trattoria" || vars["party"] != 4.0 {
		t.Errorf("without phone_numbers the test's variables are %v, want the call's own", vars)
	}
}
