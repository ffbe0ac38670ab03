package agenttest

import (
	"context"
	"strings"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/llm"
)

// CallerPrompt opens the system prompt of a simulated caller; a model that plays several
// parts (a test's fixture model) tells this part by it.
const CallerPrompt = "You are playing a caller who phones a voice agent, to test the agent."

// HangUpTool is the tool a simulated caller calls to end the call.
const HangUpTool = "hang_up"

// callerOpens is the user message a simulated caller reads when it speaks first: a model
// is asked nothing without one.
const callerOpens = "(The call connects. You speak first.)"

// caller gives the test's caller turns: the text of turn n (0 first) and whether the
// caller hangs up after it; "" ends the call at once.
type caller interface {
	next(ctx context.Context, turn int, items []data.ConversationItem) (text string, hangUp bool, usage data.TokenUsage, err error)
}

func newCaller(r *Runner, t data.AgentTest) caller {
	if !t.User.Simulated() {
		return scripted(t.User.Script)
	}
	return &simulated{r: r, persona: t.User.Persona, goal: t.User.Goal}
}

// scripted sends a script's turns in order and ends when they run out.
type scripted []string

func (s scripted) next(_ context.Context, turn int, _ []data.ConversationItem) (string, bool, data.TokenUsage, error) {
	if turn >= len(s) {
		return "", false, data.TokenUsage{}, nil
	}
	return s[turn], false, data.TokenUsage{}, nil
}

// simulated is a caller the simulation model plays from a persona and a goal.
type simulated struct {
	r             *Runner
	persona, goal string
}

func (c *simulated) next(ctx context.Context, _ int, items []data.ConversationItem) (string, bool, data.TokenUsage, error) {
	req := llm.Request{
		System: CallerPrompt + "\n\nWho you are: " + c.persona + "\n\nWhat you want from this call: " + c.goal +
			"\n\nSpeak only as the caller, in short natural turns, one at a time, as on the phone. Never say you are an AI or a test. " +
			"When your goal is reached, or the call cannot go on, say goodbye if you wish and call the " + HangUpTool + " tool.",
		Messages: callerView(items),
		Tools: []llm.Tool{{Name: HangUpTool, Description: "End the call: you have nothing more to say.",
			Parameters: map[string]any{"type": "object", "properties": map[string]any{}}}},
		Temperature: c.r.SimulatorSettings.Temperature,
		MaxTokens:   c.r.SimulatorSettings.MaxTokens,
	}
	reply, err := c.r.Simulator.Complete(ctx, req, nil)
	if err != nil {
		return "", false, data.TokenUsage{}, err
	}
	usage := data.TokenUsage{InputTokens: reply.Usage.InputTokens, OutputTokens: reply.Usage.OutputTokens}
	hangUp := false
	for _, tc := range reply.ToolCalls {
		hangUp = hangUp || tc.Name == HangUpTool
	}
	return strings.TrimSpace(reply.Text), hangUp, usage, nil
}

// callerView is the conversation as the caller sees it: the agent's words are what it
// hears (user messages), its own turns what it said (assistant messages). Tool items are
// the agent's business and stay out. Turns of one side in a row become one message and the
// view ends with the agent's side, as every provider's protocol wants.
func callerView(items []data.ConversationItem) []llm.Message {
	out := []llm.Message{{Role: llm.RoleUser, Content: callerOpens}}
	add := func(role llm.Role, text string) {
		if last := &out[len(out)-1]; last.Role == role {
			if last.Content == callerOpens || last.Content == callerSilence {
				last.Content = text
			} else {
				last.Content += "\n" + text
			}
			return
		}
		out = append(out, llm.Message{Role: role, Content: text})
	}
	for _, it := range items {
		switch {
		case it.Role == data.ItemUser:
			add(llm.RoleAssistant, it.Content)
		case it.Role == data.ItemAgent && it.Content != "":
			add(llm.RoleUser, it.Content)
		}
	}
	if out[len(out)-1].Role != llm.RoleUser {
		out = append(out, llm.Message{Role: llm.RoleUser, Content: callerSilence})
	}
	return out
}

// callerSilence is what the caller hears when the agent said nothing back.
const callerSilence = "(The agent says nothing.)"
