package agenttest_test

import (
	"encoding/json"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/agenttest"
	"github.com/voiceapi/voiceapi/data"
)

// FuzzEvaluate judges criteria against a conversation whose tool call has any JSON object
// as its arguments and whose agent says any text (docs/testing-agents.md, conventions §22).
// Properties:
//   - tool_called with the call's own arguments passes, and so does every member alone,
//     and the arguments written with every number in another form (2, 2.0, 2e0, 20e-1:
//     numbers compared as numbers, inside arrays too);
//   - with numbers kept as written (as the API, the stores and the conversation keep
//     them), the call's own arguments pass and a number with one digit changed never
//     does, however many digits it has (12345678901234567890 is not ...891);
//   - a strict superset never passes: one more member, at the top or inside an object;
//   - a member asked for as an object ({} or more) never matches a value that is not one;
//   - says P and not_says P never both pass nor both fail, for any valid RE2 P;
//   - variable_equals with the variable's own value passes whatever form its number
//     takes, and never when the value is the same text as a string ("2" is not 2).
func FuzzEvaluate(f *testing.F) {
	f.Add(`{"people":2,"time":"20:00","extra":{"high_chair":true}}`, "You're booked for two at 20:00.", `(?i)booked for (\w+)`, `2`)
	f.Add(`{"people":"two"}`, "Hello, Trattoria here!", `Trattoria`, `"B7"`)
	f.Add(`{"a":[1,2.5,{"b":null}],"c":{}}`, "", `^$`, `true`)
	f.Add(`{"n":12345678901234567890,"m":-0,"e":1e-7}`, "sorry", `(?i)sorry`, `1e3`)
	f.Add(`{"a":{"b":{"c":[]}}}`, "x\xffy", `.`, `-2.5`)
	f.Fuzz(func(t *testing.T, args, said, pattern, value string) {
		var have map[string]any
		if json.Unmarshal([]byte(args), &have) != nil || have == nil || strings.Contains(args, `\u0000absent`) {
			return // not an object, or it holds the member the supersets add
		}
		items := []data.ConversationItem{
			{Role: data.ItemAgent, Content: said},
			{Role: data.ItemTool, Content: "book(…)", ToolCall: &data.ToolCallItem{Name: "book", Arguments: have, Result: map[string]any{"status": 200.0}}},
			{Role: data.ItemAgent, Content: "Anything else?"},
		}
		toolCalled := func(want map[string]any) bool {
			return agenttest.Evaluate(data.Criterion{Type: data.CriterionToolCalled, Name: "book", Arguments: want}, items, nil, "").Passed
		}
		if !toolCalled(have) {
			t.Fatalf("tool_called with the call's own arguments %s failed", args)
		}
		var other map[string]any
		if err := json.Unmarshal([]byte(otherNumberForms(have)), &other); err != nil {
			t.Fatalf("numbers rewritten: %v", err)
		}
		if !toolCalled(other) {
			t.Fatalf("tool_called with %s written %s failed", args, otherNumberForms(have))
		}
		for k, v := range have {
			if !toolCalled(map[string]any{k: v}) {
				t.Fatalf("tool_called with the member %q of %s failed", k, args)
			}
			if _, isObj := v.(map[string]any); !isObj {
				if toolCalled(map[string]any{k: map[string]any{}}) {
					t.Fatalf("tool_called with %q: {} passed on %s, where it is no object", k, args)
				}
			}
			if inner, isObj := v.(map[string]any); isObj {
				more := cloneWith(have, k, cloneWith(inner, "\x00absent", true))
				if toolCalled(more) {
					t.Fatalf("tool_called passed with one more member inside %q of %s", k, args)
				}
			}
		}
		if toolCalled(cloneWith(have, "\x00absent", true)) {
			t.Fatalf("tool_called passed with one more member than %s", args)
		}
		checkExactNumbers(t, args, items)

		if _, err := regexp.Compile(pattern); err == nil {
			says := agenttest.Evaluate(data.Criterion{Type: data.CriterionSays, Pattern: pattern}, items, nil, "")
			notSays := agenttest.Evaluate(data.Criterion{Type: data.CriterionNotSays, Pattern: pattern}, items, nil, "")
			if says.Passed == notSays.Passed {
				t.Fatalf("says and not_says %q both passed=%v on %q", pattern, says.Passed, said)
			}
		}

		checkVariableEquals(t, value)
	})
}

// checkExactNumbers: the criterion decoded as the API decodes it (data.JSONObject), the
// call's arguments as the conversation records them (json.Number): its own arguments
// pass; each top-level number with its last mantissa digit changed fails.
func checkExactNumbers(t *testing.T, args string, items []data.ConversationItem) {
	var want data.JSONObject
	if err := json.Unmarshal([]byte(args), &want); err != nil {
		t.Fatalf("%s as a JSONObject: %v", args, err)
	}
	dec := json.NewDecoder(strings.NewReader(args))
	dec.UseNumber()
	var have map[string]any
	if err := dec.Decode(&have); err != nil {
		t.Fatal(err)
	}
	exact := slices.Clone(items)
	call := *exact[1].ToolCall
	call.Arguments = have
	exact[1].ToolCall = &call
	toolCalled := func(want map[string]any) bool {
		return agenttest.Evaluate(data.Criterion{Type: data.CriterionToolCalled, Name: "book", Arguments: want}, exact, nil, "").Passed
	}
	if !toolCalled(want) {
		t.Fatalf("tool_called with %s failed on the same arguments, numbers as written", args)
	}
	for k, v := range want {
		n, ok := v.(json.Number)
		if !ok {
			continue
		}
		mant, exp, hasExp := strings.Cut(strings.ToLower(string(n)), "e")
		last := mant[len(mant)-1]
		changed := mant[:len(mant)-1] + string('0'+(last-'0'+1)%10)
		if hasExp {
			changed += "e" + exp
		}
		if toolCalled(cloneWith(want, k, json.Number(changed))) {
			t.Fatalf("tool_called with %q: %s passed on %s", k, changed, args)
		}
	}
}

// checkVariableEquals: a variable read as encoding/json reads it (float64) and as the
// conversation's substitution keeps numbers (json.Number) equals the criterion's value
// decoded from any spelling of it; its text as a string does not, unless it is one.
func checkVariableEquals(t *testing.T, value string) {
	var plain any
	if json.Unmarshal([]byte(value), &plain) != nil {
		return
	}
	switch plain.(type) {
	case string, bool, float64:
	default:
		return // variables are scalars
	}
	dec := json.NewDecoder(strings.NewReader(value))
	dec.UseNumber()
	var kept any
	if dec.Decode(&kept) != nil {
		return
	}
	var respelled any
	if err := json.Unmarshal([]byte(otherNumberForms(plain)), &respelled); err != nil {
		t.Fatalf("%s rewritten: %v", value, err)
	}
	for _, have := range []any{plain, kept} {
		vars := map[string]any{"v": have}
		eq := func(want any) bool {
			return agenttest.Evaluate(data.Criterion{Type: data.CriterionVariableEquals, Name: "v", Value: want}, nil, vars, "").Passed
		}
		if !eq(plain) || !eq(respelled) {
			t.Fatalf("variable_equals %s (as %T) failed against its own value", value, have)
		}
		if _, isString := plain.(string); !isString && eq(strings.TrimSpace(value)) {
			t.Fatalf("variable_equals %s (as %T) passed against the string %q", value, have, value)
		}
	}
}

// otherNumberForms writes v as JSON with every number spelled another way: an exponent
// form with a fraction (2 as 2.0e0, 0.5 as 5.0e-1).
func otherNumberForms(v any) string {
	var b strings.Builder
	var write func(any)
	write = func(v any) {
		switch x := v.(type) {
		case float64:
			mant, exp, _ := strings.Cut(strconv.FormatFloat(x, 'e', -1, 64), "e")
			if !strings.Contains(mant, ".") {
				mant += ".0"
			}
			b.WriteString(mant + "e" + exp)
		case []any:
			b.WriteByte('[')
			for i, e := range x {
				if i > 0 {
					b.WriteByte(',')
				}
				write(e)
			}
			b.WriteByte(']')
		case map[string]any:
			b.WriteByte('{')
			first := true
			for k, e := range x {
				if !first {
					b.WriteByte(',')
				}
				first = false
				key, _ := json.Marshal(k)
				b.Write(key)
				b.WriteByte(':')
				write(e)
			}
			b.WriteByte('}')
		default:
			enc, _ := json.Marshal(x)
			b.Write(enc)
		}
	}
	write(v)
	return b.String()
}

// cloneWith is a copy of m with k set to v.
func cloneWith(m map[string]any, k string, v any) map[string]any {
	out := make(map[string]any, len(m)+1)
	for key, val := range m {
		out[key] = val
	}
	out[k] = v
	return out
}
