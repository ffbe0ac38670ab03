// Package conversation runs an agent's configuration as a text conversation (conventions
// §21): the system prompt with its {{variables}} substituted (§23), tool schemas built
// from each data.Tool, the turn loop (model → tool calls → tool results → model) and the
// text meaning of each tool type. It stores nothing: it is handed a model client, a
// retriever and an HTTP caller for custom functions, and the service keeps what it returns.
//
// The variable substitution in this file is the one implementation: the call-start
// contract substitutes a configuration with the same functions.
package conversation

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Built-in variables (conventions §23): every conversation and call has them.
const (
	VarCallerNumber = "caller_number"
	VarCalledNumber = "called_number"
	VarCallID       = "call_id"
	VarCurrentTime  = "current_time"
)

// BuiltInVariables lists the built-ins in the order documents show them.
var BuiltInVariables = []string{VarCallerNumber, VarCalledNumber, VarCallID, VarCurrentTime}

// ValidName reports whether s is a variable name: the tool-name pattern
// ^[a-zA-Z_-][a-zA-Z0-9_-]*$ (conventions §23).
func ValidName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_', c == '-':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// FormatValue renders a variable's value as substitution writes it: a string as it is, a
// number in its shortest decimal form (3, 2.5, never 3.0 or 1e+06 for integers), a
// boolean as true or false. ok is false for any other type (the allowed value types are
// string, number and boolean).
func FormatValue(v any) (s string, ok bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case bool:
		return strconv.FormatBool(x), true
	case json.Number:
		return x.String(), true
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1e15 {
			return strconv.FormatInt(int64(x), 10), true
		}
		return strconv.FormatFloat(x, 'f', -1, 64), true
	case float32:
		return FormatValue(float64(x))
	case int:
		return strconv.Itoa(x), true
	case int64:
		return strconv.FormatInt(x, 10), true
	}
	return "", false
}

// ValueAllowed reports whether v is of a variable value type: string, number or boolean.
func ValueAllowed(v any) bool {
	_, ok := FormatValue(v)
	return ok
}

// scan calls fn for each {{name}} reference in text, with the byte offsets of the whole
// reference, and returns nothing: the one parser every function here shares. A reference
// is exactly two braces, a valid name and two braces; anything else ("{{ name }}",
// "{{2x}}", a lone "{{") is text and stays as written.
func scan(text string, fn func(start, end int, name string)) {
	for i := 0; ; {
		j := strings.Index(text[i:], "{{")
		if j < 0 {
			return
		}
		start := i + j
		k := strings.Index(text[start+2:], "}}")
		if k < 0 {
			return
		}
		name := text[start+2 : start+2+k]
		if ValidName(name) {
			fn(start, start+2+k+2, name)
			i = start + 2 + k + 2
		} else {
			i = start + 1 // "{{{a}}": the reference may begin at the next brace
		}
	}
}

// VariablesIn returns the names text refers to, each once, in order of first use.
func VariablesIn(text string) []string {
	var out []string
	scan(text, func(_, _ int, name string) {
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	})
	return out
}

// Substitute replaces each {{name}} of text with its value in vars (FormatValue). A name
// vars lacks, or whose value is not of an allowed type, is left as written and listed in
// missing (each once, in order of first use).
func Substitute(text string, vars map[string]any) (out string, missing []string) {
	if !strings.Contains(text, "{{") {
		return text, nil
	}
	var b strings.Builder
	last := 0
	scan(text, func(start, end int, name string) {
		s, ok := "", false
		if v, given := vars[name]; given {
			s, ok = FormatValue(v)
		}
		if !ok {
			if !slices.Contains(missing, name) {
				missing = append(missing, name)
			}
			return
		}
		b.WriteString(text[last:start])
		b.WriteString(s)
		last = end
	})
	if last == 0 && b.Len() == 0 {
		return text, missing
	}
	b.WriteString(text[last:])
	return b.String(), missing
}

// CallFacts are what the built-in variables are made of.
type CallFacts struct {
	CallerNumber, CalledNumber, CallID string
	Now                                time.Time
	// Location is the timezone current_time is written in; UTC when nil.
	Location *time.Location
}

// WithBuiltIns returns vars with the built-ins added where vars does not give them
// (a tester may set caller_number for a web conversation, which has none). vars is not
// changed.
func WithBuiltIns(vars map[string]any, f CallFacts) map[string]any {
	out := make(map[string]any, len(vars)+len(BuiltInVariables))
	loc := f.Location
	if loc == nil {
		loc = time.UTC
	}
	out[VarCallerNumber] = f.CallerNumber
	out[VarCalledNumber] = f.CalledNumber
	out[VarCallID] = f.CallID
	out[VarCurrentTime] = f.Now.In(loc).Format(time.RFC3339)
	for k, v := range vars {
		out[k] = v
	}
	return out
}

// Merge layers variable maps, lowest precedence first (§23: the agent's defaults, the
// number's, the call's): a later map's value wins.
func Merge(layers ...map[string]any) map[string]any {
	out := map[string]any{}
	for _, l := range layers {
		for k, v := range l {
			out[k] = v
		}
	}
	return out
}
