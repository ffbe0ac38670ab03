package server_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/llmtest"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/llm"
	"github.com/voiceapi/voiceapi/service"
)

// testsEnv is a server whose conversations reach the fixture model on a stand-in, with a
// job runner, as serve runs one, that runs test runs.
type testsEnv struct {
	*convEnv
	fixture *llmtest.Fixture
}

// newTestsEnv starts the server and its runner; the runner stops before the database
// closes. standOpts configure the model stand-in (the key it expects).
func newTestsEnv(t *testing.T, standOpts ...llmtest.Option) *testsEnv {
	t.Helper()
	e := newTestsEnvWithoutRunner(t, standOpts...)
	runner := e.Svc.Jobs.NewRunner(service.RunnerOptions{Poll: 20 * time.Millisecond, Lease: 5 * time.Second})
	runner.Start(context.Background())
	t.Cleanup(func() { runner.Stop(context.Background()) })
	return e
}

// newTestsEnvWithoutRunner is newTestsEnv whose runs wait for a runner the test drives.
func newTestsEnvWithoutRunner(t *testing.T, standOpts ...llmtest.Option) *testsEnv {
	t.Helper()
	e := &testsEnv{convEnv: newConvEnvWith(t, nil, standOpts), fixture: bookingFixture()}
	e.stand.Respond(e.fixture.Respond)
	return e
}

// bookingFixture plays a restaurant's agent: "table" books through the book function,
// "vip" notes it, "bye" ends the call, "human" transfers; its callers and its judge.
func bookingFixture() *llmtest.Fixture {
	return &llmtest.Fixture{
		Agent: []llmtest.Rule{
			{When: "table", Reply: llmtest.Calls(llm.ToolCall{Name: "book", Arguments: `{"people":2}`})},
			{When: "vip", Reply: llmtest.Calls(llm.ToolCall{Name: "note", Arguments: `{"vip":true}`})},
			{When: "human", Reply: llmtest.Calls(llm.ToolCall{Name: "handoff", Arguments: `{"destination":"front desk"}`})},
			{When: "bye", Reply: llmtest.Reply{Text: "Goodbye!", ToolCalls: []llm.ToolCall{{Name: "hang_up", Arguments: "{}"}}}},
		},
		AgentDefault: llmtest.Text("Welcome! How can I help?"),
		AfterTools:   llmtest.Text("Done: you're booked."),
		Callers:      map[string][]string{"A hungry regular": {"A table for two, please.", "Thanks, bye"}},
	}
}

// bookingAgent creates the restaurant agent: a custom function whose endpoint nothing
// answers (tests answer it from mocks), an extraction, a transfer and a hang-up.
func (e *testsEnv) bookingAgent(t *testing.T, name string) string {
	t.Helper()
	return e.createAgent(t, map[string]any{
		"name": name,
		"llm_config": e.llmConfig(map[string]any{"tools": []map[string]any{
			{"name": "book", "type": "custom_function", "api_endpoint": "http://192.0.2.1/book",
				"custom_function_parameters": `{"type":"object","properties":{"people":{"type":"integer"}},"required":["people"]}`,
				"custom_function_variables":  []string{"booking_id"}},
			{"name": "note", "type": "extract_dynamic_variable", "variables": []map[string]any{{"type": "boolean", "name": "vip", "description": "A VIP"}}},
			{"name": "handoff", "type": "transfer_call", "phone_directory": []map[string]any{
				{"name": "front desk", "phone_number": "+14155550100", "description": "People", "transfer_type": "cold"}}},
			{"name": "hang_up", "type": "end_call"},
		}}),
		"prompt_config": map[string]any{"prompt": "You take bookings for {{shop}}.", "welcome_message": "Hi, {{shop}} here."},
	})
}

// createTest adds a test and returns it.
func (e *testsEnv) createTest(t *testing.T, agentID string, body map[string]any) map[string]any {
	t.Helper()
	r := e.Do("POST", "/api/v1/agents/"+agentID+"/tests", e.tok, body)
	testkit.Expect(t, r, 201)
	return r.Data()
}

// scripted is a test body of a scripted caller with the variables the agent needs.
func scripted(name string, script []string, criteria ...map[string]any) map[string]any {
	return map[string]any{"name": name, "user": map[string]any{"script": script},
		"variables": map[string]any{"shop": "Trattoria"}, "criteria": criteria,
		"mocks": map[string]any{"book": map[string]any{"status": 200, "body": map[string]any{"booking_id": "B7"}}}}
}

// run starts a run of the agent's tests (body may be nil) and waits for it to end.
func (e *testsEnv) run(t *testing.T, agentID string, body map[string]any) map[string]any {
	t.Helper()
	if body == nil {
		body = map[string]any{}
	}
	r := e.Do("POST", "/api/v1/agents/"+agentID+"/test-runs", e.tok, body)
	testkit.Expect(t, r, 202)
	return e.wait(t, agentID, r.Data()["id"].(string))
}

// wait reads the run until it has ended, and returns it with its results.
func (e *testsEnv) wait(t *testing.T, agentID, runID string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		r := e.Do("GET", "/api/v1/agents/"+agentID+"/test-runs/"+runID, e.tok, nil)
		testkit.Expect(t, r, 200)
		if data.TestRunFinished(r.Data()["status"].(string)) {
			return r.Data()
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run has not ended: %s", r.Body)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// publish asks to publish the agent; force and description are sent when set.
func (e *testsEnv) publish(t *testing.T, token, agentID string, force bool, status int) *testkit.Response {
	t.Helper()
	body := map[string]any{}
	if force {
		body["force"] = true
	}
	r := e.Do("POST", "/api/v1/agents/"+agentID+"/publish", token, body)
	testkit.Expect(t, r, status)
	return r
}

// resultOf returns the result of the test named name in a run.
func resultOf(t *testing.T, run map[string]any, name string) map[string]any {
	t.Helper()
	for _, r := range run["results"].([]any) {
		if m := r.(map[string]any); m["name"] == name {
			return m
		}
	}
	t.Fatalf("the run has no result for %q", name)
	return nil
}

// verdicts returns, for the first repeat of a result, each criterion's type and
// whether it passed: "says:true".
func verdicts(result map[string]any) []string {
	rep := result["repeats"].([]any)[0].(map[string]any)
	var out []string
	for _, v := range rep["criteria"].([]any) {
		m := v.(map[string]any)
		out = append(out, m["criterion"].(map[string]any)["type"].(string)+":"+map[bool]string{true: "true", false: "false"}[m["passed"].(bool)])
	}
	return out
}

func joined(s []string) string { return strings.Join(s, " ") }
