package openapi

import (
	"net/http"
	"reflect"
	"strconv"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/validate"
)

// testRunVersionType is "draft" or a number on the wire (its own JSON).
var testRunVersionType = reflect.TypeFor[data.TestRunVersion]()

// testRunVersionSchema is the schema of data.TestRunVersion.
func testRunVersionSchema() map[string]any {
	return map[string]any{
		"oneOf": []any{
			map[string]any{"type": "string", "enum": []any{data.ConversationDraft}},
			map[string]any{"type": "integer", "minimum": 1},
		},
		"description": `"draft" (the current configuration, the default) or a version number.`,
	}
}

// The statuses a test run, a test and a repeat can have.
var (
	runStatuses    = data.TestRunStatuses
	repeatStatuses = []string{data.TestPassed, data.TestFailed, data.TestError}
)

func init() {
	agentTestRoutes()
	agentTestFields()
	agentTestEvents()
}

// agentTestRoutes documents the routes of tests, runs and the publish gate.
func agentTestRoutes() {
	const tag = "Agent Tests"
	opDocs["GET /api/v1/agents/{agent_id}/tests"] = opDoc{Tag: tag, Summary: "List an agent's tests", Out: data.AgentTest{}, Shape: shapeList}
	opDocs["POST /api/v1/agents/{agent_id}/tests"] = opDoc{Tag: tag, Summary: "Add a test to an agent",
		Description: "A scripted caller (user.script) or a simulated one (user.persona and user.goal, played by the workspace's simulation model), " +
			"variables, max_turns, mocks for custom functions, criteria and required_for_publish (conventions §22). A tool named by a criterion " +
			"or a mock must be one of the agent's draft's tools; a says or not_says pattern must be valid RE2. 409 when the agent has as many " +
			"tests as it may. See docs/testing-agents.md.",
		Body: data.AgentTestCreate{}, BodyRequired: true, Out: data.AgentTest{}, Status: http.StatusCreated, Errors: []int{http.StatusConflict}}
	opDocs["POST /api/v1/agents/{agent_id}/tests/from-call/{call_id}"] = opDoc{Tag: tag, Summary: "Make a scripted test from a call",
		Description: "The call's caller turns become the script, and each of the agent's tools the call used a tool_called criterion. The call " +
			"must be one of the agent's calls that the caller may read (module call_history). 422 on call_id when it has no caller turns.",
		Out: data.AgentTest{}, Status: http.StatusCreated, Errors: []int{http.StatusConflict}}
	opDocs["GET /api/v1/agents/{agent_id}/tests/{test_id}"] = opDoc{Tag: tag, Summary: "Show a test", Out: data.AgentTest{}}
	opDocs["PUT /api/v1/agents/{agent_id}/tests/{test_id}"] = opDoc{Tag: tag, Summary: "Update a test",
		Description: "Each member given replaces the stored one whole; the test as it then stands must meet every rule of a create.",
		Body:        data.AgentTestUpdate{}, Out: data.AgentTest{}}
	opDocs["DELETE /api/v1/agents/{agent_id}/tests/{test_id}"] = opDoc{Tag: tag, Summary: "Delete a test (its results in earlier runs stay)", Shape: shapeNone}
	opDocs["GET /api/v1/agents/{agent_id}/test-runs"] = opDoc{Tag: tag, Summary: "List an agent's test runs, without their results",
		Description: "Newest first. status filters on the status shown: a run whose job ended without ending it reads error, so a page " +
			"filtered on queued or running can come back short (even empty) with a next_cursor. A cursor is bound to its filter: reused " +
			"under another it is 422 on cursor. See docs/testing-agents.md.",
		Query: []queryParam{enumParam("status", "Only runs in this status.", data.TestRunStatuses...)},
		Out:   data.TestRun{}, Shape: shapeList}
	opDocs["POST /api/v1/agents/{agent_id}/test-runs"] = opDoc{Tag: tag, Summary: "Run an agent's tests",
		Description: "202 with the run, queued as a durable background job (conventions §26; its job_id reads with GET /api/v1/jobs/{job_id}) " +
			"in the same transaction. The run is of the draft as it is now (its revision: what of its configuration a test can observe) or of a version, with every test of " +
			"the agent or those test_ids names; each test runs repeat times through the conversation engine. Progress streams as test_run.* " +
			"events; test_run.completed goes to webhooks. 409 when the agent has no tests, or already has " + strconv.Itoa(validate.MaxPendingTestRuns) + " runs queued or running.",
		Body: data.TestRunCreate{}, Out: data.TestRun{}, Status: http.StatusAccepted, Errors: []int{http.StatusConflict}}
	opDocs["GET /api/v1/agents/{agent_id}/test-runs/{run_id}"] = opDoc{Tag: tag, Summary: "Show a test run with its results",
		Description: "Per test: its status and pass rate over its repeats; per repeat: each criterion's verdict with its evidence (the transcript item " +
			"it rests on; a judge's reason), the transcript, the variables at the end, why the conversation ended, usage and latencies.",
		Out: data.TestRun{}}
	opDocs["GET /api/v1/agents/{agent_id}/publish-gate"] = opDoc{Tag: tag, Summary: "What a publish of the draft would meet now",
		Description: "open, or tests_required (a required test has no passing result on the draft's current revision) or tests_failed (one " +
			"failed), with each required test's latest status on that revision: the 409 a publish would get, before asking for it.",
		Out: data.PublishGate{}, Shape: shapeData}
}

// agentTestFields documents the members' rules and the types.
func agentTestFields() {
	fieldRules["AgentTest"] = agentTestRules
	fieldRules["AgentTestCreate"] = agentTestRules
	// An update's members are each optional (each given one replaces the stored one).
	fieldRules["AgentTestUpdate"] = optionalRules(agentTestRules)
	fieldRules["TestUser"] = map[string]fieldRule{
		"script":  {MaxItems: validate.MaxTestMaxTurns, Items: &fieldRule{MinLength: 1, MaxLength: validate.MaxTestTurn}, Description: "The caller's turns, sent in order; at most max_turns. Not with persona and goal."},
		"persona": fieldRule{MaxLength: validate.MaxTestPersona}.with(false, "Who the simulated caller is. With goal, instead of script."),
		"goal":    fieldRule{MaxLength: validate.MaxTestPersona}.with(false, "What the simulated caller wants; it hangs up when it has it."),
	}
	fieldRules["ToolMock"] = map[string]fieldRule{
		"status": between(validate.MinMockStatus, validate.MaxMockStatus).with(true, "The HTTP status the custom function answers."),
		"body":   {Description: "The answer: a string as is, any other JSON value encoded; at most 16 KiB."},
	}
	fieldRules["Criterion"] = map[string]fieldRule{
		"type":      oneOf(data.CriterionTypes...).with(true, "Which members it takes: tool_called {name, arguments?}, tool_not_called {name}, says and not_says {pattern}, variable_equals {name, value}, ends_with {reason}, max_latency_ms {value}, judge {criterion}."),
		"name":      maxLen(validate.MaxIdentifier).with(false, "A tool of the agent (tool_called, tool_not_called), or a variable (variable_equals)."),
		"arguments": {Description: "tool_called: members the call's arguments must hold (a subset)."},
		"pattern":   fieldRule{MaxLength: validate.MaxTestPattern}.with(false, "RE2 over the agent's turns (says: one matches; not_says: none does)."),
		"value":     {Description: "variable_equals: the value (string, number or boolean); max_latency_ms: the most milliseconds any reply may take (1 to 600000)."},
		"reason":    oneOf(data.TestEndReasons...).with(false, "ends_with: why the conversation must end."),
		"criterion": fieldRule{MaxLength: validate.MaxTestJudgeCriterion}.with(false, "judge: what the judge model decides from the transcript."),
	}
	fieldRules["TestRunCreate"] = map[string]fieldRule{
		"test_ids": {MinItems: 1, MaxItems: validate.MaxTestRunTests, UniqueItems: true, Description: "The tests to run, in this order; every test of the agent when absent."},
	}
	fieldRules["TestRun"] = map[string]fieldRule{
		"status":        oneOf(runStatuses...),
		"agent_version": {Description: "The version run; null for the draft."},
		"revision":      {Description: "The draft's revision the run ran on: a keyed hash of what of its configuration a test can observe (a publish, a restore of the same configuration, a rename, a voice leave it as it is), \"c1-\" and 24 hex digits; a run stored before revisions existed holds the agent's ETag then. Null for a version. The publish gate counts runs of the draft's current revision."},
		"results":       {Description: "Only on a single run: each test's result, in the order of test_ids."},
		"error":         {Description: "Why the run ended in error as a whole (its job gave up); null otherwise."},
	}
	fieldRules["TestResult"] = map[string]fieldRule{
		"status":        oneOf(runStatuses...).with(false, "passed when every repeat passed; error when one could not be judged; failed otherwise."),
		"pass_rate":     between(0, 1).with(false, "The share of its ended repeats that passed."),
		"test_revision": {Description: "The test's ETag as run: a result counts for the publish gate only while the test is unchanged."},
	}
	fieldRules["TestCaseResult"] = map[string]fieldRule{
		"status": oneOf(repeatStatuses...),
		"end_reason": fieldRule{Enum: append([]string{""}, data.TestEndReasons...)}.with(false,
			"Why the conversation ended; empty when the repeat errored before it began (a variable the configuration uses and the test does not give)."),
		"error": {Description: "Why the repeat could not be judged (a provider's failure, a missing variable)."},
	}
	fieldRules["TestEvidence"] = map[string]fieldRule{"item": {Description: "The index of the transcript item the verdict rests on."}}
	fieldRules["PublishGate"] = map[string]fieldRule{"state": oneOf(data.GateOpen, data.GateTestsRequired, data.GateTestsFailed),
		"revision": {Description: "The draft's current revision (a test run's revision): the one a run must have passed. Unlike the agent's ETag it moves only when something a test can observe changes."}}
	fieldRules["GateTest"] = map[string]fieldRule{"status": oneOf(append(append([]string{}, repeatStatuses...), data.GateNotRun)...)}
	fieldRules["SimulationModel"] = simulationRules()

	typeDocs["AgentTest"] = "A test of an agent (conventions §22): a caller, the conversation's variables and tool mocks, and the criteria its conversation must meet."
	typeDocs["TestRun"] = "A run of an agent's tests on its draft (a revision) or a version."
	typeDocs["TestCaseResult"] = "One repeat of a test: its conversation, each criterion's verdict, usage and latencies."
	typeDocs["PublishGate"] = "What a publish of the agent's draft would meet now."
	typeDocs["SimulationModel"] = "The workspace's model of simulated callers and judges: llm_config's provider members; null means each agent's own model."
}

// agentTestEvents documents the events' data.
func agentTestEvents() {
	eventPayloads[data.EventAgentTestCreated] = data.AgentTest{}
	eventPayloads[data.EventAgentTestUpdated] = data.AgentTest{}
	eventPayloads[data.EventAgentTestDeleted] = data.AgentTest{}
	eventPayloads[data.EventTestRunQueued] = data.TestRun{}
	eventPayloads[data.EventTestRunStarted] = data.TestRun{}
	// Inline, as the other event-only payloads: the run's component and what the event adds.
	eventPayloads[data.EventTestRunProgress] = map[string]any{"description": "The run, and the case that just ended.", "allOf": []any{
		schemaOf(data.TestRun{}), objectPayload("The case that just ended.", map[string]any{"result": objectPayload("A test's repeat.", map[string]any{
			"test_id": idString("The test."), "repeat": map[string]any{"type": "integer", "minimum": 1},
			"status": map[string]any{"type": "string", "enum": repeatStatuses}})}),
	}}
	eventPayloads[data.EventTestRunCompleted] = data.TestRun{}
	eventPayloads[data.EventAgentPublishedUntested] = map[string]any{"description": "The gate a forced publish went past, and the version it made.", "allOf": []any{
		schemaOf(data.PublishGate{}), objectPayload("The version.", map[string]any{"version": map[string]any{"type": "integer", "minimum": 1}}),
	}}
}

var agentTestRules = map[string]fieldRule{
	"name":                 fieldRule{MinLength: 1, MaxLength: validate.MaxTestName}.with(true, "Unique among the agent's tests."),
	"max_turns":            between(validate.MinTestMaxTurns, validate.MaxTestMaxTurns).with(false, "The caller's turns at most; 10 when absent."),
	"repeat":               between(validate.MinTestRepeat, validate.MaxTestRepeat).with(false, "Runs of the test in a run; 1 when absent."),
	"criteria":             {MinItems: validate.MinTestCriteria, MaxItems: validate.MaxTestCriteria, Required: true, Description: "What the conversation must show; at least one."},
	"mocks":                {Description: "Answers of the agent's custom_function tools, by tool name: a test never makes their requests (a function without a mock is refused to the model)."},
	"variables":            variablesRule,
	"required_for_publish": {Description: "The publish gate: the agent publishes only once a run of its draft passed this test."},
	"user":                 {Required: true, Description: "The caller: {script} or {persona, goal}."},
}

// optionalRules are rules with no member required.
func optionalRules(rules map[string]fieldRule) map[string]fieldRule {
	out := make(map[string]fieldRule, len(rules))
	for member, r := range rules {
		r.Required = false
		out[member] = r
	}
	return out
}

// simulationRules are llm_config's rules of the provider members.
func simulationRules() map[string]fieldRule {
	out := map[string]fieldRule{}
	for _, m := range []string{"provider", "model", "temperature", "deployment", "endpoint", "api_version", "base_url", "api_key", "region", "max_tokens"} {
		if r, ok := fieldRules["LLMConfig"][m]; ok {
			out[m] = r
		}
	}
	return out
}
