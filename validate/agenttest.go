package validate

import (
	"encoding/json"
	"math"
	"net/url"
	"slices"
	"sort"

	"github.com/voiceapi/voiceapi/data"
)

// Bounds of an agent test (conventions §22; docs/testing-agents.md). The OpenAPI
// document reads them too.
const (
	MaxTestName             = 255
	MinTestMaxTurns         = 1
	MaxTestMaxTurns         = 50
	MinTestRepeat           = 1
	MaxTestRepeat           = 10
	MaxTestTurn             = MaxTranscriptContent // characters of a scripted caller turn
	MaxTestPersona          = MaxText              // characters of a persona, and of a goal
	MinTestCriteria         = 1
	MaxTestCriteria         = 30
	MaxTestMocks            = 50
	MaxTestPattern          = 1000 // characters of a says or not_says pattern (RE2)
	MaxTestJudgeCriterion   = MaxText
	MinMockStatus           = 100
	MaxMockStatus           = 599
	MaxMockBody             = 16 << 10 // bytes of a mock's body as the tool returns it
	MinTestLatencyMS        = 1
	MaxTestLatencyMS        = 600_000
	MaxTestsPerAgent        = 200
	MaxTestRunTests         = MaxTestsPerAgent // test_ids of a run
	MaxPendingTestRuns      = 25               // runs of one agent queued or running at once
	maxCriterionArgumentsKB = 16
)

// MaxKeptTestRuns is how many finished runs of an agent are kept, the newest; an older
// one goes when a run of the agent finishes, unless the publish gate reads it
// (docs/testing-agents.md "How many runs are kept").
const MaxKeptTestRuns = 50

// criterionMembers are the members each criterion type takes; the others are refused.
var criterionMembers = map[string][]string{
	data.CriterionToolCalled:     {"name", "arguments"},
	data.CriterionToolNotCalled:  {"name"},
	data.CriterionSays:           {"pattern"},
	data.CriterionNotSays:        {"pattern"},
	data.CriterionVariableEquals: {"name", "value"},
	data.CriterionEndsWith:       {"reason"},
	data.CriterionMaxLatencyMS:   {"value"},
	data.CriterionJudge:          {"criterion"},
}

// AgentTest checks a test as it will be stored (a create with its defaults, or the stored
// test with an update's members): every rule of conventions §22, with the tools of the
// agent's draft (tools) for the names its criteria and mocks give.
func AgentTest(t data.AgentTest, tools []*data.Tool) error {
	var errs Errors
	if t.Name == "" {
		errs.Required("name")
	} else {
		errs.NotBlank("name", t.Name)
		errs.MaxLen("name", t.Name, MaxTestName)
	}
	testUser(&errs, t.User, t.MaxTurns)
	Variables(&errs, "variables", t.Variables)
	errs.IntBetween("max_turns", int64(t.MaxTurns), MinTestMaxTurns, MaxTestMaxTurns)
	errs.IntBetween("repeat", int64(t.Repeat), MinTestRepeat, MaxTestRepeat)
	mocks(&errs, t.Mocks, tools)
	switch {
	case len(t.Criteria) < MinTestCriteria:
		errs.Addf("criteria", "The criteria field must have at least %d item: a test without criteria proves nothing.", MinTestCriteria)
	case len(t.Criteria) > MaxTestCriteria:
		errs.MaxItems("criteria", len(t.Criteria), MaxTestCriteria)
	default:
		for i, c := range t.Criteria {
			criterion(&errs, Index("criteria", i), c, tools)
		}
	}
	return errs.Err()
}

// testUser checks the caller: a script of at most maxTurns turns, or a persona and a goal.
func testUser(errs *Errors, u data.TestUser, maxTurns int) {
	simulated := u.Persona != "" || u.Goal != ""
	switch {
	case len(u.Script) > 0 && simulated:
		field := "user.persona"
		if u.Persona == "" {
			field = "user.goal"
		}
		errs.Prohibited(field, "user.script is given (a caller is scripted or simulated, not both)")
	case len(u.Script) > 0:
		if len(u.Script) > maxTurns && maxTurns >= MinTestMaxTurns {
			errs.Addf("user.script", "The user.script field must not have more turns than max_turns (%d).", maxTurns)
		}
		errs.MaxItems("user.script", len(u.Script), MaxTestMaxTurns)
		for i, turn := range u.Script {
			p := Index("user.script", i)
			errs.NotBlank(p, turn)
			errs.MaxLen(p, turn, MaxTestTurn)
		}
	case simulated:
		for _, f := range [][2]string{{"user.persona", u.Persona}, {"user.goal", u.Goal}} {
			errs.NotBlank(f[0], f[1])
			errs.MaxLen(f[0], f[1], MaxTestPersona)
		}
	case u.Script != nil:
		// Given, but empty: the fault is the script's, not a missing caller.
		errs.Add("user.script", "The user.script field must have at least 1 turn (the caller's first words).")
	default:
		errs.Add("user", "The user field needs a script (the caller's turns) or a persona and a goal (a simulated caller).")
	}
}

// toolOf returns the agent's tool named name, nil when it has none.
func toolOf(tools []*data.Tool, name string) *data.Tool {
	for _, t := range tools {
		if t != nil && t.Name == name {
			return t
		}
	}
	return nil
}

// mocks checks each mock: a custom_function of the agent, a status, a body that fits.
func mocks(errs *Errors, m map[string]data.ToolMock, tools []*data.Tool) {
	if len(m) > MaxTestMocks {
		errs.Addf("mocks", "The mocks field must not have more than %d tools.", MaxTestMocks)
		return
	}
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, name := range names {
		p := Join("mocks", name)
		switch t := toolOf(tools, name); {
		case t == nil:
			errs.Addf(p, "The agent has no tool named %q: a mock answers one of its custom_function tools.", name)
		case t.Type != data.ToolCustomFunction:
			errs.Addf(p, "The tool %q is a %s tool: only custom_function tools are mocked.", name, t.Type)
		}
		mock := m[name]
		errs.IntBetween(p+".status", int64(mock.Status), MinMockStatus, MaxMockStatus)
		if n := len(MockBody(mock.Body)); n > MaxMockBody {
			errs.Addf(p+".body", "The %s.body field must not be greater than %d bytes.", p, MaxMockBody)
		}
	}
}

// MockBody is the text a mock's body answers with: a string as is, any other JSON value
// encoded.
func MockBody(body any) string {
	switch b := body.(type) {
	case nil:
		return ""
	case string:
		return b
	}
	raw, _ := json.Marshal(body)
	return string(raw)
}

// criterion checks one criterion at path: a known type, the members it takes and only
// those, each within its rule.
func criterion(errs *Errors, path string, c data.Criterion, tools []*data.Tool) {
	members, known := criterionMembers[c.Type]
	if c.Type == "" || !known {
		if c.Type == "" {
			errs.Required(path + ".type")
		} else {
			errs.OneOf(path+".type", c.Type, data.CriterionTypes...)
		}
		criterionBounds(errs, path, c)
		return
	}
	given := map[string]bool{"name": c.Name != "", "arguments": c.Arguments != nil, "pattern": c.Pattern != "",
		"value": c.Value != nil, "reason": c.Reason != "", "criterion": c.Criterion != ""}
	for _, m := range []string{"name", "arguments", "pattern", "value", "reason", "criterion"} {
		if given[m] && !slices.Contains(members, m) {
			errs.Prohibited(path+"."+m, path+".type is "+c.Type)
		}
	}
	for _, m := range members {
		if !given[m] && m != "arguments" {
			errs.RequiredWhen(path+"."+m, path+".type is "+c.Type)
		}
	}
	switch c.Type {
	case data.CriterionToolCalled, data.CriterionToolNotCalled:
		if c.Name != "" && toolOf(tools, c.Name) == nil {
			errs.Addf(path+".name", "The agent has no tool named %q.", c.Name)
		}
		if c.Arguments != nil {
			if b, _ := json.Marshal(c.Arguments); len(b) > maxCriterionArgumentsKB<<10 || deeperThan(map[string]any(c.Arguments), MaxObjectDepth) {
				errs.Addf(path+".arguments", "The %s.arguments field must not be greater than %d KiB encoded nor nested more than %d levels.", path, maxCriterionArgumentsKB, MaxObjectDepth)
			} else if !data.NumbersFit(map[string]any(c.Arguments)) {
				errs.Addf(path+".arguments", "The %s.arguments field holds a number out of range: each must be 0 or between 5e-324 and 1.7976931348623157e308 in size (a 64-bit float), its exponent written in at most 3 digits.", path)
			}
		}
	case data.CriterionSays, data.CriterionNotSays:
		if c.Pattern != "" {
			errs.MaxLen(path+".pattern", c.Pattern, MaxTestPattern)
			regexpPattern(errs, path+".pattern", c.Pattern)
		}
	case data.CriterionVariableEquals:
		if c.Name != "" && (len(c.Name) > MaxIdentifier || !validName(c.Name)) {
			errs.Addf(path+".name", "The %s.name field must be a variable name (%s), at most %d characters.", path, nameForm, MaxIdentifier)
		}
		if c.Value != nil {
			scalarValue(errs, path+".value", c.Value)
		}
	case data.CriterionEndsWith:
		if c.Reason != "" {
			errs.OneOf(path+".reason", c.Reason, data.TestEndReasons...)
		}
	case data.CriterionMaxLatencyMS:
		if c.Value != nil {
			n, ok := data.NumberFloat(c.Value)
			if !ok || n != math.Trunc(n) || n < MinTestLatencyMS || n > MaxTestLatencyMS {
				errs.Addf(path+".value", "The %s.value field must be an integer between %d and %d.", path, MinTestLatencyMS, MaxTestLatencyMS)
			}
		}
	case data.CriterionJudge:
		if c.Criterion != "" {
			errs.NotBlank(path+".criterion", c.Criterion)
			errs.MaxLen(path+".criterion", c.Criterion, MaxTestJudgeCriterion)
		}
	}
}

// criterionBounds checks the rules of a criterion's members that hold whatever its type,
// for one whose type is missing or unknown: which members it takes cannot be told, but a
// member past its bound or outside its list is a fault all the same, reported with the
// type's (conventions §2: every failing field at once).
func criterionBounds(errs *Errors, path string, c data.Criterion) {
	errs.MaxLen(path+".name", c.Name, MaxIdentifier)
	errs.MaxLen(path+".pattern", c.Pattern, MaxTestPattern)
	errs.MaxLen(path+".criterion", c.Criterion, MaxTestJudgeCriterion)
	if c.Reason != "" {
		errs.OneOf(path+".reason", c.Reason, data.TestEndReasons...)
	}
}

// scalarValue checks a variable's value: a string, a finite number or a boolean.
func scalarValue(errs *Errors, path string, v any) {
	switch x := v.(type) {
	case string:
		errs.MaxLen(path, x, MaxVariableValue)
	case bool:
	case float64, json.Number:
		if _, ok := data.NumberFloat(x); !ok {
			errs.Addf(path, "The %s field must be a finite number.", path)
		}
	default:
		errs.Addf(path, "The %s field must be a string, a number or a boolean.", path)
	}
}

// TestRunCreate checks a run's body: test_ids, when given, are test ids, each once.
func TestRunCreate(in data.TestRunCreate) error {
	var errs Errors
	if in.TestIDs.Set {
		ids := in.TestIDs.V
		if len(ids) == 0 {
			errs.Add("test_ids", "The test_ids field must name at least one test; leave it out to run every test.")
		}
		errs.MaxItems("test_ids", len(ids), MaxTestRunTests)
		for i, id := range ids {
			if !data.ValidID(data.PrefixAgentTest, id) {
				p := Index("test_ids", i)
				errs.Addf(p, "The selected %s is invalid: not a test id.", p)
			}
		}
		noDuplicates(&errs, "test_ids", ids)
	}
	return errs.Err()
}

// SimulationModel checks a workspace's simulation setting under path: llm_config's
// provider members and their rules.
func SimulationModel(errs *Errors, path string, m data.SimulationModel, cat *data.Catalog) {
	llmProvider(m.LLMConfig(), cat, path+".", errs)
}

// TestRunFilterParams reads the filter of GET /api/v1/agents/{agent_id}/test-runs:
// status, one of data.TestRunStatuses, given once (as every list's filter: docs/api.md).
func TestRunFilterParams(q url.Values) (data.TestRunFilter, error) {
	var errs Errors
	f := data.TestRunFilter{Status: enumParam(&errs, q, "status", data.TestRunStatuses)}
	return f, errs.Err()
}

// TestRunFilter checks a run list's filter, from any caller.
func TestRunFilter(f data.TestRunFilter) error {
	var errs Errors
	if f.Status != "" {
		errs.OneOf("status", f.Status, data.TestRunStatuses...)
	}
	return errs.Err()
}
