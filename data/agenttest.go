package data

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
)

// PrefixAgentTest starts the id of an agent test (conventions §3, §22).
const PrefixAgentTest = "tst_"

// Events of agent tests, their runs and the publish gate (conventions §11, §22).
const (
	EventAgentTestCreated       = "agent_test.created"
	EventAgentTestUpdated       = "agent_test.updated"
	EventAgentTestDeleted       = "agent_test.deleted"
	EventTestRunQueued          = "test_run.queued"
	EventTestRunStarted         = "test_run.started"
	EventTestRunProgress        = "test_run.progress"
	EventTestRunCompleted       = "test_run.completed"
	EventAgentPublishedUntested = "agent.published_untested"
)

// Criterion types of an agent test (conventions §22).
const (
	CriterionToolCalled     = "tool_called"
	CriterionToolNotCalled  = "tool_not_called"
	CriterionSays           = "says"
	CriterionNotSays        = "not_says"
	CriterionVariableEquals = "variable_equals"
	CriterionEndsWith       = "ends_with"
	CriterionMaxLatencyMS   = "max_latency_ms"
	CriterionJudge          = "judge"
)

// CriterionTypes lists every criterion type.
var CriterionTypes = []string{CriterionToolCalled, CriterionToolNotCalled, CriterionSays, CriterionNotSays,
	CriterionVariableEquals, CriterionEndsWith, CriterionMaxLatencyMS, CriterionJudge}

// TestEndReasons are the reasons a test conversation can end with: a conversation's
// (conventions §21) but expired, which a test never waits for. user_ended is a scripted
// caller out of turns or a simulated one hanging up.
var TestEndReasons = []string{EndUserEnded, EndAgentEnded, EndTransferred, EndMaxTurns}

// AgentTest is a test of an agent (conventions §22): a caller, scripted or simulated, the
// conversation's variables and tool mocks, and the criteria its conversation must meet.
type AgentTest struct {
	ID          string `json:"id"`
	WorkspaceID string `json:"workspace_id"`
	AgentID     string `json:"agent_id"`
	Name        string `json:"name"`
	// User is the caller: a script of turns, or a persona with a goal that the
	// workspace's simulation model plays.
	User      TestUser       `json:"user"`
	Variables map[string]any `json:"variables"`
	// MaxTurns bounds the caller's turns.
	MaxTurns int `json:"max_turns"`
	// Mocks answer the agent's custom functions by tool name: a test never makes their
	// requests.
	Mocks              map[string]ToolMock `json:"mocks"`
	Criteria           []Criterion         `json:"criteria"`
	RequiredForPublish bool                `json:"required_for_publish"`
	// Repeat runs the test this many times in a run: a simulated caller and the agent's
	// model vary, and a test's pass rate tells how often it holds.
	Repeat    int  `json:"repeat"`
	CreatedAt Time `json:"created_at"`
	UpdatedAt Time `json:"updated_at"`
}

// TestUser is the caller of a test: Script (each item one caller turn, sent in order) or
// Persona and Goal (a simulated caller).
type TestUser struct {
	Script  []string `json:"script,omitempty"`
	Persona string   `json:"persona,omitempty"`
	Goal    string   `json:"goal,omitempty"`
}

// Simulated reports whether the caller is played by the simulation model.
func (u TestUser) Simulated() bool { return len(u.Script) == 0 }

// ToolMock is a custom function's answer in a test: the HTTP status and body the tool
// returns to the model. Body is a JSON value; a string is the body's text as is, any other
// value is sent encoded.
type ToolMock struct {
	Status int `json:"status"`
	Body   any `json:"body"`
}

// Criterion is one thing a test's conversation must show. Type says which members it
// uses: tool_called {name, arguments?} (arguments: a subset the call's must match),
// tool_not_called {name}, says and not_says {pattern} (RE2 over the agent's turns),
// variable_equals {name, value}, ends_with {reason}, max_latency_ms {value} (every agent
// reply's whole latency), judge {criterion} (the simulation model reads the transcript and
// decides).
type Criterion struct {
	Type      string     `json:"type"`
	Name      string     `json:"name,omitempty"`
	Arguments JSONObject `json:"arguments,omitempty"`
	Pattern   string     `json:"pattern,omitempty"`
	Value     any        `json:"value,omitempty"`
	Reason    string     `json:"reason,omitempty"`
	Criterion string     `json:"criterion,omitempty"`
}

// JSONObject is a JSON object whose numbers, decoded, keep their text (json.Number): a
// tool_called criterion's arguments compare 12345678901234567890 as written, where float64
// would make it equal to 12345678901234567891.
type JSONObject map[string]any

// UnmarshalJSON decodes an object, numbers as json.Number; null is a nil object.
func (o *JSONObject) UnmarshalJSON(b []byte) error {
	var m map[string]any
	if decodeFreeForm(b, &m) {
		*o = m
		return nil
	}
	// Not an object, or not JSON: the Decoder's error.
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			return errors.New("it must be an object")
		}
		return err
	}
	*o = m
	return nil
}

// Defaults of an agent test.
const (
	DefaultTestMaxTurns = 10
	DefaultTestRepeat   = 1
)

// AgentTestCreate is the body of POST /api/v1/agents/{agent_id}/tests. MaxTurns and
// Repeat are 0 when absent (their defaults then).
type AgentTestCreate struct {
	AgentTestReadOnly
	Name               string              `json:"name"`
	User               TestUser            `json:"user"`
	Variables          map[string]any      `json:"variables" strict:"nonnull"`
	MaxTurns           Opt[int]            `json:"max_turns"`
	Mocks              map[string]ToolMock `json:"mocks" strict:"nonnull"`
	Criteria           []Criterion         `json:"criteria"`
	RequiredForPublish bool                `json:"required_for_publish"`
	Repeat             Opt[int]            `json:"repeat"`
}

// AgentTestReadOnly are the members of a test record a body may not set.
type AgentTestReadOnly struct {
	RecordReadOnly
	AgentID ReadOnly `json:"agent_id,omitzero" strict:"readonly"`
}

// AgentTestUpdate is the body of PUT /api/v1/agents/{agent_id}/tests/{test_id}: each member
// given replaces the stored one whole. The maps are not nullable, as on a create: the tag
// refuses the null a map would take as nil.
type AgentTestUpdate struct {
	AgentTestReadOnly
	Name               Opt[string]              `json:"name"`
	User               Opt[TestUser]            `json:"user"`
	Variables          Opt[map[string]any]      `json:"variables" strict:"nonnull"`
	MaxTurns           Opt[int]                 `json:"max_turns"`
	Mocks              Opt[map[string]ToolMock] `json:"mocks" strict:"nonnull"`
	Criteria           Opt[[]Criterion]         `json:"criteria"`
	RequiredForPublish Opt[bool]                `json:"required_for_publish"`
	Repeat             Opt[int]                 `json:"repeat"`
}

// Apply returns t with the update's members in it.
func (u AgentTestUpdate) Apply(t AgentTest) AgentTest {
	if u.Name.Set {
		t.Name = u.Name.V
	}
	if u.User.Set {
		t.User = u.User.V
	}
	if u.Variables.Set {
		t.Variables = u.Variables.V
	}
	if u.MaxTurns.Set {
		t.MaxTurns = u.MaxTurns.V
	}
	if u.Mocks.Set {
		t.Mocks = u.Mocks.V
	}
	if u.Criteria.Set {
		t.Criteria = u.Criteria.V
	}
	if u.RequiredForPublish.Set {
		t.RequiredForPublish = u.RequiredForPublish.V
	}
	if u.Repeat.Set {
		t.Repeat = u.Repeat.V
	}
	return t.Normalized()
}

// NewAgentTest returns the test a create body describes, defaults filled in.
func (in AgentTestCreate) NewAgentTest() AgentTest {
	t := AgentTest{Name: in.Name, User: in.User, Variables: in.Variables, MaxTurns: in.MaxTurns.V, Mocks: in.Mocks,
		Criteria: in.Criteria, RequiredForPublish: in.RequiredForPublish, Repeat: in.Repeat.V}
	if !in.MaxTurns.Set {
		t.MaxTurns = DefaultTestMaxTurns
	}
	if !in.Repeat.Set {
		t.Repeat = DefaultTestRepeat
	}
	return t.Normalized()
}

// Normalized gives absent collections their empty values, so clients read [] and {}.
func (t AgentTest) Normalized() AgentTest {
	if t.Variables == nil {
		t.Variables = map[string]any{}
	}
	if t.Mocks == nil {
		t.Mocks = map[string]ToolMock{}
	}
	if t.Criteria == nil {
		t.Criteria = []Criterion{}
	}
	return t
}

// AgentTestService manages the tests of agents in the caller's workspace. An agent that
// is unknown, of another workspace or outside the caller's agent_ids is not_found, and so
// are its tests; writes need the right to write agents.
type AgentTestService interface {
	// ListAgentTests returns a page of the agent's tests, newest first. Errors: not_found,
	// validation_failed (per_page, cursor).
	ListAgentTests(ctx context.Context, agentID string, p PageRequest) ([]*AgentTest, Page, error)
	// CreateAgentTest adds a test to the agent. Errors: not_found, forbidden,
	// validation_failed (every rule of conventions §22, and tools the agent's draft does
	// not have), conflict (the agent has as many tests as it may).
	CreateAgentTest(ctx context.Context, agentID string, in AgentTestCreate) (*AgentTest, error)
	// AgentTest returns one test. Errors: not_found.
	AgentTest(ctx context.Context, agentID, id string) (*AgentTest, error)
	// UpdateAgentTest replaces the members given. Errors: not_found, forbidden,
	// validation_failed, precondition_failed (If-Match).
	UpdateAgentTest(ctx context.Context, agentID, id string, in AgentTestUpdate) (*AgentTest, error)
	// DeleteAgentTest removes a test (its results in earlier runs stay). Errors:
	// not_found, forbidden, precondition_failed.
	DeleteAgentTest(ctx context.Context, agentID, id string) error
	// AgentTestFromCall makes a scripted test from a call of the agent: its caller turns,
	// and a tool_called criterion for each tool the call used. Errors: not_found (the
	// agent, or a call of another agent or one the caller may not read), forbidden,
	// validation_failed (a call without caller turns), conflict (as many tests as it may).
	AgentTestFromCall(ctx context.Context, agentID, callID string) (*AgentTest, error)
	// CheckTestCall is AgentTestFromCall's access check of the call alone, which a replay
	// of its answer (the call's caller turns) makes again: nil, or not_found as the make.
	CheckTestCall(ctx context.Context, agentID, callID string) error
}
