package agenttest_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/agenttest"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/llmtest"
	"github.com/voiceapi/voiceapi/llm"
)

// restaurant is an agent with a booking function, an extraction and a hang-up, and the
// fixture model that plays it, its simulated callers and its judge.
func restaurant(t *testing.T) (*agenttest.Runner, *llmtest.Server) {
	t.Helper()
	stand := llmtest.New(t, data.LLMInternal)
	f := &llmtest.Fixture{
		Agent: []llmtest.Rule{
			{When: "table", Reply: llmtest.Calls(llm.ToolCall{Name: "book", Arguments: `{"people":2}`})},
			{When: "vip", Reply: llmtest.Calls(llm.ToolCall{Name: "note", Arguments: `{"vip":true}`})},
			{When: "bye", Reply: llmtest.Reply{Text: "Goodbye!", ToolCalls: []llm.ToolCall{{Name: "hang_up", Arguments: "{}"}}}},
		},
		AgentDefault: llmtest.Text("How can I help?"),
		AfterTools:   llmtest.Text("Done: you're booked."),
		Callers:      map[string][]string{"A hungry regular": {"A table for two, please.", "Thanks, bye"}},
	}
	stand.Respond(f.Respond)
	client, err := llm.New(stand.Config(), stand.Options())
	if err != nil {
		t.Fatal(err)
	}
	temp := 0.0
	cfg := data.DefaultAgentConfig()
	cfg.PromptConfig.Prompt = "You take bookings for {{shop}}."
	cfg.PromptConfig.WelcomeMessage = "Hi, {{shop}} here."
	params := `{"type":"object","properties":{"people":{"type":"integer"}},"required":["people"]}`
	cfg.LLMConfig.Tools = []*data.Tool{
		{Name: "book", Type: data.ToolCustomFunction, APIEndpoint: "http://192.0.2.1/never-called", CustomFunctionParameters: &params,
			CustomFunctionVariables: []string{"booking_id"}},
		{Name: "note", Type: data.ToolExtractDynamicVariable, Variables: []data.ToolVariable{{Type: "boolean", Name: "vip", Description: "VIP"}}},
		{Name: "hang_up", Type: data.ToolEndCall},
	}
	at := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	return &agenttest.Runner{Config: cfg, Agent: client, Simulator: client, SimulatorSettings: agenttest.Settings{Temperature: &temp},
		RunID: "trun_1", Now: func() time.Time { at = at.Add(10 * time.Millisecond); return at }}, stand
}

func scriptedTest() data.AgentTest {
	return data.AgentTestCreate{Name: "books", User: data.TestUser{Script: []string{"A table for two", "Thanks, bye"}},
		Variables: map[string]any{"shop": "Trattoria"},
		Mocks:     map[string]data.ToolMock{"book": {Status: 200, Body: map[string]any{"booking_id": "B7"}}},
		Criteria: []data.Criterion{
			{Type: data.CriterionToolCalled, Name: "book", Arguments: map[string]any{"people": 2.0}},
			{Type: data.CriterionVariableEquals, Name: "booking_id", Value: "B7"},
			{Type: data.CriterionSays, Pattern: "booked"},
			{Type: data.CriterionEndsWith, Reason: data.EndAgentEnded},
			{Type: data.CriterionJudge, Criterion: `The agent says "goodbye".`},
			{Type: data.CriterionJudge, Criterion: `The agent offers "dessert".`},
		}}.NewAgentTest()
}

// TestRunScripted: the script's turns go in order, the custom function answers from its
// mock (its endpoint, on a reserved address, is never asked), the mock's JSON sets the
// variable it names, the agent's end_call ends the conversation, and each criterion is
// judged, the judge's through a forced verdict call.
func TestRunScripted(t *testing.T) {
	r, stand := restaurant(t)
	res, err := r.Run(context.Background(), scriptedTest(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if res.EndReason != data.EndAgentEnded || res.Status != data.TestFailed {
		t.Fatalf("end %s, status %s; want agent_ended and failed (the dessert criterion)", res.EndReason, res.Status)
	}
	want := []bool{true, true, true, true, true, false}
	for i, v := range res.Criteria {
		if v.Passed != want[i] {
			t.Errorf("criteria.%d (%s): passed %v, want %v: %s", i, v.Criterion.Type, v.Passed, want[i], v.Reason)
		}
	}
	if r := res.Criteria[4].Reason; !strings.Contains(r, `mentions "goodbye"`) {
		t.Errorf("the judge's reason = %q", r)
	}
	if res.Transcript[0].Content != "Hi, Trattoria here." || res.Transcript[1].Content != "A table for two" {
		t.Errorf("transcript starts %q, %q", res.Transcript[0].Content, res.Transcript[1].Content)
	}
	var judged int
	for _, req := range stand.Requests() {
		if strings.HasPrefix(req.System, agenttest.JudgePrompt) {
			judged++
			if req.ToolChoice.Mode != "tool" || req.ToolChoice.Name != agenttest.VerdictTool {
				t.Errorf("a judge's request does not force the verdict: %+v", req.ToolChoice)
			}
		}
	}
	if judged != 2 {
		t.Errorf("%d judge requests, want 2", judged)
	}
	if res.Usage.InputTokens == 0 || res.SimulationUsage.InputTokens == 0 || res.Latency.TotalMax < res.Latency.TotalP50 {
		t.Errorf("usage %+v, simulation %+v, latency %+v", res.Usage, res.SimulationUsage, res.Latency)
	}
}

// TestRunSimulated: a simulated caller says its persona's lines, hears the agent, and
// hangs up when it has nothing more to say (user_ended).
func TestRunSimulated(t *testing.T) {
	r, stand := restaurant(t)
	test := scriptedTest()
	test.User = data.TestUser{Persona: "A hungry regular", Goal: "Book a table"}
	test.Criteria = []data.Criterion{{Type: data.CriterionToolCalled, Name: "book"}, {Type: data.CriterionEndsWith, Reason: data.EndAgentEnded}}
	res, err := r.Run(context.Background(), test, 1)
	if err != nil {
		t.Fatal(err)
	}
	var said []string
	for _, it := range res.Transcript {
		if it.Role == data.ItemUser {
			said = append(said, it.Content)
		}
	}
	if strings.Join(said, "|") != "A table for two, please.|Thanks, bye" || res.Status != data.TestPassed {
		t.Fatalf("the caller said %q, status %s (%+v)", said, res.Status, res.Criteria)
	}
	// The caller sees the agent's words as what it hears.
	for _, req := range stand.Requests() {
		if strings.HasPrefix(req.System, agenttest.CallerPrompt) && (len(req.Messages) == 0 || req.Messages[0].Role != llm.RoleUser) {
			t.Errorf("a caller request does not open with the agent's words: %+v", req.Messages)
		}
	}
}

// TestRunEnds: a script that runs out ends user_ended; a simulated caller still talking at
// max_turns ends max_turns; a variable the configuration uses and the test does not give
// is an error result, never a conversation.
func TestRunEnds(t *testing.T) {
	r, _ := restaurant(t)
	test := scriptedTest()
	test.User.Script = []string{"hello"}
	test.Criteria = []data.Criterion{{Type: data.CriterionEndsWith, Reason: data.EndUserEnded}}
	if res, err := r.Run(context.Background(), test, 1); err != nil || res.Status != data.TestPassed || res.EndReason != data.EndUserEnded {
		t.Errorf("a finished script: %v %+v", err, res)
	}
	test.User = data.TestUser{Persona: "A chatterbox", Goal: "Talk"}
	test.MaxTurns = 3
	r.Simulator = chatterbox{}
	res, err := r.Run(context.Background(), test, 2)
	if err != nil || res.EndReason != data.EndMaxTurns || res.Repeat != 2 {
		t.Fatalf("a caller that never hangs up: %v, end %s", err, res.EndReason)
	}
	if n := strings.Count(agenttest.TranscriptText(res.Transcript), "Caller:"); n != 3 {
		t.Errorf("%d caller turns, want max_turns (3)", n)
	}
	test.Variables = map[string]any{}
	res, err = r.Run(context.Background(), test, 1)
	if err != nil || res.Status != data.TestError || res.Error == nil || !strings.Contains(*res.Error, "shop") || len(res.Transcript) != 0 {
		t.Errorf("a missing variable: %v %+v", err, res)
	}
}

// chatterbox is a simulated caller that always talks.
type chatterbox struct{}

func (chatterbox) Complete(context.Context, llm.Request, func(string) error) (*llm.Reply, error) {
	return &llm.Reply{Text: "And another thing…"}, nil
}
func (chatterbox) Provider() string { return "internal" }

// TestRunProviderFailure: the agent's provider failing is the error returned, an
// *llm.Error telling whether it is worth retrying.
func TestRunProviderFailure(t *testing.T) {
	r, stand := restaurant(t)
	stand.Queue(llmtest.Fail(429, "slow down"))
	_, err := r.Run(context.Background(), scriptedTest(), 1)
	var le *llm.Error
	if !errors.As(err, &le) || !le.Retryable || le.Status != 429 {
		t.Fatalf("a 429: %v", err)
	}
	stand.Queue(llmtest.Fail(401, "bad key"))
	_, err = r.Run(context.Background(), scriptedTest(), 1)
	if !errors.As(err, &le) || le.Retryable || !strings.Contains(data.ErrorMessage(err), "bad key") {
		t.Fatalf("a 401: %v", err)
	}
}

// TestRunFillsDefaultVariables: a test's conversation is filled as a conversation or a
// call start is: the configuration's default_variables under the test's own, and
// current_time in its timezone. A test that leaves a defaulted variable out runs.
func TestRunFillsDefaultVariables(t *testing.T) {
	r, _ := restaurant(t)
	r.Config.PromptConfig.DefaultVariables = map[string]any{"shop": "Bistro", "table": 4}
	r.Config.PromptConfig.Timezone = "Europe/Paris"
	r.Config.PromptConfig.WelcomeMessage = "Hi, {{shop}} here, table {{table}}, {{current_time}}."
	test := scriptedTest()
	test.Criteria = []data.Criterion{{Type: data.CriterionSays, Pattern: "Bistro"}}
	test.Variables = map[string]any{"table": 7}
	res, err := r.Run(context.Background(), test, 1)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != data.TestPassed {
		t.Fatalf("status %s (error %v), want passed: the default gives shop", res.Status, res.Error)
	}
	if got, want := res.Transcript[0].Content, "Hi, Bistro here, table 7, 2026-11-21T11:00:00+01:00."; got != want {
		t.Errorf("opening %q, want %q", got, want)
	}
	if res.Variables["shop"] != "Bistro" || res.Variables["table"] != 7 {
		t.Errorf("variables %v", res.Variables)
	}
}
