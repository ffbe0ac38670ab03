package service

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/voiceapi/voiceapi/conversation"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/validate"
)

// AgentTestService implements data.AgentTestService: the tests of agents (conventions
// §22), validated against the tools of the agent's draft.
type AgentTestService struct {
	*base
	agents *AgentService
}

var _ data.AgentTestService = (*AgentTestService)(nil)

// testAgent reads an agent the caller may see, api_key opened; another workspace's, or
// one outside the caller's agent_ids, is not found.
func (s *AgentTestService) testAgent(ctx context.Context, tx Tx, agentID string) (*data.StoredAgent, error) {
	_, plain, err := s.agents.load(ctx, tx, agentID)
	return plain, err
}

// loadTest reads a test of a visible agent.
func (s *AgentTestService) loadTest(ctx context.Context, tx Tx, agentID, id string) (*data.StoredAgent, *data.AgentTest, error) {
	agent, err := s.testAgent(ctx, tx, agentID)
	if err != nil {
		return nil, nil, err
	}
	t, err := tx.AgentTest(id)
	if err != nil {
		return nil, nil, err
	}
	if t == nil || t.AgentID != agentID {
		return nil, nil, data.NotFound("Test")
	}
	return agent, t, nil
}

// ListAgentTests implements data.AgentTestService.
func (s *AgentTestService) ListAgentTests(ctx context.Context, agentID string, req data.PageRequest) ([]*data.AgentTest, data.Page, error) {
	var list []*data.AgentTest
	var page data.Page
	err := s.store.View(ctx, func(tx Tx) error {
		if _, err := s.testAgent(ctx, tx, agentID); err != nil {
			return err
		}
		var err error
		list, page, err = tx.AgentTestPage(agentID, req)
		return err
	})
	return list, page, err
}

// AgentTest implements data.AgentTestService.
func (s *AgentTestService) AgentTest(ctx context.Context, agentID, id string) (*data.AgentTest, error) {
	var out *data.AgentTest
	err := s.store.View(ctx, func(tx Tx) (err error) {
		_, out, err = s.loadTest(ctx, tx, agentID, id)
		return err
	})
	return out, err
}

// CreateAgentTest implements data.AgentTestService.
func (s *AgentTestService) CreateAgentTest(ctx context.Context, agentID string, in data.AgentTestCreate) (*data.AgentTest, error) {
	t := in.NewAgentTest()
	var out *data.AgentTest
	err := s.store.Update(ctx, func(tx Tx) error {
		var err error
		out, err = s.insertTest(ctx, tx, agentID, t)
		return err
	})
	return out, err
}

// insertTest checks and stores a new test of the agent, with its event.
func (s *AgentTestService) insertTest(ctx context.Context, tx Tx, agentID string, t data.AgentTest) (*data.AgentTest, error) {
	agent, err := s.testAgent(ctx, tx, agentID)
	if err != nil {
		return nil, err
	}
	// A replay under the request's Idempotency-Key checks this agent again (a member's
	// agent_ids narrowed since): the kept test shows the agent's tools, or a call's words.
	data.NoteClaimAgent(ctx, agentID)
	existing, err := tx.AgentTests(agentID)
	if err != nil {
		return nil, err
	}
	if err := checkInput(ctx, checkTest(t, agent, existing, "")); err != nil {
		return nil, err
	}
	if len(existing) >= validate.MaxTestsPerAgent {
		return nil, data.Errorf(data.ECONFLICT, "The agent has %d tests, the most it may have: delete one first.", len(existing))
	}
	now := s.timeNow()
	t.ID, t.WorkspaceID, t.AgentID, t.CreatedAt, t.UpdatedAt = s.ids.New(data.PrefixAgentTest), agent.WorkspaceID, agentID, now, now
	if err := tx.PutAgentTest(&t); err != nil {
		return nil, err
	}
	_, err = s.record(ctx, tx, data.EventAgentTestCreated, t.WorkspaceID, &t)
	return &t, err
}

// checkTest is every rule of a test (validate.AgentTest, with the draft's tools), each
// criterion one the draft can satisfy (validate.AgentTestReachable), and its name unique
// among the agent's other tests.
func checkTest(t data.AgentTest, agent *data.StoredAgent, others []*data.AgentTest, self string) error {
	var errs validate.Errors
	for _, o := range others {
		if o.ID != self && o.Name == t.Name {
			errs.Addf("name", "The name field must be unique among the agent's tests: %s has it.", o.ID)
		}
	}
	return validate.Combine(validate.AgentTest(t, agent.LLMConfig.Tools), validate.AgentTestReachable(t, agent.LLMConfig.Tools), errs.Err())
}

// UpdateAgentTest implements data.AgentTestService.
func (s *AgentTestService) UpdateAgentTest(ctx context.Context, agentID, id string, in data.AgentTestUpdate) (*data.AgentTest, error) {
	var out *data.AgentTest
	err := s.store.Update(ctx, func(tx Tx) error {
		agent, stored, err := s.loadTest(ctx, tx, agentID, id)
		if err != nil {
			return err
		}
		if err := data.CheckIfMatch(data.IfMatch(ctx), stored); err != nil {
			return err
		}
		before := storedSnapshot(stored)
		next := in.Apply(*stored)
		existing, err := tx.AgentTests(agentID)
		if err != nil {
			return err
		}
		if err := checkInput(ctx, checkTest(next, agent, existing, id)); err != nil {
			return err
		}
		if unchangedSince(before, &next) {
			out = stored
			return errNothingToWrite // nothing changed: no write, no event (unchanged.go)
		}
		next.UpdatedAt = s.timeNow()
		if err := tx.PutAgentTest(&next); err != nil {
			return err
		}
		out = &next
		_, err = s.record(ctx, tx, data.EventAgentTestUpdated, next.WorkspaceID, out)
		return err
	})
	return out, err
}

// DeleteAgentTest implements data.AgentTestService.
func (s *AgentTestService) DeleteAgentTest(ctx context.Context, agentID, id string) error {
	return s.store.Update(ctx, func(tx Tx) error {
		_, stored, err := s.loadTest(ctx, tx, agentID, id)
		if err != nil {
			return err
		}
		if err := data.CheckIfMatch(data.IfMatch(ctx), stored); err != nil {
			return err
		}
		if err := tx.DeleteAgentTest(stored); err != nil {
			return err
		}
		_, err = s.record(ctx, tx, data.EventAgentTestDeleted, stored.WorkspaceID, stored)
		return err
	})
}

// AgentTestFromCall implements data.AgentTestService: the call's caller turns become the
// script (at most MaxTestMaxTurns of them, each cut to a turn's bound), and each tool the
// call used one of the agent's tools, a tool_called criterion.
func (s *AgentTestService) AgentTestFromCall(ctx context.Context, agentID, callID string) (*data.AgentTest, error) {
	p, err := workspaceCaller(ctx)
	if err != nil {
		return nil, err
	}
	var out *data.AgentTest
	err = s.store.Update(ctx, func(tx Tx) error {
		agent, err := s.testAgent(ctx, tx, agentID)
		if err != nil {
			return err
		}
		call, err := testCall(tx, p, agentID, callID)
		if err != nil {
			return err
		}
		t, err := testFromCall(call, agent)
		if err != nil {
			return err
		}
		if t.Variables, err = routedVariables(tx, p, call, t.Variables); err != nil {
			return err
		}
		existing, err := tx.AgentTests(agentID)
		if err != nil {
			return err
		}
		t.Name = uniqueTestName(t.Name, existing)
		out, err = s.insertTest(ctx, tx, agentID, t)
		return err
	})
	return out, err
}

// testCall is the call a test is made from: one the caller may read (call_history) and
// of agent agentID, else not found.
func testCall(tx Tx, p *data.Principal, agentID, callID string) (*data.Call, error) {
	call, err := tx.Call(callID)
	if err != nil {
		return nil, err
	}
	if call == nil || call.WorkspaceID != p.WorkspaceID || call.AgentID != agentID || p.Allows(data.Read(data.ModuleCallHistory)) != nil {
		return nil, data.NotFound("Call")
	}
	return call, nil
}

// CheckTestCall implements data.AgentTestService: the replay of a test made from a call
// holds the call's caller turns, so it reads the call again under the caller's access now.
func (s *AgentTestService) CheckTestCall(ctx context.Context, agentID, callID string) error {
	p, err := workspaceCaller(ctx)
	if err != nil {
		return err
	}
	return s.store.View(ctx, func(tx Tx) error {
		_, err := testCall(tx, p, agentID, callID)
		return err
	})
}

// testFromCall builds the scripted test of a call: its user turns, and tool_called for
// each tool of the agent its transcript shows called ("name(arguments) → result").
func testFromCall(call *data.Call, agent *data.StoredAgent) (data.AgentTest, error) {
	var script []string
	var criteria []data.Criterion
	setByTools := map[string]bool{}
	for _, it := range call.Transcript {
		switch it.Role {
		case data.ItemUser:
			if strings.TrimSpace(it.Content) != "" && len(script) < validate.MaxTestMaxTurns {
				script = append(script, cut(it.Content, validate.MaxTestTurn))
			}
		case data.ItemTool:
			name, _, ok := strings.Cut(it.Content, "(")
			if !ok || slices.ContainsFunc(criteria, func(c data.Criterion) bool { return c.Name == name }) {
				continue
			}
			tool := toolNamed(agent.LLMConfig.Tools, name)
			if tool == nil {
				continue
			}
			for _, v := range toolSetVariables(tool) {
				setByTools[v] = true
			}
			if len(criteria) < validate.MaxTestCriteria {
				criteria = append(criteria, data.Criterion{Type: data.CriterionToolCalled, Name: name})
			}
		}
	}
	if len(script) == 0 {
		return data.AgentTest{}, data.FieldError("call_id", "The call has no caller turns to make a script of.")
	}
	if len(criteria) == 0 {
		// A call that used no tool still proves the agent answers it: at least one criterion.
		criteria = append(criteria, data.Criterion{Type: data.CriterionSays, Pattern: `\S`})
	}
	t := data.AgentTest{Name: "From call " + call.ID, User: data.TestUser{Script: script},
		Variables: startVariables(call.Variables, setByTools, agent), MaxTurns: max(len(script), data.DefaultTestMaxTurns),
		Criteria: criteria, Repeat: data.DefaultTestRepeat}
	return t.Normalized(), nil
}

// toolSetVariables names the variables a call of tool sets: an extract_dynamic_variable's
// variables, a custom function's custom_function_variables.
func toolSetVariables(tool *data.Tool) []string {
	switch tool.Type {
	case data.ToolExtractDynamicVariable:
		names := make([]string, 0, len(tool.Variables))
		for _, v := range tool.Variables {
			names = append(names, v.Name)
		}
		return names
	case data.ToolCustomFunction:
		return tool.CustomFunctionVariables
	}
	return nil
}

// startVariables are the call's variables a test starts with: not those the tools it
// called set (a conversation's call keeps them at their end), which are what the call
// found out rather than what it began with; given at the start they would make a
// variable_equals criterion hold before the agent did anything. A name the configuration
// itself uses stays, since the test could not run without it.
func startVariables(vars map[string]any, setByTools map[string]bool, agent *data.StoredAgent) map[string]any {
	out := fromCallVariables(vars)
	used := conversation.ConfigVariables(&agent.AgentConfig)
	for name := range setByTools {
		if !slices.Contains(used, name) {
			delete(out, name)
		}
	}
	return out
}

// routedVariables lays the variables of the number that routed the call under vars: the
// call ran with them (docs/runtime.md, "How variables are filled") but its record keeps
// only the start's own, so a test without them would end in error. They are read as the
// number is now, and only by a caller who may read numbers (module phone_numbers).
func routedVariables(tx Tx, p *data.Principal, call *data.Call, vars map[string]any) (map[string]any, error) {
	if call.NumberID == nil || p.Allows(data.Read(data.ModulePhoneNumbers)) != nil {
		return vars, nil
	}
	n, err := tx.Number(*call.NumberID)
	if err != nil || n == nil || n.WorkspaceID != call.WorkspaceID {
		return vars, err
	}
	return fromCallVariables(conversation.Merge(n.Variables, vars)), nil
}

// fromCallVariables keeps the call's variables a test may hold (scalars).
func fromCallVariables(vars map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range vars {
		if len(out) == validate.MaxConversationVariables || len(k) > validate.MaxIdentifier || !conversation.ValidName(k) {
			continue
		}
		switch x := v.(type) {
		case string:
			if len([]rune(x)) <= validate.MaxVariableValue {
				out[k] = v
			}
		case bool:
			out[k] = v
		default:
			// Stored numbers decode as json.Number: kept when finite, as a test's rules ask.
			if _, ok := data.NumberFloat(v); ok {
				out[k] = v
			}
		}
	}
	return out
}

func toolNamed(tools []*data.Tool, name string) *data.Tool {
	for _, t := range tools {
		if t != nil && t.Name == name {
			return t
		}
	}
	return nil
}

// cut shortens s to at most n characters.
func cut(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n])
	}
	return s
}

// uniqueTestName is name, or name with a number after it when the agent has a test of
// that name already.
func uniqueTestName(name string, existing []*data.AgentTest) string {
	taken := func(n string) bool {
		return slices.ContainsFunc(existing, func(t *data.AgentTest) bool { return t.Name == n })
	}
	out := name
	for i := 2; taken(out); i++ {
		out = fmt.Sprintf("%s (%d)", name, i)
	}
	return out
}
