// Package agenttest runs agent tests (conventions §22): one repeat of a test is a text
// conversation through the conversation engine, with a scripted caller sending its turns
// or a simulated one played by the simulation model, custom functions answered by the
// test's mocks, and then every criterion judged with its evidence. Like the engine it is
// pure: it is handed the models and the retriever and stores nothing (the service keeps
// the results, docs/testing-agents.md).
package agenttest

import (
	"context"
	"slices"
	"time"

	"github.com/voiceapi/voiceapi/conversation"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/llm"
	"github.com/voiceapi/voiceapi/validate"
)

// Runner runs the tests of one agent configuration.
type Runner struct {
	// Config is the configuration under test, its api_key opened.
	Config data.AgentConfig
	// Agent is the agent's own model; Simulator plays simulated callers and judges.
	Agent     llm.Client
	Simulator llm.Client
	// SimulatorSettings are the simulation model's temperature and max tokens.
	SimulatorSettings Settings
	// Retriever searches the agent's knowledge bases; nil when it has none.
	Retriever conversation.Retriever
	// RunID names the run in the built-in variable call_id.
	RunID string
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// Settings are a model's sampling settings.
type Settings struct {
	Temperature *float64
	MaxTokens   int
}

func (r *Runner) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// Run runs one repeat of test t. A test that cannot be judged for a reason of its own (a
// variable the configuration uses and the test does not give) is a result with status
// error; a model that fails is the error returned (an *llm.Error), which the caller
// retries or records.
func (r *Runner) Run(ctx context.Context, t data.AgentTest, repeat int) (*data.TestCaseResult, error) {
	start := r.now()
	res := &data.TestCaseResult{TestID: t.ID, Repeat: repeat, StartedAt: data.NewTime(start),
		Criteria: []data.CriterionVerdict{}, Transcript: []data.ConversationItem{}, Variables: r.variables(t)}
	facts := r.facts()
	facts.Now = start
	if missing := conversation.MissingVariables(&r.Config, conversation.WithBuiltIns(res.Variables, facts)); len(missing) > 0 {
		return r.errored(res, data.ErrorMessage(data.MissingVariables(missing))), nil
	}
	conv, err := r.converse(ctx, t)
	if err != nil {
		return nil, err
	}
	res.Transcript, res.Variables, res.EndReason = conv.items, conv.vars, conv.end
	res.Usage, res.SimulationUsage = conv.usage, conv.simUsage
	res.Latency = latencies(conv.items)
	judged, err := r.judgeAll(ctx, t.Criteria, conv)
	if err != nil {
		return nil, err
	}
	res.Criteria = judged.verdicts
	res.SimulationUsage = res.SimulationUsage.Add(judged.usage)
	if judged.undecided != "" {
		return r.errored(res, judged.undecided), nil
	}
	res.Status = data.TestPassed
	for _, v := range res.Criteria {
		if !v.Passed {
			res.Status = data.TestFailed
		}
	}
	res.FinishedAt = data.NewTime(r.now())
	return res, nil
}

// variables are the test's values over the configuration's default_variables, as a
// conversation or a call start fills them (docs/runtime.md, "How variables are filled").
func (r *Runner) variables(t data.AgentTest) map[string]any {
	return conversation.Merge(r.Config.PromptConfig.DefaultVariables, t.Variables)
}

// facts are the built-ins' values: current_time in the configuration's timezone.
func (r *Runner) facts() conversation.CallFacts {
	return conversation.CallFacts{CallID: r.RunID, Location: r.Config.PromptConfig.Location()}
}

func (r *Runner) errored(res *data.TestCaseResult, msg string) *data.TestCaseResult {
	res.Status, res.Error = data.TestError, &msg
	res.FinishedAt = data.NewTime(r.now())
	return res
}

// conversationRecord is what a test's conversation gave.
type conversationRecord struct {
	items           []data.ConversationItem
	vars            map[string]any
	end             string
	usage, simUsage data.TokenUsage
}

// converse holds the test's conversation: the agent's opening, then the caller's turns
// and the agent's replies until the script runs out or the simulated caller hangs up
// (user_ended), a tool ends it (agent_ended, transferred) or the turns run out
// (max_turns).
func (r *Runner) converse(ctx context.Context, t data.AgentTest) (*conversationRecord, error) {
	e := &conversation.Engine{Config: r.Config, Model: r.Agent, Retriever: r.Retriever, Mocks: mocksOf(t.Mocks),
		Facts: r.facts(), Now: r.Now}
	rec := &conversationRecord{vars: r.variables(t)}
	open, err := e.Open(ctx, conversation.State{Variables: rec.vars}, data.ConversationObserver{})
	if err != nil {
		return nil, err
	}
	rec.items, rec.usage = append(rec.items, open.Items...), open.Usage
	caller := newCaller(r, t)
	for turn := 0; ; turn++ {
		if turn == t.MaxTurns {
			rec.end = data.EndMaxTurns
			break
		}
		text, hangUp, usage, err := caller.next(ctx, turn, rec.items)
		rec.simUsage = rec.simUsage.Add(usage)
		if err != nil {
			return nil, err
		}
		if text == "" {
			rec.end = data.EndUserEnded
			break
		}
		out, err := e.Reply(ctx, conversation.State{Variables: rec.vars, Items: rec.items}, text, data.ConversationObserver{})
		if err != nil {
			return nil, err
		}
		rec.items = append(rec.items, out.Items...)
		rec.vars = conversation.Merge(rec.vars, out.Variables)
		rec.usage = rec.usage.Add(out.Usage)
		if out.End != "" {
			rec.end = out.End
			break
		}
		if hangUp {
			rec.end = data.EndUserEnded
			break
		}
	}
	return rec, nil
}

// mocksOf is the engine's view of a test's mocks: each body as the tool returns it.
func mocksOf(m map[string]data.ToolMock) map[string]conversation.FunctionAnswer {
	out := make(map[string]conversation.FunctionAnswer, len(m))
	for name, mock := range m {
		out[name] = conversation.FunctionAnswer{Status: mock.Status, Body: validate.MockBody(mock.Body)}
	}
	return out
}

// latencies sums up the agent items' latencies: median and maximum of each.
func latencies(items []data.ConversationItem) data.TestLatency {
	var first, total []int64
	for _, it := range items {
		if it.Role == data.ItemAgent && it.LatencyMS != nil {
			first = append(first, it.LatencyMS.FirstToken)
			total = append(total, it.LatencyMS.Total)
		}
	}
	var out data.TestLatency
	out.FirstTokenP50, out.FirstTokenMax = median(first), maxOf(first)
	out.TotalP50, out.TotalMax = median(total), maxOf(total)
	return out
}

func median(v []int64) int64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[(len(s)-1)/2]
}

func maxOf(v []int64) int64 {
	if len(v) == 0 {
		return 0
	}
	return slices.Max(v)
}
