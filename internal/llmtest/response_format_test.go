package llmtest

import (
	"net/http"
	"testing"

	"github.com/voiceapi/voiceapi/data"
)

// strictFormat is response_format as OpenAI documents structured output, with mutate
// applied to its json_schema member.
func strictFormat(mutate func(js map[string]any)) func(map[string]any) {
	return func(b map[string]any) {
		js := map[string]any{"name": "record_analysis", "strict": true, "schema": map[string]any{
			"type": "object", "additionalProperties": false, "required": []any{"outcome"},
			"properties": map[string]any{"outcome": map[string]any{"type": "string"}}}}
		if mutate != nil {
			mutate(js)
		}
		b["response_format"] = map[string]any{"type": "json_schema", "json_schema": js}
	}
}

// TestResponseFormatConforming: a strict json_schema response_format passes on every
// OpenAI-compatible dialect and is read as the request's ResponseSchema; a JSON reply is
// its content, as text.
func TestResponseFormatConforming(t *testing.T) {
	for _, p := range []string{data.LLMInternal, data.LLMGroq, data.LLMMistral, data.LLMAzure} {
		rec := &recorder{TB: t}
		s := New(rec, p)
		s.Queue(JSON(map[string]any{"outcome": "booked"}))
		status, body := post(t, s, http.MethodPost, pathFor(s), headersFor(s), goodBody(s.Model, strictFormat(nil)))
		if status != http.StatusOK || len(rec.failures()) != 0 {
			t.Errorf("%s: %d %s", p, status, body)
		}
		rs := s.Last().ResponseSchema
		if rs == nil || rs.Name != "record_analysis" || rs.Schema["type"] != "object" {
			t.Errorf("%s: parsed %+v", p, rs)
		}
	}
}

// TestResponseFormatDeviations: each way a response_format leaves OpenAI's structured
// output (or its strict subset) fails the test and is answered 400.
func TestResponseFormatDeviations(t *testing.T) {
	set := func(k string, v any) func(map[string]any) { return func(js map[string]any) { js[k] = v } }
	cases := []struct {
		name string
		body func(map[string]any)
	}{
		{"json_object", func(b map[string]any) { b["response_format"] = map[string]any{"type": "json_object"} }},
		{"json_schema missing", func(b map[string]any) { b["response_format"] = map[string]any{"type": "json_schema"} }},
		{"schema at the top", func(b map[string]any) {
			b["response_format"] = map[string]any{"type": "json_schema", "schema": map[string]any{"type": "object"}}
		}},
		{"no name", strictFormat(func(js map[string]any) { delete(js, "name") })},
		{"name with a space", strictFormat(set("name", "record analysis"))},
		{"name of 65", strictFormat(set("name", string(make([]byte, 65))))},
		{"no schema", strictFormat(func(js map[string]any) { delete(js, "schema") })},
		{"schema not an object", strictFormat(set("schema", "object"))},
		{"not strict", strictFormat(set("strict", false))},
		{"strict left out", strictFormat(func(js map[string]any) { delete(js, "strict") })},
		{"unknown member", strictFormat(set("strictness", true))},
		{"root not an object", strictFormat(set("schema", map[string]any{"type": "array", "additionalProperties": false}))},
		{"other properties allowed", strictFormat(func(js map[string]any) {
			delete(js["schema"].(map[string]any), "additionalProperties")
		})},
		{"a property not required", strictFormat(func(js map[string]any) {
			js["schema"].(map[string]any)["required"] = []any{}
		})},
	}
	for _, tc := range cases {
		rec := &recorder{TB: t}
		s := New(rec, data.LLMGroq)
		s.Queue(Text("never sent"))
		status, answer := post(t, s, http.MethodPost, pathFor(s), headersFor(s), goodBody(s.Model, tc.body))
		if status != http.StatusBadRequest || len(rec.failures()) != 1 {
			t.Errorf("%s: %d %s, want 400 and the test failed once", tc.name, status, answer)
		}
	}
}

func TestJSONReply(t *testing.T) {
	if r := JSON(map[string]any{"a": 1}); r.Text != `{"a":1}` {
		t.Errorf("JSON(map) = %q", r.Text)
	}
	if r := JSON(`{"a":`); r.Text != `{"a":` {
		t.Errorf("JSON(text) = %q", r.Text)
	}
}
