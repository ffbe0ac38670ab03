package agenttest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/llm"
)

// JudgePrompt opens the system prompt of a judge; a model that plays several parts (a
// test's fixture model) tells this part by it.
const JudgePrompt = "You are judging a test of a voice agent."

// VerdictTool is the tool a judge must call: its arguments are the verdict.
const VerdictTool = "verdict"

// verdictSchema is the verdict's shape: a structured answer, never free text.
var verdictSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"passed": map[string]any{"type": "boolean", "description": "Whether the conversation meets the criterion."},
		"reason": map[string]any{"type": "string", "description": "Why, in one or two sentences, quoting the conversation."},
		"item":   map[string]any{"type": "integer", "description": "The number in brackets of the transcript line the verdict rests on, when one does."},
	},
	"required": []string{"passed", "reason"},
}

// judgeAll judges every criterion: those a rule decides at once, judge criteria by the
// simulation model.
func (r *Runner) judgeAll(ctx context.Context, criteria []data.Criterion, conv *conversationRecord) (*judged, error) {
	out := &judged{verdicts: make([]data.CriterionVerdict, 0, len(criteria))}
	for _, c := range criteria {
		if c.Type != data.CriterionJudge {
			out.verdicts = append(out.verdicts, Evaluate(c, conv.items, conv.vars, conv.end))
			continue
		}
		v, usage, err := r.judge(ctx, c, conv)
		if err != nil {
			return nil, err
		}
		if v.Reason == noVerdict && out.undecided == "" {
			out.undecided = fmt.Sprintf("The judge of criteria.%d answered without calling %s: the criterion could not be judged.", len(out.verdicts), VerdictTool)
		}
		out.usage = out.usage.Add(usage)
		out.verdicts = append(out.verdicts, v)
	}
	return out, nil
}

// judge asks the simulation model whether the transcript meets c, forcing a call of the
// verdict tool; the line it names, if any, is the evidence. A reply without a readable
// verdict is not a verdict: its reason is
// noVerdict, and the repeat cannot be judged.
func (r *Runner) judge(ctx context.Context, c data.Criterion, conv *conversationRecord) (data.CriterionVerdict, data.TokenUsage, error) {
	v := data.CriterionVerdict{Criterion: c}
	req := llm.Request{
		System: JudgePrompt + " Read the transcript of a conversation between a caller and the agent, and decide whether the " +
			"conversation meets the criterion. Answer only by calling the " + VerdictTool + " tool.",
		Messages: []llm.Message{{Role: llm.RoleUser, Content: "Transcript:\n" + TranscriptText(conv.items) +
			"\n\nThe conversation ended: " + conv.end + "\n\nCriterion: " + c.Criterion}},
		Tools:       []llm.Tool{{Name: VerdictTool, Description: "Give the verdict.", Parameters: verdictSchema}},
		ToolChoice:  llm.ToolChoice{Mode: "tool", Name: VerdictTool},
		Temperature: r.SimulatorSettings.Temperature,
		MaxTokens:   r.SimulatorSettings.MaxTokens,
	}
	reply, err := r.Simulator.Complete(ctx, req, nil)
	if err != nil {
		return v, data.TokenUsage{}, err
	}
	usage := data.TokenUsage{InputTokens: reply.Usage.InputTokens, OutputTokens: reply.Usage.OutputTokens}
	for _, tc := range reply.ToolCalls {
		if tc.Name != VerdictTool {
			continue
		}
		var verdict struct {
			Passed *bool  `json:"passed"`
			Reason string `json:"reason"`
			Item   *int   `json:"item"`
		}
		if err := json.Unmarshal([]byte(tc.Arguments), &verdict); err != nil || verdict.Passed == nil {
			break
		}
		v.Passed, v.Reason = *verdict.Passed, strings.TrimSpace(verdict.Reason)
		if i := verdict.Item; i != nil && *i >= 0 && *i < len(conv.items) {
			v.Evidence = evidence(conv.items, *i)
		}
		if v.Reason == "" {
			v.Reason = "The judge gave no reason."
		}
		return v, usage, nil
	}
	v.Reason = noVerdict
	return v, usage, nil
}

// noVerdict is the reason of a judge criterion whose judge gave no verdict.
const noVerdict = "The judge gave no verdict."

// TranscriptText is a conversation as a judge reads it: one line an item.
func TranscriptText(items []data.ConversationItem) string {
	var b strings.Builder
	for i, it := range items {
		switch it.Role {
		case data.ItemUser:
			fmt.Fprintf(&b, "[%d] Caller: %s\n", i, it.Content)
		case data.ItemAgent:
			if it.Content != "" {
				fmt.Fprintf(&b, "[%d] Agent: %s\n", i, it.Content)
			}
		case data.ItemTool:
			fmt.Fprintf(&b, "[%d] Tool: %s\n", i, it.Content)
		}
	}
	return b.String()
}
