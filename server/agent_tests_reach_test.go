package server_test

import (
	"testing"

	"github.com/voiceapi/voiceapi/internal/testkit"
)

// TestAgentTestThatCannotPassRefused writes, through the API, tests the agent's draft can
// never satisfy, on create and on update: each is a 422 naming the criterion's member,
// and nothing is stored or changed. Once the draft gains the tool, the same test is
// created; a workspace import is not held to it (validate.AgentTestReachable).
func TestAgentTestThatCannotPassRefused(t *testing.T) {
	e := newTestsEnv(t)
	agent := e.bookingAgent(t, "Trattoria") // book, note {vip: boolean}, handoff, hang_up
	base := "/api/v1/agents/" + agent + "/tests"

	r := e.Do("POST", base, e.tok, scripted("vip as text", []string{"hello"},
		map[string]any{"type": "tool_called", "name": "note", "arguments": map[string]any{"vip": "yes", "mood": "fine"}}))
	testkit.ExpectFields(t, r, "criteria.0.arguments.vip", "criteria.0.arguments.mood")

	// An agent with no tools never ends agent_ended nor transferred.
	bare := e.createAgent(t, map[string]any{"name": "Bare", "prompt_config": map[string]any{"prompt": "You answer for {{shop}}."},
		"llm_config": e.llmConfig(nil)})
	bareTests := "/api/v1/agents/" + bare + "/tests"
	unmocked := func(name string, script []string, criteria ...map[string]any) map[string]any {
		body := scripted(name, script, criteria...)
		delete(body, "mocks") // the bare agent has no custom function to mock
		return body
	}
	r = e.Do("POST", bareTests, e.tok, unmocked("hangs up", []string{"bye"},
		map[string]any{"type": "ends_with", "reason": "agent_ended"}, map[string]any{"type": "ends_with", "reason": "transferred"}))
	testkit.ExpectFields(t, r, "criteria.0.reason", "criteria.1.reason")
	if list := e.Do("GET", bareTests, e.tok, nil); len(list.List()) != 0 {
		t.Fatalf("a refused test was stored: %s", list.Body)
	}

	// An update to such a criterion is refused too, and changes nothing.
	ok := e.createTest(t, bare, unmocked("says hello", []string{"hi"}, map[string]any{"type": "says", "pattern": "(?i)hello"}))
	r = e.Do("PUT", bareTests+"/"+ok["id"].(string), e.tok, map[string]any{
		"criteria": []any{map[string]any{"type": "ends_with", "reason": "agent_ended"}}})
	testkit.ExpectFields(t, r, "criteria.0.reason")
	if got := e.Do("GET", bareTests+"/"+ok["id"].(string), e.tok, nil).Data()["criteria"].([]any)[0].(map[string]any)["type"]; got != "says" {
		t.Errorf("the refused update changed the test's criterion to %v", got)
	}

	// The booking agent has hang_up (end_call) and handoff (transfer_call): both ends pass.
	e.createTest(t, agent, scripted("ends", []string{"bye"},
		map[string]any{"type": "ends_with", "reason": "agent_ended"},
		map[string]any{"type": "tool_called", "name": "note", "arguments": map[string]any{"vip": true}}))
}

// TestAgentTestEmptyScriptNamed: a script given with no turns is a 422 on user.script
// (it was told "the user field needs a script", though one was given).
func TestAgentTestEmptyScriptNamed(t *testing.T) {
	e := newTestsEnv(t)
	agent := e.bookingAgent(t, "Trattoria")
	r := e.Do("POST", "/api/v1/agents/"+agent+"/tests", e.tok, scripted("empty", []string{},
		map[string]any{"type": "says", "pattern": "hello"}))
	testkit.ExpectFields(t, r, "user.script")
}

// TestAgentUpdateLeavesTestsItMakesUnpassable pins what docs/testing-agents.md says of an
// agent's update that takes away the tool a test needs: the update is not refused and the
// test stays, any change to it is then a 422 naming the criterion (the whole test is
// checked against the draft, as on create), and its delete goes.
func TestAgentUpdateLeavesTestsItMakesUnpassable(t *testing.T) {
	e := newTestsEnv(t)
	agent := e.bookingAgent(t, "Trattoria") // book, note, handoff, hang_up (end_call)
	test := e.createTest(t, agent, scripted("hangs up", []string{"bye"}, map[string]any{"type": "ends_with", "reason": "agent_ended"}))
	path := "/api/v1/agents/" + agent + "/tests/" + test["id"].(string)

	tools := e.Do("GET", "/api/v1/agents/"+agent, e.tok, nil).Data()["llm_config"].(map[string]any)["tools"].([]any)
	kept := []any{}
	for _, tool := range tools {
		if tool.(map[string]any)["type"] != "end_call" {
			kept = append(kept, tool)
		}
	}
	if len(kept) != len(tools)-1 {
		t.Fatalf("the booking agent has no one end_call tool: %v", tools)
	}
	testkit.Expect(t, e.Do("PUT", "/api/v1/agents/"+agent, e.tok, map[string]any{"llm_config": map[string]any{"tools": kept}}), 200)
	testkit.Expect(t, e.Do("GET", path, e.tok, nil), 200)

	testkit.ExpectFields(t, e.Do("PUT", path, e.tok, map[string]any{"name": "hangs up, renamed"}), "criteria.0.reason")
	if got := e.Do("GET", path, e.tok, nil).Data()["name"]; got != "hangs up" {
		t.Errorf("the refused rename changed the test's name to %v", got)
	}
	testkit.Expect(t, e.Do("DELETE", path, e.tok, nil), 204)
}
