package agenttest_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/agenttest"
	"github.com/voiceapi/voiceapi/data"
)

// TestToolCalledComparesNumbersExactly: a tool_called criterion's arguments, decoded as
// the API and the stores decode them (data.JSONObject), against a call's arguments as
// the conversation records them (numbers as written): numbers compare as exact decimal
// values, so 1, 1.0 and 1e0 are equal and big integers that differ are not.
func TestToolCalledComparesNumbersExactly(t *testing.T) {
	cases := []struct {
		want, have string
		pass       bool
	}{
		{`12345678901234567890`, `12345678901234567890`, true},
		{`12345678901234567890`, `12345678901234567891`, false},
		{`-12345678901234567890`, `-12345678901234567890.0`, true},
		{`1`, `1.0`, true},
		{`1`, `1e0`, true},
		{`1`, `10E-1`, true},
		{`1.5`, `15e-1`, true},
		{`0`, `-0.0e5`, true},
		{`100`, `1e2`, true},
		{`100`, `1e+2`, true},
		{`0.1`, `0.10000000000000001`, false},
		{`1e400`, `10e399`, true},
		{`1e400`, `1e401`, false},
		{`1e-400`, `0`, false},
		{`[1.0,12345678901234567890]`, `[1,12345678901234567890]`, true},
		{`[1,12345678901234567890]`, `[1,12345678901234567891]`, false},
		{`{"n":12345678901234567890}`, `{"n":12345678901234567891,"m":1}`, false},
		{`{"n":2.50}`, `{"n":25e-1,"m":1}`, true},
		{`"1"`, `1`, false},
		{`1`, `true`, false},
	}
	for _, c := range cases {
		var crit data.Criterion
		body := `{"type":"tool_called","name":"book","arguments":{"v":` + c.want + `}}`
		if err := json.Unmarshal([]byte(body), &crit); err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		dec := json.NewDecoder(strings.NewReader(`{"v":` + c.have + `}`))
		dec.UseNumber()
		var args any
		if err := dec.Decode(&args); err != nil {
			t.Fatal(err)
		}
		items := []data.ConversationItem{{Role: data.ItemTool, ToolCall: &data.ToolCallItem{Name: "book", Arguments: args}}}
		if got := agenttest.Evaluate(crit, items, nil, "").Passed; got != c.pass {
			t.Errorf("tool_called arguments %s on a call with %s: passed %v, want %v", c.want, c.have, got, c.pass)
		}
	}
}
