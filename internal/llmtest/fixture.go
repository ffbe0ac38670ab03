package llmtest

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/voiceapi/voiceapi/agenttest"
	"github.com/voiceapi/voiceapi/llm"
)

// Fixture is a deterministic language model for agent tests, installed with
// Server.Respond(f.Respond). It plays three parts, told apart by the system prompt (the
// agent tests' caller and judge prompts open with agenttest.CallerPrompt and
// agenttest.JudgePrompt; anything else is the agent):
//
//   - the agent: the first rule whose When the caller's last message holds (ignoring
//     case) answers; a request carrying tool results gets AfterTools; else AgentDefault.
//   - a simulated caller: the lines Callers holds for its persona, one a turn, then it
//     calls the hang_up tool (an unknown persona hangs up at once);
//   - a judge: a verdict that passes when the transcript holds the phrase the criterion
//     quotes in double quotes (ignoring case), or always when it quotes none; its reason
//     says which, and the first line holding the phrase is the item it names.
type Fixture struct {
	Agent        []Rule
	AgentDefault Reply
	AfterTools   Reply
	Callers      map[string][]string
}

// Rule is one of the fixture agent's answers: Reply when the caller's last message holds
// When.
type Rule struct {
	When  string
	Reply Reply
}

// Respond answers a request as the part it asks for.
func (f *Fixture) Respond(r Request) Reply {
	switch {
	case strings.HasPrefix(r.System, agenttest.JudgePrompt):
		return judgeReply(r)
	case strings.HasPrefix(r.System, agenttest.CallerPrompt):
		return f.callerReply(r)
	case len(r.ToolResults()) > 0:
		return f.AfterTools
	}
	last := strings.ToLower(r.LastUserText())
	for _, rule := range f.Agent {
		if strings.Contains(last, strings.ToLower(rule.When)) {
			return rule.Reply
		}
	}
	return f.AgentDefault
}

var personaRe = regexp.MustCompile(`Who you are: (.*)\n`)

// callerReply says the persona's next line: as many lines are said as the caller has
// assistant messages in the request.
func (f *Fixture) callerReply(r Request) Reply {
	persona := ""
	if m := personaRe.FindStringSubmatch(r.System); m != nil {
		persona = m[1]
	}
	said := 0
	for _, m := range r.Messages {
		if m.Role == llm.RoleAssistant {
			said++
		}
	}
	lines := f.Callers[persona]
	if said >= len(lines) {
		return Calls(llm.ToolCall{Name: agenttest.HangUpTool, Arguments: "{}"})
	}
	return Text(lines[said])
}

var quotedRe = regexp.MustCompile(`"([^"]+)"`)

// judgeReply gives the verdict as the forced call of the verdict tool.
func judgeReply(r Request) Reply {
	text := ""
	for _, m := range r.Messages {
		text += m.Content
	}
	transcript, criterion, _ := strings.Cut(text, "\nCriterion: ")
	verdict := map[string]any{"passed": true, "reason": "The criterion quotes nothing to look for."}
	if m := quotedRe.FindStringSubmatch(criterion); m != nil {
		phrase := strings.ToLower(m[1])
		verdict["passed"], verdict["reason"] = false, fmt.Sprintf("The transcript does not mention %q.", m[1])
		for _, line := range strings.Split(transcript, "\n") {
			var item int
			if _, err := fmt.Sscanf(line, "[%d]", &item); err == nil && strings.Contains(strings.ToLower(line), phrase) {
				verdict["passed"], verdict["reason"], verdict["item"] = true, fmt.Sprintf("The transcript mentions %q.", m[1]), item
				break
			}
		}
	}
	args, _ := json.Marshal(verdict)
	return Calls(llm.ToolCall{Name: agenttest.VerdictTool, Arguments: string(args)})
}
