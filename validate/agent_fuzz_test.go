package validate_test

import (
	"encoding/json"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/fakeagents"
	"github.com/voiceapi/voiceapi/validate"
)

// fuzzBase is a stored agent on the defaults, with a name and an api_key.
func fuzzBase() *data.Agent {
	a := data.DefaultAgent()
	a.ID, a.Name = "agt_01JD6000000000000000000000", "Stored"
	key := "gsk_stored_secret_1234"
	a.LLMConfig.APIKey = &key
	return a
}

// FuzzAgentUpdate feeds arbitrary bytes through the update path (the strict decode into
// data.AgentUpdate, the merge into a stored agent, AgentChange): no input may panic, an accepted result must pass
// every rule, and a rejection must name at least one field.
func FuzzAgentUpdate(f *testing.F) {
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"name":"x","llm_config":{"temperature":2},"tts_config":{"provider":"rime"}}`))
	for _, typ := range data.ToolTypes {
		b, _ := json.Marshal(map[string]any{"llm_config": map[string]any{"tools": []any{fakeagents.ToolOfType(typ, "t"), nil}}})
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		base := fuzzBase()
		before, _ := json.Marshal(base)
		a, err := applyBody(base, body, false)
		if after, _ := json.Marshal(base); string(after) != string(before) {
			t.Fatalf("the merge modified its base")
		}
		if err != nil && data.ErrorCode(err) == data.EMALFORMED {
			return
		}
		if a == nil {
			t.Fatalf("no agent returned: %v", err)
		}
		if err != nil {
			e, ok := err.(*data.Error)
			if !ok || e.Code != data.EINVALID || len(e.Fields) == 0 {
				t.Fatalf("rejection without field errors: %#v", err)
			}
			// A member named "" is reported under the path "": that is its name.
			for path, msgs := range e.Fields {
				if len(msgs) == 0 || msgs[0] == "" {
					t.Fatalf("fault on %q without a message", path)
				}
			}
			return
		}
		var check validate.Errors
		validate.ValidateAgent(a, catalog, &check)
		if err := check.Err(); err != nil {
			t.Fatalf("accepted body %s gives an invalid agent: %v", body, err.(*data.Error).Fields)
		}
		// An accepted result is stable: sending it back whole, masked, changes nothing.
		var again map[string]json.RawMessage
		resp, _ := json.Marshal(a.Masked())
		if err := json.Unmarshal(resp, &again); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"id", "workspace_id", "status", "published_version", "created_at", "updated_at", "published_at", "used_variables"} {
			delete(again, k)
		}
		back, _ := json.Marshal(again)
		b, err := applyBody(a, back, false)
		if err != nil {
			t.Fatalf("sending back an accepted agent is rejected: %v", err)
		}
		x, _ := json.Marshal(a.Snapshot())
		y, _ := json.Marshal(b.Snapshot())
		if string(x) != string(y) {
			t.Fatalf("sending back an accepted agent changes it:\n%s\n%s", x, y)
		}
	})
}
