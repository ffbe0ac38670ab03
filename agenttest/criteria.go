package agenttest

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"strings"

	"github.com/voiceapi/voiceapi/data"
)

// judged is every criterion's verdict and what the judge's calls cost; undecided says why
// a judge gave no verdict ("" when every one did).
type judged struct {
	verdicts  []data.CriterionVerdict
	usage     data.TokenUsage
	undecided string
}

// Evaluate judges the criteria that need no model (every type but judge) against a
// conversation's items, its variables at the end and why it ended.
func Evaluate(c data.Criterion, items []data.ConversationItem, vars map[string]any, end string) data.CriterionVerdict {
	v := data.CriterionVerdict{Criterion: c}
	switch c.Type {
	case data.CriterionToolCalled:
		toolCalled(&v, items)
	case data.CriterionToolNotCalled:
		if i := indexOf(items, func(it data.ConversationItem) bool { return isCall(it, c.Name) }); i >= 0 {
			v.Evidence, v.Reason = evidence(items, i), fmt.Sprintf("The agent called %s.", c.Name)
		} else {
			v.Passed, v.Reason = true, fmt.Sprintf("The agent never called %s.", c.Name)
		}
	case data.CriterionSays, data.CriterionNotSays:
		says(&v, items)
	case data.CriterionVariableEquals:
		variableEquals(&v, items, vars)
	case data.CriterionEndsWith:
		v.Passed = end == c.Reason
		v.Reason = fmt.Sprintf("The conversation ended with %s.", end)
		if len(items) > 0 {
			v.Evidence = evidence(items, len(items)-1)
		}
	case data.CriterionMaxLatencyMS:
		maxLatency(&v, items)
	default:
		v.Reason = fmt.Sprintf("The criterion type %q is not known.", c.Type)
	}
	return v
}

// isCall reports whether it is a call of the tool name.
func isCall(it data.ConversationItem, name string) bool {
	return it.Role == data.ItemTool && it.ToolCall != nil && it.ToolCall.Name == name
}

func indexOf(items []data.ConversationItem, match func(data.ConversationItem) bool) int {
	for i, it := range items {
		if match(it) {
			return i
		}
	}
	return -1
}

func evidence(items []data.ConversationItem, i int) *data.TestEvidence {
	return &data.TestEvidence{Item: i, Content: items[i].Content}
}

// toolCalled passes on the first call of the tool that ran (its arguments passed the
// tool's schema) with arguments holding the criterion's as a subset.
func toolCalled(v *data.CriterionVerdict, items []data.ConversationItem) {
	c := v.Criterion
	first := -1
	for i, it := range items {
		if !isCall(it, c.Name) {
			continue
		}
		if first < 0 {
			first = i
		}
		if !it.ToolCall.Error && subset(c.Arguments, it.ToolCall.Arguments) {
			v.Passed, v.Evidence, v.Reason = true, evidence(items, i), fmt.Sprintf("The agent called %s.", c.Name)
			return
		}
	}
	if first < 0 {
		v.Reason = fmt.Sprintf("The agent never called %s.", c.Name)
		return
	}
	want, _ := json.Marshal(c.Arguments)
	v.Evidence = evidence(items, first)
	v.Reason = fmt.Sprintf("The agent called %s, but never successfully with arguments holding %s.", c.Name, want)
}

// subset reports whether have holds want: each member of an object (recursively), an
// array or scalar equal as JSON values.
func subset(want map[string]any, have any) bool {
	obj, ok := have.(map[string]any)
	if !ok {
		return len(want) == 0
	}
	for k, w := range want {
		h, ok := obj[k]
		if !ok {
			return false
		}
		if wm, isObj := w.(map[string]any); isObj {
			// An object asked for, even {}, is matched by an object only.
			if hm, isObj := h.(map[string]any); !isObj || !subset(wm, hm) {
				return false
			}
			continue
		}
		if !sameJSON(w, h) {
			return false
		}
	}
	return true
}

// sameJSON compares two decoded JSON values by their meaning: numbers as numbers (see
// sameNumber), inside arrays too.
func sameJSON(a, b any) bool {
	if xs, ok := a.([]any); ok {
		ys, ok := b.([]any)
		if !ok || len(xs) != len(ys) {
			return false
		}
		for i := range xs {
			if !sameJSON(xs[i], ys[i]) {
				return false
			}
		}
		return true
	}
	if xm, ok := a.(map[string]any); ok {
		ym, ok := b.(map[string]any)
		if !ok || len(xm) != len(ym) {
			return false
		}
		for k, x := range xm {
			if y, ok := ym[k]; !ok || !sameJSON(x, y) {
				return false
			}
		}
		return true
	}
	_, okA := number(a)
	_, okB := number(b)
	if okA || okB {
		return okA && okB && sameNumber(a, b)
	}
	return reflect.DeepEqual(a, b)
}

// sameNumber compares two numbers. Kept as text (json.Number, as a criterion's arguments
// and a tool call's are) or integers, they compare as exact decimal values: 1, 1.0 and 1e0
// are equal, 12345678901234567890 and 12345678901234567891 are not. A float64 was rounded
// by the decoder that made it, so against one both compare as float64: exactness there
// would make a number unequal to itself read another way.
func sameNumber(a, b any) bool {
	da, exactA := data.DecimalKey(a)
	db, exactB := data.DecimalKey(b)
	if exactA && exactB {
		return da == db
	}
	fa, _ := number(a)
	fb, _ := number(b)
	return fa == fb
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case int:
		return float64(n), true
	case json.Number:
		f, err := n.Float64()
		// A number too large for float64 is still a number (±Inf here); sameNumber
		// compares it exactly.
		return f, err == nil || data.IsJSONNumber(string(n))
	}
	return 0, false
}

// says passes (says) on the first agent turn the pattern matches, or (not_says) when none
// does; the pattern was checked when the test was written.
func says(v *data.CriterionVerdict, items []data.ConversationItem) {
	c := v.Criterion
	re, err := regexp.Compile(c.Pattern)
	if err != nil {
		v.Reason = fmt.Sprintf("The pattern is not valid RE2: %v.", err)
		return
	}
	for i, it := range items {
		if it.Role != data.ItemAgent || it.Content == "" {
			continue
		}
		if loc := re.FindStringIndex(it.Content); loc != nil {
			v.Evidence = evidence(items, i)
			v.Passed = c.Type == data.CriterionSays
			v.Reason = fmt.Sprintf("The agent said %q.", it.Content[loc[0]:loc[1]])
			return
		}
	}
	v.Passed = c.Type == data.CriterionNotSays
	v.Reason = fmt.Sprintf("No turn of the agent matches %s.", c.Pattern)
}

// variableEquals compares the variable at the conversation's end; the evidence is the
// last tool item that set it.
func variableEquals(v *data.CriterionVerdict, items []data.ConversationItem, vars map[string]any) {
	c := v.Criterion
	want, _ := json.Marshal(c.Value)
	for i := len(items) - 1; i >= 0; i-- {
		if setsVariable(items[i], c.Name) {
			v.Evidence = evidence(items, i)
			break
		}
	}
	got, ok := vars[c.Name]
	if !ok {
		v.Reason = fmt.Sprintf("The variable %s was never set (want %s).", c.Name, want)
		return
	}
	have, _ := json.Marshal(got)
	v.Passed = sameJSON(c.Value, got)
	v.Reason = fmt.Sprintf("The variable %s is %s (want %s).", c.Name, have, want)
}

// setsVariable reports whether a tool item set the variable: an extraction's arguments
// or a custom function's answer naming it.
func setsVariable(it data.ConversationItem, name string) bool {
	if it.Role != data.ItemTool || it.ToolCall == nil || it.ToolCall.Error {
		return false
	}
	if res, ok := it.ToolCall.Result.(map[string]any); ok {
		if set, ok := res["set"].(map[string]any); ok {
			_, has := set[name]
			return has
		}
		if body, ok := res["body"].(string); ok {
			var obj map[string]any
			if json.Unmarshal([]byte(body), &obj) == nil {
				_, has := obj[name]
				return has
			}
		}
	}
	return false
}

// maxLatency passes when every agent reply's whole latency is at most the value; the
// evidence is the slowest reply.
func maxLatency(v *data.CriterionVerdict, items []data.ConversationItem) {
	limit, _ := number(v.Criterion.Value)
	slowest := -1
	for i, it := range items {
		if it.Role == data.ItemAgent && it.LatencyMS != nil && (slowest < 0 || it.LatencyMS.Total > items[slowest].LatencyMS.Total) {
			slowest = i
		}
	}
	if slowest < 0 {
		v.Passed, v.Reason = true, "The agent made no reply to time."
		return
	}
	ms := items[slowest].LatencyMS.Total
	v.Evidence = evidence(items, slowest)
	v.Passed = float64(ms) <= limit
	v.Reason = fmt.Sprintf("The slowest reply took %d ms (at most %s ms).", ms, strings.TrimSuffix(fmt.Sprintf("%g", limit), ".0"))
}
