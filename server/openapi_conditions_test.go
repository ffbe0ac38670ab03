package server_test

import (
	"fmt"
	"testing"
)

// conditionValues are valid values of the members the document's conditions require.
var conditionValues = map[string]any{
	"deployment": "gpt-4o-prod", "endpoint": "https://example.openai.azure.com", "api_version": "2024-06-01",
	"temperature": 0.5, "region": "us-east-1", "max_tokens": 512, "base_url": "https://llm.example.com/v1",
	"voice_id": "voice-1", "streaming_latency": 1, "speaker": "abbie",
}

// providerModels are a valid model of each provider: a change of provider needs one.
var providerModels = map[any]string{
	"azure": "", "bedrock_claude": "anthropic.claude-haiku-4-5-20251001-v1:0", "internal": "whatever-runs-here",
	"cartesia": "sonic-3", "rime": "mistv2",
}

// TestOpenAPIConditionsAreEnforced reads the if/then conditions of the agent groups' input
// schemas from the document and probes each against a real server: an agent whose group
// sets the condition's member but leaves out what it requires is refused with a 422 naming
// each required member, and the same body with those members is created.
func TestOpenAPIConditionsAreEnforced(t *testing.T) {
	_, doc := openapiDocument(t)
	e := newEnv(t)
	probed := 0
	for group, schema := range map[string]string{"llm_config": "LLMConfigInput", "tts_config": "TTSConfigInput"} {
		all, _ := dig(t, doc, "components", "schemas", schema).(map[string]any)["allOf"].([]any)
		if len(all) == 0 {
			t.Fatalf("%s has no conditions", schema)
		}
		for _, c := range all {
			ifProps := dig(t, c, "if", "properties").(map[string]any)
			then := dig(t, c, "then", "required").([]any)
			for member, v := range ifProps {
				value := v.(map[string]any)["const"]
				name := fmt.Sprintf("%s.%s=%v", group, member, value)
				t.Run(name, func(t *testing.T) {
					body := map[string]any{member: value}
					r := e.do("POST", "/api/v1/agents", e.Owner.Token, map[string]any{"name": "probe", group: body})
					expect(t, r, 422)
					got := r.FieldErrors()
					for _, m := range then {
						if _, ok := got[group+"."+m.(string)]; !ok {
							t.Errorf("the 422 does not name %s.%s: %v", group, m, got)
						}
					}
					for _, m := range then {
						v, ok := conditionValues[m.(string)]
						if !ok {
							t.Fatalf("no test value for %s", m)
						}
						body[m.(string)] = v
					}
					if model := providerModels[value]; model != "" {
						body["model"] = model
					}
					r = e.do("POST", "/api/v1/agents", e.Owner.Token, map[string]any{"name": "probe", group: body})
					if r.Status != 201 {
						t.Errorf("completed body %v: %d %s", body, r.Status, r.Body)
					}
				})
				probed++
			}
		}
	}
	if probed < 3 {
		t.Fatalf("only %d conditions probed", probed)
	}
}

// TestOpenAPIToolConditionsAreEnforced probes the tool item conditions of the document: a
// tool of each conditioned type without the members its condition requires is refused with
// a 422 naming them.
func TestOpenAPIToolConditionsAreEnforced(t *testing.T) {
	_, doc := openapiDocument(t)
	e := newEnv(t)
	all, _ := dig(t, doc, "components", "schemas", "ToolInput").(map[string]any)["allOf"].([]any)
	if len(all) == 0 {
		t.Fatal("ToolInput has no conditions")
	}
	for _, c := range all {
		typ := dig(t, c, "if", "properties", "type", "const")
		tool := map[string]any{"name": "probe_tool", "type": typ, "description": "probe"}
		r := e.do("POST", "/api/v1/agents", e.Owner.Token, map[string]any{"name": "probe", "llm_config": map[string]any{"tools": []any{tool}}})
		expect(t, r, 422)
		got := r.FieldErrors()
		for _, m := range dig(t, c, "then", "required").([]any) {
			if _, ok := got["llm_config.tools.0."+m.(string)]; !ok {
				t.Errorf("type %v: the 422 does not name llm_config.tools.0.%s: %v", typ, m, got)
			}
		}
	}
}
