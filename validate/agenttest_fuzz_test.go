package validate_test

import (
	"encoding/json"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/bodyfuzz"
	"github.com/voiceapi/voiceapi/internal/fakeagents"
	"github.com/voiceapi/voiceapi/validate"
)

// FuzzAgentTestBody feeds each body to the agent test create decoder and its rules (the
// test with its defaults, against a draft with a custom function and an end_call tool),
// and to the test run create decoder.
func FuzzAgentTestBody(f *testing.F) {
	bodyfuzz.AddSeeds(f,
		`{"name":"books","user":{"script":["a table for two"]},"mocks":{"book":{"status":200,"body":{"id":"B1"}}},"criteria":[{"type":"tool_called","name":"book","arguments":{"people":2}},{"type":"says","pattern":"(?i)booked"}],"repeat":3,"required_for_publish":true}`,
		`{"name":"angry","user":{"persona":"furious","goal":"the manager"},"variables":{"vip":true},"max_turns":50,"criteria":[{"type":"judge","criterion":"apologises"},{"type":"ends_with","reason":"agent_ended"},{"type":"max_latency_ms","value":3000},{"type":"variable_equals","name":"vip","value":true}]}`,
		`{"name":"bad","user":{"script":[]},"criteria":[{"type":"not_says","pattern":"("},{"type":"tool_not_called","name":"nope"}],"mocks":{"hang":{"status":99}},"repeat":11,"max_turns":0}`,
		`{"version":3,"test_ids":["tst_01JD6000000000000000000000"]}`,
		`{"version":"draft"}`,
	)
	var tools []*data.Tool
	raw, _ := json.Marshal([]any{fakeagents.ToolOfType(data.ToolCustomFunction, "book"), fakeagents.ToolOfType(data.ToolEndCall, "hang")})
	if err := json.Unmarshal(raw, &tools); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		bodyfuzz.Check(t, body, func(in *data.AgentTestCreate, _ map[string]json.RawMessage) error {
			return validate.AgentTest(in.NewAgentTest(), tools)
		}, nil)
		bodyfuzz.Check(t, body, func(in *data.TestRunCreate, _ map[string]json.RawMessage) error {
			return validate.TestRunCreate(*in)
		}, nil)
	})
}
