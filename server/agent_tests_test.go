package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/cli"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/llmtest"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/service"
	"github.com/voiceapi/voiceapi/validate"
	"github.com/voiceapi/voiceapi/webhook"
)

// everyCriterion are criteria of each type that the booking conversation ("A table for
// two", "I'm a vip", "bye") meets, and their opposites, which it does not.
var (
	everyCriterionMet = []map[string]any{
		{"type": "tool_called", "name": "book", "arguments": map[string]any{"people": 2}},
		{"type": "tool_not_called", "name": "handoff"},
		{"type": "says", "pattern": `(?i)\bbooked\b`},
		{"type": "not_says", "pattern": `(?i)sorry`},
		{"type": "variable_equals", "name": "vip", "value": true},
		{"type": "ends_with", "reason": "agent_ended"},
		{"type": "max_latency_ms", "value": 60000},
		{"type": "judge", "criterion": `The agent says "goodbye" at the end.`},
	}
	everyCriterionUnmet = []map[string]any{
		{"type": "tool_called", "name": "handoff"},
		{"type": "tool_not_called", "name": "book"},
		{"type": "says", "pattern": `dessert`},
		{"type": "not_says", "pattern": `booked`},
		{"type": "variable_equals", "name": "vip", "value": false},
		{"type": "ends_with", "reason": "transferred"},
		{"type": "max_latency_ms", "value": 20},
		{"type": "judge", "criterion": `The agent offers "dessert".`},
	}
)

// TestAgentTestRunEveryCriterion runs, through the API and the job runner, a test whose
// eight criteria (one of each type) all hold and one whose eight all fail, on the same
// conversation, and a simulated caller's test; it reads each verdict, its evidence, the
// transcripts, usage and latencies, the run's revision, summary and job; and proves the
// custom function was answered by its mock (its endpoint, allowed to be reached, never
// was).
func TestAgentTestRunEveryCriterion(t *testing.T) {
	var hits atomic.Int32
	endpoint := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	t.Cleanup(endpoint.Close)
	e := newTestsEnv(t)
	e.fixture.Agent[len(e.fixture.Agent)-1].Reply.Delay = 40 * time.Millisecond // "bye" answers slowly
	agent := e.bookingAgent(t, "Trattoria")
	e.pointFunctionAt(t, agent, endpoint.URL)
	met := e.createEveryCriterionTests(t, agent)

	run := e.run(t, agent, nil)
	draft := e.gate(t, agent)["revision"]
	if run["status"] != data.TestFailed || run["revision"] != draft || run["agent_version"] != nil {
		t.Fatalf("run: status %v, revision %v (the draft's %v), version %v", run["status"], run["revision"], draft, run["agent_version"])
	}
	summary := run["summary"].(map[string]any)
	if summary["tests"] != 3.0 || summary["passed"] != 2.0 || summary["failed"] != 1.0 || summary["error"] != 0.0 || summary["cases"] != 4.0 || summary["done"] != 4.0 {
		t.Errorf("summary: %v", summary)
	}
	metResult := checkEveryCriterionVerdicts(t, run, met)
	checkMetRepeat(t, metResult["repeats"].([]any)[0].(map[string]any))
	simResult := resultOf(t, run, "a simulated regular")
	if simResult["status"] != data.TestPassed || len(simResult["repeats"].([]any)) != 2 || simResult["pass_rate"] != 1.0 {
		t.Errorf("simulated: %v", simResult)
	}
	if hits.Load() != 0 {
		t.Errorf("the custom function's endpoint was asked %d times: a test must answer from its mock", hits.Load())
	}
	// The run's job is readable and succeeded, with its progress. The run's end is
	// committed by the job's handler, the job's success by the runner once the handler
	// has returned: the job may still read running here, so it is waited for.
	waitJob(t, e.Server, e.tok, run["job_id"].(string), data.JobSucceeded)
	job := e.Do("GET", "/api/v1/jobs/"+run["job_id"].(string), e.tok, nil)
	testkit.Expect(t, job, 200)
	if job.Data()["status"] != data.JobSucceeded || job.Data()["kind"] != "agent.test_run" || job.Data()["agent_id"] != agent {
		t.Errorf("job: %s", job.Body)
	}
	// The list shows runs without results.
	list := e.Do("GET", "/api/v1/agents/"+agent+"/test-runs", e.tok, nil)
	testkit.Expect(t, list, 200)
	if l := list.List(); len(l) != 1 || l[0].(map[string]any)["results"] != nil {
		t.Errorf("runs list: %s", list.Body)
	}
}

// pointFunctionAt points the agent's custom function at endpoint, a server this one may
// reach (a real request would arrive).
func (e *testsEnv) pointFunctionAt(t *testing.T, agent, endpoint string) {
	t.Helper()
	r := e.Do("GET", "/api/v1/agents/"+agent, e.tok, nil)
	tools := r.Data()["llm_config"].(map[string]any)["tools"].([]any)
	tools[0].(map[string]any)["api_endpoint"] = endpoint + "/book"
	e.Svc.Conversations.Configure(cli.ConversationOptions(cli.LLMSettings{AllowURLPrefixes: []string{e.stand.URL + "/", endpoint + "/"}}))
	testkit.Expect(t, e.Do("PUT", "/api/v1/agents/"+agent, e.tok, map[string]any{"llm_config": map[string]any{"tools": tools}}), 200)
}

// createEveryCriterionTests creates a scripted test with every criterion met, one with
// every criterion unmet, and a simulated caller repeated twice; it returns the first.
func (e *testsEnv) createEveryCriterionTests(t *testing.T, agent string) map[string]any {
	t.Helper()
	script := []string{"A table for two, please", "I'm a vip", "Thanks, bye"}
	met := e.createTest(t, agent, scripted("every criterion met", script, everyCriterionMet...))
	e.createTest(t, agent, scripted("every criterion unmet", script, everyCriterionUnmet...))
	sim := scripted("a simulated regular", nil, map[string]any{"type": "tool_called", "name": "book"},
		map[string]any{"type": "ends_with", "reason": "agent_ended"})
	sim["user"], sim["repeat"] = map[string]any{"persona": "A hungry regular", "goal": "Book a table"}, 2
	e.createTest(t, agent, sim)
	return met
}

// checkEveryCriterionVerdicts checks each criterion's verdict in the met and unmet tests'
// results, their statuses and the met one's identity; it returns the met one's result.
func checkEveryCriterionVerdicts(t *testing.T, run, met map[string]any) map[string]any {
	t.Helper()
	wantMet := "tool_called:true tool_not_called:true says:true not_says:true variable_equals:true ends_with:true max_latency_ms:true judge:true"
	wantUnmet := "tool_called:false tool_not_called:false says:false not_says:false variable_equals:false ends_with:false max_latency_ms:false judge:false"
	metResult, unmetResult := resultOf(t, run, "every criterion met"), resultOf(t, run, "every criterion unmet")
	if got := joined(verdicts(metResult)); got != wantMet {
		t.Errorf("met:\n got %s\nwant %s", got, wantMet)
	}
	if got := joined(verdicts(unmetResult)); got != wantUnmet {
		t.Errorf("unmet:\n got %s\nwant %s", got, wantUnmet)
	}
	if metResult["status"] != data.TestPassed || metResult["pass_rate"] != 1.0 || unmetResult["status"] != data.TestFailed || unmetResult["pass_rate"] != 0.0 {
		t.Errorf("test statuses: met %v %v, unmet %v %v", metResult["status"], metResult["pass_rate"], unmetResult["status"], unmetResult["pass_rate"])
	}
	if metResult["test_id"] != met["id"] || metResult["required"] != false || metResult["test_revision"] == "" {
		t.Errorf("result identity: %v", metResult)
	}
	return metResult
}

// checkMetRepeat checks the met test's repeat: each verdict's evidence points at the
// item it rests on and gives a reason; its end, variables, usage and latencies.
func checkMetRepeat(t *testing.T, rep map[string]any) {
	t.Helper()
	transcript := rep["transcript"].([]any)
	for i, v := range rep["criteria"].([]any) {
		ev, _ := v.(map[string]any)["evidence"].(map[string]any)
		typ := everyCriterionMet[i]["type"]
		switch typ {
		case "tool_not_called", "not_says":
			if ev != nil {
				t.Errorf("%s: evidence %v, want none", typ, ev)
			}
		default:
			if ev == nil || int(ev["item"].(float64)) >= len(transcript) || ev["content"] != transcript[int(ev["item"].(float64))].(map[string]any)["content"] {
				t.Errorf("%s: evidence %v does not point into the transcript", typ, ev)
			}
		}
		if reason := v.(map[string]any)["reason"].(string); reason == "" {
			t.Errorf("%s: no reason", typ)
		}
	}
	if reason := rep["criteria"].([]any)[7].(map[string]any)["reason"]; !strings.Contains(reason.(string), `mentions "goodbye"`) {
		t.Errorf("the judge's reason: %v", reason)
	}
	if rep["end_reason"] != "agent_ended" || rep["variables"].(map[string]any)["booking_id"] != "B7" || rep["status"] != data.TestPassed {
		t.Errorf("repeat: end %v, variables %v, status %v", rep["end_reason"], rep["variables"], rep["status"])
	}
	if u := rep["usage"].(map[string]any); u["input_tokens"].(float64) == 0 {
		t.Errorf("usage: %v", u)
	}
	if l := rep["latency_ms"].(map[string]any); l["total_max"].(float64) < 40 {
		t.Errorf("latencies: %v, want the slow reply's 40 ms in total_max", l)
	}
}

// TestAgentTestMissingMock: a custom function a test gives no mock is refused to the
// model ("no mock"), never called.
func TestAgentTestMissingMock(t *testing.T) {
	e := newTestsEnv(t)
	agent := e.bookingAgent(t, "Trattoria")
	body := scripted("no mock", []string{"A table for two"}, map[string]any{"type": "tool_called", "name": "book"})
	delete(body, "mocks")
	e.createTest(t, agent, body)
	run := e.run(t, agent, nil)
	res := resultOf(t, run, "no mock")
	rep := res["repeats"].([]any)[0].(map[string]any)
	var tool map[string]any
	for _, it := range rep["transcript"].([]any) {
		if m := it.(map[string]any); m["role"] == "tool" {
			tool = m
		}
	}
	if tool == nil || !strings.Contains(tool["content"].(string), "has no mock") || tool["tool_call"].(map[string]any)["error"] != true {
		t.Fatalf("the function's item: %v", tool)
	}
	if res["status"] != data.TestFailed {
		t.Errorf("a call refused for want of a mock passed tool_called: %v", verdicts(res))
	}
}

// TestTestRunOfAVersion: a run of version N runs that version's configuration, whatever
// the draft says now; its revision is null. An unknown version is a 422 naming version.
func TestTestRunOfAVersion(t *testing.T) {
	e := newTestsEnv(t)
	agent := e.bookingAgent(t, "Trattoria")
	e.createTest(t, agent, scripted("greets", []string{"hello"}, map[string]any{"type": "says", "pattern": "Trattoria"}))
	e.publish(t, e.tok, agent, false, 204)
	testkit.Expect(t, e.Do("PUT", "/api/v1/agents/"+agent, e.tok, map[string]any{"prompt_config": map[string]any{"welcome_message": "Hi, Pizzeria here."}}), 200)
	v1 := e.run(t, agent, map[string]any{"version": 1})
	if v1["status"] != data.TestPassed || v1["agent_version"] != 1.0 || v1["revision"] != nil {
		t.Errorf("version 1: %v %v %v", v1["status"], v1["agent_version"], v1["revision"])
	}
	if draft := e.run(t, agent, map[string]any{"version": "draft"}); draft["status"] != data.TestFailed {
		t.Errorf("the draft greets otherwise and fails: %v", draft["status"])
	}
	testkit.ExpectFields(t, e.Do("POST", "/api/v1/agents/"+agent+"/test-runs", e.tok, map[string]any{"version": 9}), "version")
	testkit.ExpectFields(t, e.Do("POST", "/api/v1/agents/"+agent+"/test-runs", e.tok, map[string]any{"version": "live"}), "version")
	testkit.ExpectFields(t, e.Do("POST", "/api/v1/agents/"+agent+"/test-runs", e.tok, map[string]any{"test_ids": []string{"tst_01JD6ZZZZZZZZZZZZZZZZZZZZZ"}}), "test_ids.0")
	empty := e.bookingAgent(t, "Empty")
	testkit.Expect(t, e.Do("POST", "/api/v1/agents/"+empty+"/test-runs", e.tok, map[string]any{}), 409)
	// The request's fault before the agent's state: no such version, whatever its tests.
	testkit.ExpectFields(t, e.Do("POST", "/api/v1/agents/"+empty+"/test-runs", e.tok, map[string]any{"version": 9}), "version")
}

// TestTestRunProviderError: a provider refusing (401) marks the repeat error with the
// provider's message (no key), the test and the run error, the job succeeded.
func TestTestRunProviderError(t *testing.T) {
	e := newTestsEnv(t)
	agent := e.bookingAgent(t, "Trattoria")
	e.createTest(t, agent, scripted("greets", []string{"hello"}, map[string]any{"type": "says", "pattern": "."}))
	e.stand.Respond(func(llmtest.Request) llmtest.Reply { return llmtest.Fail(401, "invalid api key") })
	run := e.run(t, agent, nil)
	res := resultOf(t, run, "greets")
	rep := res["repeats"].([]any)[0].(map[string]any)
	msg, _ := rep["error"].(string)
	if run["status"] != data.TestError || res["status"] != data.TestError || rep["status"] != data.TestError ||
		!strings.Contains(msg, "401") || !strings.Contains(msg, "invalid api key") {
		t.Fatalf("run %v, test %v, repeat %v: %q", run["status"], res["status"], rep["status"], msg)
	}
	if s := run["summary"].(map[string]any); s["error"] != 1.0 {
		t.Errorf("summary: %v", s)
	}
}

// TestAgentTestsRefuseBadInput: each rule of a test is a 422 naming its field, all at
// once, and nothing is stored; an update keeps the test as it was when it fails.
func TestAgentTestsRefuseBadInput(t *testing.T) {
	e := newTestsEnv(t)
	agent := e.bookingAgent(t, "Trattoria")
	path := "/api/v1/agents/" + agent + "/tests"
	bad := map[string]any{"name": "bad", "user": map[string]any{"script": []string{"hi"}}, "max_turns": 51, "repeat": 0,
		"mocks": map[string]any{"fly": map[string]any{"status": 200}, "hang_up": map[string]any{"status": 200}},
		"criteria": []map[string]any{{"type": "says", "pattern": "(unclosed"}, {"type": "tool_called", "name": "teleport"},
			{"type": "not_says", "pattern": "x", "name": "book"}}}
	testkit.ExpectFields(t, e.Do("POST", path, e.tok, bad), "max_turns", "repeat", "mocks.fly", "mocks.hang_up",
		"criteria.0.pattern", "criteria.1.name", "criteria.2.name")
	testkit.ExpectFields(t, e.Do("POST", path, e.tok, map[string]any{"name": "x", "user": map[string]any{"script": []string{"hi"}}, "criteria": []any{}}), "criteria")
	testkit.ExpectFields(t, e.Do("POST", path, e.tok, map[string]any{"name": "x", "user": map[string]any{"script": []string{"hi"}},
		"criteria": []map[string]any{{"type": "says", "pattern": "a"}}, "temprature": 1}), "temprature")
	testkit.ExpectFields(t, e.Do("POST", path, e.tok, map[string]any{"name": "x", "user": map[string]any{}, "criteria": []map[string]any{{"type": "says", "pattern": "a"}}, "max_turns": 0}),
		"user", "max_turns")
	if l := e.Do("GET", path, e.tok, nil).List(); len(l) != 0 {
		t.Fatalf("a refused test was stored: %v", l)
	}
	good := e.createTest(t, agent, scripted("good", []string{"hi"}, map[string]any{"type": "says", "pattern": "a"}))
	testkit.ExpectFields(t, e.Do("POST", path, e.tok, scripted("good", []string{"hi"}, map[string]any{"type": "says", "pattern": "a"})), "name")
	one := path + "/" + good["id"].(string)
	testkit.ExpectFields(t, e.Do("PUT", one, e.tok, map[string]any{"repeat": 11, "criteria": []map[string]any{{"type": "judge"}}}), "repeat", "criteria.0.criterion")
	after := e.Do("GET", one, e.tok, nil)
	if after.Data()["repeat"] != 1.0 || after.Data()["updated_at"] != good["updated_at"] {
		t.Errorf("a refused update changed the test: %s", after.Body)
	}
	testkit.Expect(t, e.Do("PUT", one, e.tok, map[string]any{"repeat": 2}, "If-Match", `"stale"`), 412)
	upd := e.Do("PUT", one, e.tok, map[string]any{"repeat": 2, "required_for_publish": true}, "If-Match", after.Header.Get("ETag"))
	testkit.Expect(t, upd, 200)
	if upd.Data()["repeat"] != 2.0 || upd.Data()["required_for_publish"] != true || upd.Data()["name"] != "good" {
		t.Errorf("update: %s", upd.Body)
	}
	testkit.Expect(t, e.Do("DELETE", one, e.tok, nil), 204)
	testkit.Expect(t, e.Do("GET", one, e.tok, nil), 404)
}

// TestAgentTestsOnlyWhereTheAgentIs: another workspace, or a member limited to other
// agents, finds neither the tests nor the runs; a member reads but does not write.
func TestAgentTestsOnlyWhereTheAgentIs(t *testing.T) {
	e := newTestsEnv(t)
	agent := e.bookingAgent(t, "Trattoria")
	other := e.bookingAgent(t, "Other")
	test := e.createTest(t, agent, scripted("greets", []string{"hello"}, map[string]any{"type": "says", "pattern": "."}))
	run := e.run(t, agent, nil)
	stranger := e.NewUser("stranger@example.com", false)
	limited := e.Member("limited@example.com", e.Owner.WorkspaceID, data.RoleDeveloper, nil, []string{other})
	member := e.Member("member@example.com", e.Owner.WorkspaceID, data.RoleMember, nil, nil)
	for _, p := range []string{"/tests", "/tests/" + test["id"].(string), "/test-runs", "/test-runs/" + run["id"].(string), "/publish-gate"} {
		for _, tok := range []string{stranger.Token, limited.Token} {
			testkit.Expect(t, e.Do("GET", "/api/v1/agents/"+agent+p, tok, nil), 404)
		}
		testkit.Expect(t, e.Do("GET", "/api/v1/agents/"+agent+p, member.Token, nil), 200)
	}
	testkit.Expect(t, e.Do("POST", "/api/v1/agents/"+agent+"/test-runs", limited.Token, map[string]any{}), 404)
	testkit.Expect(t, e.Do("POST", "/api/v1/agents/"+agent+"/test-runs", member.Token, map[string]any{}), 403)
	testkit.Expect(t, e.Do("DELETE", "/api/v1/agents/"+agent+"/tests/"+test["id"].(string), member.Token, nil), 403)
	// A test id of another agent is not found under this one.
	testkit.Expect(t, e.Do("GET", "/api/v1/agents/"+other+"/tests/"+test["id"].(string), e.tok, nil), 404)
}

// TestAgentTestFromCall makes a scripted test of a real call: its caller turns in order,
// tool_called for each of the agent's tools the call used (once each), and it runs.
func TestAgentTestFromCall(t *testing.T) {
	e := newTestsEnv(t)
	agent := e.bookingAgent(t, "Trattoria")
	call := e.Do("POST", "/api/v1/calls", e.tok, map[string]any{"agent_id": agent, "direction": "web", "status": "ended",
		"variables": map[string]any{"shop": "Trattoria", "nested": map[string]any{"x": 1}},
		"transcript": []map[string]any{
			{"role": "agent", "content": "Hi, Trattoria here.", "start_ms": 0},
			{"role": "user", "content": "A table for two, please", "start_ms": 1000},
			{"role": "tool", "content": `book({"people":2}) → {"status":200}`, "start_ms": 1500},
			{"role": "tool", "content": `book({"people":3}) → {"status":200}`, "start_ms": 1600},
			{"role": "tool", "content": `teleport({}) → {}`, "start_ms": 1700},
			{"role": "user", "content": "Thanks, bye", "start_ms": 3000},
			{"role": "tool", "content": `hang_up({}) → {"ended":true}`, "start_ms": 3500},
		}})
	testkit.Expect(t, call, 201)
	callID := call.Data()["id"].(string)
	r := e.Do("POST", "/api/v1/agents/"+agent+"/tests/from-call/"+callID, e.tok, nil)
	testkit.Expect(t, r, 201)
	d := r.Data()
	script := d["user"].(map[string]any)["script"].([]any)
	var names []string
	for _, c := range d["criteria"].([]any) {
		m := c.(map[string]any)
		names = append(names, m["type"].(string)+":"+m["name"].(string))
	}
	if len(script) != 2 || script[0] != "A table for two, please" || script[1] != "Thanks, bye" ||
		joined(names) != "tool_called:book tool_called:hang_up" || d["variables"].(map[string]any)["shop"] != "Trattoria" {
		t.Fatalf("test from the call: %s", r.Body)
	}
	// A second one gets a name of its own; a call of another agent is not found.
	if again := e.Do("POST", "/api/v1/agents/"+agent+"/tests/from-call/"+callID, e.tok, nil); again.Data()["name"] == d["name"] {
		t.Errorf("two tests of one call share a name: %s", again.Body)
	}
	other := e.bookingAgent(t, "Other")
	testkit.Expect(t, e.Do("POST", "/api/v1/agents/"+other+"/tests/from-call/"+callID, e.tok, nil), 404)
	run := e.run(t, agent, map[string]any{"test_ids": []string{d["id"].(string)}})
	// The test has no mock for book, so the call is refused to the model and fails
	// tool_called book; hang_up holds.
	if res := resultOf(t, run, d["name"].(string)); res["status"] != data.TestFailed || joined(verdicts(res)) != "tool_called:false tool_called:true" {
		t.Errorf("the test from the call ran: %v %v", res["status"], verdicts(res))
	}
}

// TestSimulationSetting: owners and admins set the workspace's simulation model; its key
// is sealed and shown masked, a masked key sent back keeps it; simulated callers and
// judges then ask that model while the agent asks its own.
func TestSimulationSetting(t *testing.T) {
	e := newTestsEnv(t)
	sim := llmtest.New(t, data.LLMGroq)
	simFixture := bookingFixture()
	sim.Respond(simFixture.Respond)
	settings := cli.LLMSettings{BaseURLs: sim.Options().BaseURLs, AllowURLPrefixes: []string{e.stand.URL + "/", sim.URL + "/"}}
	e.Svc.Conversations.Configure(cli.ConversationOptions(settings))
	ws := "/api/v1/workspaces/" + e.Owner.WorkspaceID
	body := map[string]any{"simulation": map[string]any{"provider": "groq", "model": sim.Model, "api_key": llmtest.DefaultAPIKey, "temperature": 0}}
	r := e.Do("PUT", ws, e.tok, body)
	testkit.Expect(t, r, 200)
	masked := r.Data()["simulation"].(map[string]any)["api_key"]
	if masked != data.MaskSecret(llmtest.DefaultAPIKey) || strings.Contains(string(r.Body), llmtest.DefaultAPIKey) {
		t.Fatalf("the key is not masked: %s", r.Body)
	}
	body["simulation"].(map[string]any)["api_key"] = masked
	testkit.Expect(t, e.Do("PUT", ws, e.tok, body), 200)
	body["simulation"].(map[string]any)["api_key"] = "****0000"
	testkit.ExpectFields(t, e.Do("PUT", ws, e.tok, body), "simulation.api_key")
	testkit.ExpectFields(t, e.Do("PUT", ws, e.tok, map[string]any{"simulation": map[string]any{"provider": "openai"}}), "simulation.provider", "simulation.model")
	dev := e.Member("dev@example.com", e.Owner.WorkspaceID, data.RoleDeveloper, nil, nil)
	testkit.Expect(t, e.Do("PUT", ws, dev.Token, map[string]any{"simulation": nil}), 403)
	if got := e.Do("GET", ws, e.tok, nil).Data()["simulation"].(map[string]any); got["api_key"] != masked || got["provider"] != "groq" {
		t.Fatalf("the setting after refused changes: %v", got)
	}

	agent := e.bookingAgent(t, "Trattoria")
	test := scripted("simulated", nil, map[string]any{"type": "judge", "criterion": `The agent says "booked".`})
	test["user"] = map[string]any{"persona": "A hungry regular", "goal": "Book a table"}
	e.createTest(t, agent, test)
	run := e.run(t, agent, nil)
	if run["status"] != data.TestPassed {
		t.Fatalf("run: %v", resultOf(t, run, "simulated"))
	}
	var callerOnAgentModel, agentOnSim int
	for _, req := range e.stand.Requests() {
		if strings.Contains(req.System, "playing a caller") || strings.Contains(req.System, "judging a test") {
			callerOnAgentModel++
		}
	}
	for _, req := range sim.Requests() {
		if strings.Contains(req.System, "You take bookings") {
			agentOnSim++
		}
	}
	if callerOnAgentModel != 0 || agentOnSim != 0 || len(sim.Requests()) < 3 {
		t.Errorf("the agent's model played %d caller/judge parts, the simulation model %d agent parts, and had %d requests",
			callerOnAgentModel, agentOnSim, len(sim.Requests()))
	}
	// null returns to each agent's own model.
	r = e.Do("PUT", ws, e.tok, map[string]any{"simulation": nil})
	testkit.Expect(t, r, 200)
	if r.Data()["simulation"] != nil {
		t.Errorf("simulation after null: %v", r.Data()["simulation"])
	}
}

// TestTestRunEvents: a run tells its course on the audit log and the event stream
// (test_run.queued, started, one progress a case, completed), test_run.completed goes to
// a webhook subscribed to it, and a test's writes are agent_test.* events.
func TestTestRunEvents(t *testing.T) {
	e := newTestsEnv(t)
	rc := newReceiver(t, nil)
	d := webhook.NewDispatcher(cli.NewServices(e.Store).Deliveries, webhook.Config{AllowPrivate: true, Workers: 2, Timeout: 30 * time.Second, // a hang guard: a post cut short would be posted again
		Schedule: []time.Duration{10 * time.Millisecond}})
	e.Store.SetEventHook(d.Wake)
	d.Start(context.Background())
	t.Cleanup(func() { e.Store.SetEventHook(nil); d.Stop(context.Background()) })
	hook := e.Do("POST", "/api/v1/webhooks", e.tok, map[string]any{"url": rc.srv.URL + "/hook", "events": []string{"test_run.completed"}})
	testkit.Expect(t, hook, 201)
	rc.setSecret(hook.JSON()["secret"].(string))
	agent := e.bookingAgent(t, "Trattoria")
	test := scripted("greets", []string{"hello"}, map[string]any{"type": "says", "pattern": "."})
	test["repeat"] = 3
	e.createTest(t, agent, test)
	run := e.run(t, agent, nil)
	count := map[string]int{}
	r := e.Do("GET", "/api/v1/audit-log?per_page=100", e.tok, nil)
	testkit.Expect(t, r, 200)
	for _, ev := range r.List() {
		m := ev.(map[string]any)
		typ := m["type"].(string)
		count[typ]++
		if strings.HasPrefix(typ, "test_run.") && (m["data"].(map[string]any)["id"] != run["id"] || m["data"].(map[string]any)["agent_id"] != agent) {
			t.Errorf("%s names another run: %v", typ, m["data"])
		}
		if typ == "test_run.completed" {
			d := m["data"].(map[string]any)
			if d["status"] != data.TestPassed || len(d["results"].([]any)) != 1 {
				t.Errorf("completed: %v", d)
			}
		}
	}
	if count["test_run.queued"] != 1 || count["test_run.started"] != 1 || count["test_run.progress"] != 3 || count["test_run.completed"] != 1 || count["agent_test.created"] != 1 {
		t.Errorf("events: %v", count)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		got, _, bad := rc.snapshot()
		if len(got) == 1 && got[0].Type == "test_run.completed" && len(bad) == 0 {
			if d := got[0].Body["data"].(map[string]any); d["id"] != run["id"] || d["status"] != data.TestPassed {
				t.Errorf("the webhook's test_run.completed: %v", d)
			}
			break
		}
		if time.Now().After(deadline) || len(got) > 1 || len(bad) > 0 {
			t.Fatalf("the webhook received %+v (signature faults %v); want one test_run.completed", got, bad)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestTestRunRetriesTransientFailures drives the job runner on its own clock: a
// provider's 429 leaves the case unrecorded and the job queued again after its backoff,
// with the error; the next attempt runs the case and the run passes. A provider failing
// transiently on every attempt ends, on the last, as an error result with its message.
func TestTestRunRetriesTransientFailures(t *testing.T) {
	e := newTestsEnvWithoutRunner(t)
	now := time.Date(2030, 1, 1, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	runner := e.Svc.Jobs.NewRunner(service.RunnerOptions{Now: clock, Jitter: func(time.Duration) time.Duration { return 0 }})
	agent := e.bookingAgent(t, "Trattoria")
	e.createTest(t, agent, scripted("greets", []string{"hello"}, map[string]any{"type": "says", "pattern": "Welcome"}))
	start := func() string {
		r := e.Do("POST", "/api/v1/agents/"+agent+"/test-runs", e.tok, map[string]any{})
		testkit.Expect(t, r, 202)
		return r.Data()["id"].(string)
	}
	get := func(id string) (map[string]any, map[string]any) {
		run := e.Do("GET", "/api/v1/agents/"+agent+"/test-runs/"+id, e.tok, nil).Data()
		return run, e.Do("GET", "/api/v1/jobs/"+run["job_id"].(string), e.tok, nil).Data()
	}
	due := func() {
		if _, err := runner.RunDue(context.Background()); err != nil {
			t.Fatal(err)
		}
	}

	id := start()
	e.stand.Queue(llmtest.Fail(429, "rate limited"))
	due()
	run, job := get(id)
	if run["status"] != data.TestRunning || job["status"] != data.JobQueued || job["attempt"] != 1.0 || !strings.Contains(job["last_error"].(string), "429") ||
		run["summary"].(map[string]any)["done"] != 0.0 {
		t.Fatalf("after a 429: run %v, job %v", run["status"], job)
	}
	due() // not yet due: nothing runs
	if _, job := get(id); job["attempt"] != 1.0 {
		t.Fatalf("the retry ran before its backoff: %v", job)
	}
	now = now.Add(6 * time.Second)
	due()
	run, job = get(id)
	if run["status"] != data.TestPassed || job["status"] != data.JobSucceeded || job["attempt"] != 2.0 {
		t.Fatalf("after the retry: run %v, job %v", run["status"], job)
	}

	id = start()
	e.stand.Respond(func(llmtest.Request) llmtest.Reply { return llmtest.Fail(503, "overloaded") })
	for i := 0; i < 4; i++ {
		due()
		now = now.Add(10 * time.Minute)
	}
	run, job = get(id)
	rep := resultOf(t, run, "greets")["repeats"].([]any)[0].(map[string]any)
	if run["status"] != data.TestError || job["status"] != data.JobSucceeded || job["attempt"] != 4.0 || !strings.Contains(rep["error"].(string), "overloaded") {
		t.Fatalf("after the last attempt: run %v, job %v, repeat %v", run["status"], job, rep)
	}
}

// TestToolCalledArgumentsExact: a tool_called criterion's numbers travel from the request
// through the store to the run as written, and are compared exactly: 2.0 matches the
// model's 2, 2.0000000000000001 (the same float64) does not; a number no 64-bit float
// holds is refused when the test is written.
func TestToolCalledArgumentsExact(t *testing.T) {
	e := newTestsEnv(t)
	agent := e.bookingAgent(t, "Trattoria")
	crit := func(n string) map[string]any {
		return map[string]any{"type": "tool_called", "name": "book", "arguments": map[string]any{"people": json.Number(n)}}
	}
	test := e.createTest(t, agent, scripted("exact", []string{"A table for two, please", "Thanks, bye"}, crit("2.0"), crit("2.0000000000000001")))
	stored := e.Do("GET", "/api/v1/agents/"+agent+"/tests/"+test["id"].(string), e.tok, nil)
	testkit.Expect(t, stored, 200)
	if !strings.Contains(string(stored.Body), `"people":2.0000000000000001`) {
		t.Errorf("the stored test does not keep the number as written: %s", stored.Body)
	}
	run := e.run(t, agent, nil)
	if got := joined(verdicts(resultOf(t, run, "exact"))); got != "tool_called:true tool_called:false" {
		t.Errorf("verdicts %s, want tool_called:true tool_called:false", got)
	}
	r := e.Do("POST", "/api/v1/agents/"+agent+"/tests", e.tok, scripted("too big", []string{"hi"}, crit("1e999")))
	testkit.ExpectFields(t, r, "criteria.0.arguments")
}

// TestPendingTestRunsBound: every run pays the models for each of its cases, so an agent
// has at most validate.MaxPendingTestRuns runs queued or running; one more is 409
// conflict and stores no run, while another agent's run is not held up.
func TestPendingTestRunsBound(t *testing.T) {
	e := newTestsEnvWithoutRunner(t)
	agent := e.bookingAgent(t, "Trattoria")
	e.createTest(t, agent, scripted("greets", []string{"hello"}, map[string]any{"type": "says", "pattern": "Trattoria"}))
	runs := "/api/v1/agents/" + agent + "/test-runs"
	for i := range validate.MaxPendingTestRuns {
		if r := e.Do("POST", runs, e.tok, map[string]any{}); r.Status != 202 {
			t.Fatalf("run %d of %d: %d %s", i+1, validate.MaxPendingTestRuns, r.Status, r.Body)
		}
	}
	r := e.Do("POST", runs, e.tok, map[string]any{})
	testkit.Expect(t, r, 409)
	if code := r.JSON()["code"]; code != "conflict" {
		t.Errorf("code %v, want conflict", code)
	}
	list := e.Do("GET", runs+"?per_page=100", e.tok, nil)
	testkit.Expect(t, list, 200)
	if n := len(list.List()); n != validate.MaxPendingTestRuns {
		t.Errorf("%d runs stored, want %d", n, validate.MaxPendingTestRuns)
	}
	other := e.bookingAgent(t, "Pizzeria")
	e.createTest(t, other, scripted("greets", []string{"hello"}, map[string]any{"type": "says", "pattern": "Pizzeria"}))
	testkit.Expect(t, e.Do("POST", "/api/v1/agents/"+other+"/test-runs", e.tok, map[string]any{}), 202)
}
