package validate

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
)

// testTools are an agent's tools as a test's criteria and mocks name them.
var testTools = []*data.Tool{
	{Name: "book", Type: data.ToolCustomFunction, APIEndpoint: "https://example.com/book"},
	{Name: "hang_up", Type: data.ToolEndCall},
	nil, // a tools list may hold nulls (spec)
}

func validTest() data.AgentTest {
	return data.AgentTestCreate{Name: "books a table", User: data.TestUser{Script: []string{"A table for two, please."}},
		Criteria: []data.Criterion{{Type: data.CriterionToolCalled, Name: "book"}}}.NewAgentTest()
}

// TestAgentTestBounds holds every bound of an agent test at its edge and just past it.
func TestAgentTestBounds(t *testing.T) {
	for _, group := range []struct {
		name  string
		cases []agentTestCase
	}{
		{"fields", agentTestFieldCases()},
		{"user", agentTestUserCases()},
		{"tool criteria", agentTestToolCriterionCases()},
		{"other criteria", agentTestOtherCriterionCases()},
		{"mocks", agentTestMockCases()},
	} {
		t.Run(group.name, func(t *testing.T) {
			for _, c := range group.cases {
				x := validTest()
				c.edit(&x)
				expectPaths(t, c.name, AgentTest(x, testTools), c.paths...)
			}
		})
	}
}

// agentTestCase edits a valid test and names the paths AgentTest must then fault.
type agentTestCase struct {
	name  string
	edit  func(*data.AgentTest)
	paths []string
}

// agentTestFieldCases bound the name, max_turns, repeat and variables.
func agentTestFieldCases() []agentTestCase {
	return []agentTestCase{
		{"valid", func(*data.AgentTest) {}, nil},
		{"name missing", func(x *data.AgentTest) { x.Name = "" }, []string{"name"}},
		{"name blank", func(x *data.AgentTest) { x.Name = "   " }, []string{"name"}},
		{"name 255", func(x *data.AgentTest) { x.Name = strings.Repeat("n", MaxTestName) }, nil},
		{"name 256", func(x *data.AgentTest) { x.Name = strings.Repeat("n", MaxTestName+1) }, []string{"name"}},
		{"max_turns 1", func(x *data.AgentTest) { x.MaxTurns = MinTestMaxTurns }, nil},
		{"max_turns 0", func(x *data.AgentTest) { x.MaxTurns = MinTestMaxTurns - 1 }, []string{"max_turns"}},
		{"max_turns 50", func(x *data.AgentTest) { x.MaxTurns = MaxTestMaxTurns }, nil},
		{"max_turns 51", func(x *data.AgentTest) { x.MaxTurns = MaxTestMaxTurns + 1 }, []string{"max_turns"}},
		{"repeat 1", func(x *data.AgentTest) { x.Repeat = MinTestRepeat }, nil},
		{"repeat 0", func(x *data.AgentTest) { x.Repeat = MinTestRepeat - 1 }, []string{"repeat"}},
		{"repeat 10", func(x *data.AgentTest) { x.Repeat = MaxTestRepeat }, nil},
		{"repeat 11", func(x *data.AgentTest) { x.Repeat = MaxTestRepeat + 1 }, []string{"repeat"}},
		{"variables", func(x *data.AgentTest) { x.Variables = map[string]any{"name": "Ada", "n": 2.0, "vip": true} }, nil},
		{"a variable of a bad name", func(x *data.AgentTest) { x.Variables = map[string]any{"1x": "a"} }, []string{"variables.1x"}},
		{"a variable object", func(x *data.AgentTest) { x.Variables = map[string]any{"o": map[string]any{}} }, []string{"variables.o"}},
		{"every fault at once", func(x *data.AgentTest) {
			x.Name, x.MaxTurns, x.Repeat, x.Criteria = "", 0, 11, nil
		}, []string{"name", "max_turns", "repeat", "criteria"}},
	}
}

// agentTestUserCases bound the simulated caller: a script or a persona with a goal.
func agentTestUserCases() []agentTestCase {
	return []agentTestCase{
		{"no caller", func(x *data.AgentTest) { x.User = data.TestUser{} }, []string{"user"}},
		{"a script of no turns", func(x *data.AgentTest) { x.User = data.TestUser{Script: []string{}} }, []string{"user.script"}},
		{"a script of 1 turn", func(x *data.AgentTest) { x.User = data.TestUser{Script: []string{"hi"}} }, nil},
		{"script and persona", func(x *data.AgentTest) { x.User.Persona = "p" }, []string{"user.persona"}},
		{"script and goal", func(x *data.AgentTest) { x.User.Goal = "g" }, []string{"user.goal"}},
		{"persona without goal", func(x *data.AgentTest) { x.User = data.TestUser{Persona: "p"} }, []string{"user.goal"}},
		{"goal without persona", func(x *data.AgentTest) { x.User = data.TestUser{Goal: "g"} }, []string{"user.persona"}},
		{"persona and goal", func(x *data.AgentTest) { x.User = data.TestUser{Persona: "p", Goal: "g"} }, nil},
		{"persona at its bound", func(x *data.AgentTest) {
			x.User = data.TestUser{Persona: strings.Repeat("p", MaxTestPersona), Goal: strings.Repeat("g", MaxTestPersona)}
		}, nil},
		{"persona past it", func(x *data.AgentTest) {
			x.User = data.TestUser{Persona: strings.Repeat("p", MaxTestPersona+1), Goal: strings.Repeat("g", MaxTestPersona+1)}
		}, []string{"user.persona", "user.goal"}},
		{"a blank turn", func(x *data.AgentTest) { x.User.Script = []string{"hi", " "} }, []string{"user.script.1"}},
		{"a turn at its bound", func(x *data.AgentTest) { x.User.Script = []string{strings.Repeat("é", MaxTestTurn)} }, nil},
		{"a turn past it", func(x *data.AgentTest) { x.User.Script = []string{strings.Repeat("é", MaxTestTurn+1)} }, []string{"user.script.0"}},
		{"script as long as max_turns", func(x *data.AgentTest) { x.MaxTurns, x.User.Script = 2, []string{"a", "b"} }, nil},
		{"script longer than max_turns", func(x *data.AgentTest) { x.MaxTurns, x.User.Script = 2, []string{"a", "b", "c"} }, []string{"user.script"}},
		{"script of 51 turns", func(x *data.AgentTest) {
			x.MaxTurns, x.User.Script = MaxTestMaxTurns, make([]string, MaxTestMaxTurns+1)
			for i := range x.User.Script {
				x.User.Script[i] = "t"
			}
		}, []string{"user.script"}},
	}
}

// agentTestToolCriterionCases bound the criteria list and the criteria that name a tool.
func agentTestToolCriterionCases() []agentTestCase {
	return []agentTestCase{
		{"no criteria", func(x *data.AgentTest) { x.Criteria = nil }, []string{"criteria"}},
		{"30 criteria", func(x *data.AgentTest) { x.Criteria = repeatCriterion(MaxTestCriteria) }, nil},
		{"31 criteria", func(x *data.AgentTest) { x.Criteria = repeatCriterion(MaxTestCriteria + 1) }, []string{"criteria"}},
		{"criterion without a type", func(x *data.AgentTest) { x.Criteria = []data.Criterion{{Name: "book"}} }, []string{"criteria.0.type"}},
		{"criterion of an unknown type", func(x *data.AgentTest) { x.Criteria = []data.Criterion{{Type: "sings"}} }, []string{"criteria.0.type"}},
		// Without a known type, its members' own bounds are still checked, with the type.
		{"typeless criterion, name of 255", func(x *data.AgentTest) {
			x.Criteria = []data.Criterion{{Name: strings.Repeat("n", MaxIdentifier)}}
		}, []string{"criteria.0.type"}},
		{"typeless criterion, name of 256", func(x *data.AgentTest) {
			x.Criteria = []data.Criterion{{Name: strings.Repeat("n", MaxIdentifier+1)}}
		}, []string{"criteria.0.type", "criteria.0.name"}},
		{"typeless criterion, pattern of 1000", func(x *data.AgentTest) {
			x.Criteria = []data.Criterion{{Pattern: strings.Repeat("a", MaxTestPattern)}}
		}, []string{"criteria.0.type"}},
		{"typeless criterion, pattern of 1001", func(x *data.AgentTest) {
			x.Criteria = []data.Criterion{{Pattern: strings.Repeat("a", MaxTestPattern+1)}}
		}, []string{"criteria.0.type", "criteria.0.pattern"}},
		{"unknown type, judge criterion at its bound", func(x *data.AgentTest) {
			x.Criteria = []data.Criterion{{Type: "sings", Criterion: strings.Repeat("c", MaxTestJudgeCriterion)}}
		}, []string{"criteria.0.type"}},
		{"unknown type, judge criterion past its bound", func(x *data.AgentTest) {
			x.Criteria = []data.Criterion{{Type: "sings", Criterion: strings.Repeat("c", MaxTestJudgeCriterion+1)}}
		}, []string{"criteria.0.type", "criteria.0.criterion"}},
		{"typeless criterion, a reason of the list", func(x *data.AgentTest) {
			x.Criteria = []data.Criterion{{Reason: data.TestEndReasons[0]}}
		}, []string{"criteria.0.type"}},
		{"typeless criterion, a reason outside the list", func(x *data.AgentTest) { x.Criteria = []data.Criterion{{Reason: "asleep"}} },
			[]string{"criteria.0.type", "criteria.0.reason"}},
		{"tool_called of an unknown tool", func(x *data.AgentTest) { x.Criteria[0].Name = "fly" }, []string{"criteria.0.name"}},
		{"tool_called without a name", func(x *data.AgentTest) { x.Criteria[0].Name = "" }, []string{"criteria.0.name"}},
		{"tool_called with arguments", func(x *data.AgentTest) { x.Criteria[0].Arguments = map[string]any{"people": 2.0} }, nil},
		{"tool_called with a pattern", func(x *data.AgentTest) { x.Criteria[0].Pattern = "x" }, []string{"criteria.0.pattern"}},
		{"tool_called with too large arguments", func(x *data.AgentTest) {
			x.Criteria[0].Arguments = map[string]any{"a": strings.Repeat("x", maxCriterionArgumentsKB<<10)}
		}, []string{"criteria.0.arguments"}},
		{"tool_called with the number 1.7976931348623157e308 in its arguments", func(x *data.AgentTest) {
			x.Criteria[0].Arguments = map[string]any{"n": []any{map[string]any{"m": json.Number("1.7976931348623157e308")}}}
		}, nil},
		{"tool_called with the number 1.8e308 in its arguments", func(x *data.AgentTest) {
			x.Criteria[0].Arguments = map[string]any{"n": []any{map[string]any{"m": json.Number("1.8e308")}}}
		}, []string{"criteria.0.arguments"}},
		{"tool_called with the number -1.8e308 in its arguments", func(x *data.AgentTest) {
			x.Criteria[0].Arguments = map[string]any{"n": []any{map[string]any{"m": json.Number("-1.8e308")}}}
		}, []string{"criteria.0.arguments"}},
		{"tool_called with the number 5e-324 in its arguments", func(x *data.AgentTest) {
			x.Criteria[0].Arguments = map[string]any{"n": []any{map[string]any{"m": json.Number("5e-324")}}}
		}, nil},
		{"tool_called with the number 2e-324 in its arguments", func(x *data.AgentTest) {
			x.Criteria[0].Arguments = map[string]any{"n": []any{map[string]any{"m": json.Number("2e-324")}}}
		}, []string{"criteria.0.arguments"}},
		{"tool_called with the number 0e999 in its arguments", func(x *data.AgentTest) {
			x.Criteria[0].Arguments = map[string]any{"n": []any{map[string]any{"m": json.Number("0e999")}}}
		}, nil},
		{"tool_called with the number 0e1000 in its arguments", func(x *data.AgentTest) {
			x.Criteria[0].Arguments = map[string]any{"n": []any{map[string]any{"m": json.Number("0e1000")}}}
		}, []string{"criteria.0.arguments"}},
		{"tool_called with the number 1e-0001 in its arguments", func(x *data.AgentTest) {
			x.Criteria[0].Arguments = map[string]any{"n": []any{map[string]any{"m": json.Number("1e-0001")}}}
		}, []string{"criteria.0.arguments"}},
		{"tool_called with the number 12345678901234567890 in its arguments", func(x *data.AgentTest) {
			x.Criteria[0].Arguments = map[string]any{"n": []any{map[string]any{"m": json.Number("12345678901234567890")}}}
		}, nil},
		{"tool_called with the number -0.000 in its arguments", func(x *data.AgentTest) {
			x.Criteria[0].Arguments = map[string]any{"n": []any{map[string]any{"m": json.Number("-0.000")}}}
		}, nil},
		{"tool_not_called of an unknown tool", func(x *data.AgentTest) {
			x.Criteria = []data.Criterion{{Type: data.CriterionToolNotCalled, Name: "fly"}}
		}, []string{"criteria.0.name"}},
		{"tool_not_called with arguments", func(x *data.AgentTest) {
			x.Criteria = []data.Criterion{{Type: data.CriterionToolNotCalled, Name: "hang_up", Arguments: map[string]any{}}}
		}, []string{"criteria.0.arguments"}},
	}
}

// agentTestOtherCriterionCases bound the criteria of patterns, variables, ends, latency and judges.
func agentTestOtherCriterionCases() []agentTestCase {
	n := func(v float64) any { return v }
	return []agentTestCase{
		{"says", func(x *data.AgentTest) {
			x.Criteria = []data.Criterion{{Type: data.CriterionSays, Pattern: `(?i)\bbooked\b`}}
		}, nil},
		{"says without a pattern", func(x *data.AgentTest) { x.Criteria = []data.Criterion{{Type: data.CriterionSays}} }, []string{"criteria.0.pattern"}},
		{"says an invalid RE2 pattern", func(x *data.AgentTest) {
			x.Criteria = []data.Criterion{{Type: data.CriterionSays, Pattern: `(unclosed`}}
		}, []string{"criteria.0.pattern"}},
		{"not_says a lookahead (not RE2)", func(x *data.AgentTest) {
			x.Criteria = []data.Criterion{{Type: data.CriterionNotSays, Pattern: `sorry(?!x)`}}
		}, []string{"criteria.0.pattern"}},
		{"a pattern at its bound", func(x *data.AgentTest) {
			x.Criteria = []data.Criterion{{Type: data.CriterionSays, Pattern: strings.Repeat("a", MaxTestPattern)}}
		}, nil},
		{"a pattern past it", func(x *data.AgentTest) {
			x.Criteria = []data.Criterion{{Type: data.CriterionSays, Pattern: strings.Repeat("a", MaxTestPattern+1)}}
		}, []string{"criteria.0.pattern"}},
		{"variable_equals", func(x *data.AgentTest) {
			x.Criteria = []data.Criterion{{Type: data.CriterionVariableEquals, Name: "vip", Value: false}}
		}, nil},
		{"variable_equals without a value", func(x *data.AgentTest) {
			x.Criteria = []data.Criterion{{Type: data.CriterionVariableEquals, Name: "vip"}}
		}, []string{"criteria.0.value"}},
		{"variable_equals an object", func(x *data.AgentTest) {
			x.Criteria = []data.Criterion{{Type: data.CriterionVariableEquals, Name: "vip", Value: map[string]any{}}}
		}, []string{"criteria.0.value"}},
		{"variable_equals a bad name", func(x *data.AgentTest) {
			x.Criteria = []data.Criterion{{Type: data.CriterionVariableEquals, Name: "a b", Value: "x"}}
		}, []string{"criteria.0.name"}},
		{"ends_with", func(x *data.AgentTest) {
			x.Criteria = []data.Criterion{{Type: data.CriterionEndsWith, Reason: data.EndTransferred}}
		}, nil},
		{"ends_with expired", func(x *data.AgentTest) {
			x.Criteria = []data.Criterion{{Type: data.CriterionEndsWith, Reason: data.EndExpired}}
		}, []string{"criteria.0.reason"}},
		{"max_latency_ms 1", func(x *data.AgentTest) {
			x.Criteria = []data.Criterion{{Type: data.CriterionMaxLatencyMS, Value: n(MinTestLatencyMS)}}
		}, nil},
		{"max_latency_ms 0", func(x *data.AgentTest) {
			x.Criteria = []data.Criterion{{Type: data.CriterionMaxLatencyMS, Value: n(MinTestLatencyMS - 1)}}
		}, []string{"criteria.0.value"}},
		{"max_latency_ms 600000", func(x *data.AgentTest) {
			x.Criteria = []data.Criterion{{Type: data.CriterionMaxLatencyMS, Value: n(MaxTestLatencyMS)}}
		}, nil},
		{"max_latency_ms 600001", func(x *data.AgentTest) {
			x.Criteria = []data.Criterion{{Type: data.CriterionMaxLatencyMS, Value: n(MaxTestLatencyMS + 1)}}
		}, []string{"criteria.0.value"}},
		{"max_latency_ms 1.5", func(x *data.AgentTest) { x.Criteria = []data.Criterion{{Type: data.CriterionMaxLatencyMS, Value: 1.5}} }, []string{"criteria.0.value"}},
		{"max_latency_ms a string", func(x *data.AgentTest) { x.Criteria = []data.Criterion{{Type: data.CriterionMaxLatencyMS, Value: "5"}} }, []string{"criteria.0.value"}},
		{"judge", func(x *data.AgentTest) {
			x.Criteria = []data.Criterion{{Type: data.CriterionJudge, Criterion: "Polite."}}
		}, nil},
		{"judge blank", func(x *data.AgentTest) { x.Criteria = []data.Criterion{{Type: data.CriterionJudge, Criterion: " "}} }, []string{"criteria.0.criterion"}},
		{"judge past its bound", func(x *data.AgentTest) {
			x.Criteria = []data.Criterion{{Type: data.CriterionJudge, Criterion: strings.Repeat("j", MaxTestJudgeCriterion+1)}}
		}, []string{"criteria.0.criterion"}},
		{"judge with a name", func(x *data.AgentTest) {
			x.Criteria = []data.Criterion{{Type: data.CriterionJudge, Criterion: "Polite.", Name: "book"}}
		}, []string{"criteria.0.name"}},
	}
}

// agentTestMockCases bound the tool mocks: a known tool that is not an end_call, status and body.
func agentTestMockCases() []agentTestCase {
	return []agentTestCase{
		{"a mock", func(x *data.AgentTest) { x.Mocks = map[string]data.ToolMock{"book": {Status: 200, Body: "ok"}} }, nil},
		{"a mock of an unknown tool", func(x *data.AgentTest) { x.Mocks = map[string]data.ToolMock{"fly": {Status: 200}} }, []string{"mocks.fly"}},
		{"a mock of an end_call", func(x *data.AgentTest) { x.Mocks = map[string]data.ToolMock{"hang_up": {Status: 200}} }, []string{"mocks.hang_up"}},
		{"a mock status 100", func(x *data.AgentTest) { x.Mocks = map[string]data.ToolMock{"book": {Status: MinMockStatus}} }, nil},
		{"a mock status 99", func(x *data.AgentTest) { x.Mocks = map[string]data.ToolMock{"book": {Status: MinMockStatus - 1}} }, []string{"mocks.book.status"}},
		{"a mock status 599", func(x *data.AgentTest) { x.Mocks = map[string]data.ToolMock{"book": {Status: MaxMockStatus}} }, nil},
		{"a mock status 600", func(x *data.AgentTest) { x.Mocks = map[string]data.ToolMock{"book": {Status: MaxMockStatus + 1}} }, []string{"mocks.book.status"}},
		{"a mock body at its bound", func(x *data.AgentTest) {
			x.Mocks = map[string]data.ToolMock{"book": {Status: 200, Body: strings.Repeat("b", MaxMockBody)}}
		}, nil},
		{"a mock body past it", func(x *data.AgentTest) {
			x.Mocks = map[string]data.ToolMock{"book": {Status: 200, Body: strings.Repeat("b", MaxMockBody+1)}}
		}, []string{"mocks.book.body"}},
	}
}

func repeatCriterion(n int) []data.Criterion {
	out := make([]data.Criterion, n)
	for i := range out {
		out[i] = data.Criterion{Type: data.CriterionSays, Pattern: "a"}
	}
	return out
}

// TestAgentTestDefaults: a create without max_turns and repeat gets 10 and 1, and absent
// collections become empty.
func TestAgentTestDefaults(t *testing.T) {
	x := validTest()
	if x.MaxTurns != data.DefaultTestMaxTurns || x.Repeat != data.DefaultTestRepeat || x.Variables == nil || x.Mocks == nil {
		t.Errorf("defaults: %+v", x)
	}
}

// TestTestRunCreateBounds: test_ids are test ids, each once, at least one, at most the
// tests an agent may have.
func TestTestRunCreateBounds(t *testing.T) {
	g := data.NewIDGen()
	a, b := g.New(data.PrefixAgentTest), g.New(data.PrefixAgentTest)
	ids := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = g.New(data.PrefixAgentTest)
		}
		return out
	}
	cases := []struct {
		name  string
		in    data.TestRunCreate
		paths []string
	}{
		{"every test", data.TestRunCreate{}, nil},
		{"two tests", data.TestRunCreate{TestIDs: data.Some([]string{a, b})}, nil},
		{"none", data.TestRunCreate{TestIDs: data.Some([]string{})}, []string{"test_ids"}},
		{"not a test id", data.TestRunCreate{TestIDs: data.Some([]string{"agt_1"})}, []string{"test_ids.0"}},
		{"twice", data.TestRunCreate{TestIDs: data.Some([]string{a, a})}, []string{"test_ids.1"}},
		{"at the bound", data.TestRunCreate{TestIDs: data.Some(ids(MaxTestRunTests))}, nil},
		{"past it", data.TestRunCreate{TestIDs: data.Some(ids(MaxTestRunTests + 1))}, []string{"test_ids"}},
	}
	for _, c := range cases {
		expectPaths(t, c.name, TestRunCreate(c.in), c.paths...)
	}
}

// TestSimulationModelRules: the simulation setting follows llm_config's provider rules
// under simulation.
func TestSimulationModelRules(t *testing.T) {
	temp, bad := 0.2, 1.5
	key := ""
	cases := []struct {
		name  string
		m     data.SimulationModel
		paths []string
	}{
		{"groq", data.SimulationModel{Provider: data.LLMGroq, Model: "llama-3.3-70b-versatile"}, nil},
		{"no provider", data.SimulationModel{Model: "x"}, []string{"simulation.provider"}},
		{"unknown provider", data.SimulationModel{Provider: "openai", Model: "x"}, []string{"simulation.provider"}},
		{"internal without base_url and temperature", data.SimulationModel{Provider: data.LLMInternal, Model: "llama3.2"},
			[]string{"simulation.base_url", "simulation.temperature"}},
		{"temperature past 1", data.SimulationModel{Provider: data.LLMGroq, Model: "llama-3.3-70b-versatile", Temperature: &bad}, []string{"simulation.temperature"}},
		{"temperature 0.2", data.SimulationModel{Provider: data.LLMGroq, Model: "llama-3.3-70b-versatile", Temperature: &temp}, nil},
		{"an empty key", data.SimulationModel{Provider: data.LLMGroq, Model: "llama-3.3-70b-versatile", APIKey: &key}, []string{"simulation.api_key"}},
		{"region on groq", data.SimulationModel{Provider: data.LLMGroq, Model: "llama-3.3-70b-versatile", Region: "us-east-1"}, []string{"simulation.region"}},
	}
	for _, c := range cases {
		m := c.m
		expectPaths(t, c.name, WorkspaceUpdate(data.WorkspaceUpdate{Simulation: data.Some(&m)}, nil), c.paths...)
	}
	expectPaths(t, "null", WorkspaceUpdate(data.WorkspaceUpdate{Simulation: data.Some[*data.SimulationModel](nil)}, nil))
}
