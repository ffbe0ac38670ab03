package validate

import (
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/voiceapi/voiceapi/data"
)

// AgentTestReachable checks, beyond AgentTest, that each criterion is one the agent's
// draft (tools) can satisfy at all: a test written or changed through the API that cannot
// pass would only block the publish gate, and its author learns why now rather than from
// a failed run. An import does not apply it: a test exported as it was stored (its
// agent's end_call tool removed since, say) imports, and fails its runs as it did.
func AgentTestReachable(t data.AgentTest, tools []*data.Tool) error {
	var errs Errors
	for i, c := range t.Criteria {
		path := Index("criteria", i)
		switch c.Type {
		case data.CriterionEndsWith:
			endReasonReachable(&errs, path+".reason", c.Reason, tools)
		case data.CriterionToolCalled:
			if tool := toolOf(tools, c.Name); tool != nil && c.Arguments != nil {
				argumentsReachable(&errs, path+".arguments", tool, c.Arguments)
			}
		}
	}
	return errs.Err()
}

// endTools are the tool types without which a conversation never ends with a reason.
var endTools = map[string]string{
	data.EndAgentEnded:  data.ToolEndCall,
	data.EndTransferred: data.ToolTransferCall,
}

// endReasonReachable checks that the agent has a tool able to end a conversation so.
func endReasonReachable(errs *Errors, path, reason string, tools []*data.Tool) {
	need, ok := endTools[reason]
	if !ok {
		return
	}
	for _, t := range tools {
		if t != nil && t.Type == need {
			return
		}
	}
	errs.Addf(path, "The agent has no %s tool, so a conversation with it never ends %s: give its draft one, or expect another reason.", need, reason)
}

// ivrDigits is what press_ivr accepts (conversation.ToolSchema offers the model the same).
var ivrDigits = regexp.MustCompile(`^[0-9*#]{1,20}$`)

// toolArgument says what one argument of a built-in tool takes: a description for the
// message, and whether a value fits.
type toolArgument struct {
	takes string
	fits  func(v any) bool
}

// builtinArguments are the arguments a built-in tool's call carries, as the model is
// offered them; nil for a custom_function, whose schema is its author's and is not read
// here.
func builtinArguments(t *data.Tool) map[string]toolArgument {
	isString := func(v any) bool { _, ok := v.(string); return ok }
	switch t.Type {
	case data.ToolEndCall:
		return map[string]toolArgument{}
	case data.ToolTransferCall:
		names := make([]string, 0, len(t.PhoneDirectory))
		for _, e := range t.PhoneDirectory {
			names = append(names, e.Name)
		}
		return map[string]toolArgument{"destination": {
			takes: "one of its phone directory's names (" + strings.Join(names, ", ") + ")",
			fits:  func(v any) bool { s, ok := v.(string); return ok && slices.Contains(names, s) }}}
	case data.ToolPressIVR:
		return map[string]toolArgument{"digits": {
			takes: "1 to 20 of the keys 0-9, * and #",
			fits:  func(v any) bool { s, ok := v.(string); return ok && ivrDigits.MatchString(s) }}}
	case data.ToolSendSMS:
		if t.ContentType != "prompt" {
			return map[string]toolArgument{}
		}
		return map[string]toolArgument{"message": {takes: "a non-empty string",
			fits: func(v any) bool { s, ok := v.(string); return ok && s != "" }}}
	case data.ToolExtractDynamicVariable:
		out := map[string]toolArgument{}
		for _, v := range t.Variables {
			switch v.Type {
			case "number":
				out[v.Name] = toolArgument{takes: "a number", fits: func(x any) bool { _, ok := data.NumberFloat(x); return ok }}
			case "boolean":
				out[v.Name] = toolArgument{takes: "a boolean", fits: func(x any) bool { _, ok := x.(bool); return ok }}
			case "enum":
				choices := v.Choices
				out[v.Name] = toolArgument{takes: "one of " + strings.Join(choices, ", "),
					fits: func(x any) bool { s, ok := x.(string); return ok && slices.Contains(choices, s) }}
			default:
				out[v.Name] = toolArgument{takes: "a string", fits: isString}
			}
		}
		return out
	}
	return nil
}

// argumentsReachable checks a tool_called criterion's arguments against what the
// built-in tool's calls can carry: a member it has no argument for, or a value its
// argument never takes, can never be matched.
func argumentsReachable(errs *Errors, path string, t *data.Tool, args map[string]any) {
	takes := builtinArguments(t)
	if takes == nil {
		return
	}
	names := make([]string, 0, len(takes))
	for k := range takes {
		names = append(names, k)
	}
	sort.Strings(names)
	keys := make([]string, 0, len(args))
	for k := range args {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		p := Join(path, k)
		a, ok := takes[k]
		switch {
		case !ok && len(names) == 0:
			errs.Addf(p, "The %s member can never match: the %s tool (%s) takes no arguments.", p, t.Name, t.Type)
		case !ok:
			errs.Addf(p, "The %s member can never match: the %s tool (%s) takes only %s.", p, t.Name, t.Type, strings.Join(names, ", "))
		case !a.fits(args[k]):
			errs.Addf(p, "The %s member can never match: the %s tool's %s is %s.", p, t.Name, k, a.takes)
		}
	}
}
