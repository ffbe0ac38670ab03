package server_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/validate"
)

// TestOpenAPIBoundsAreEnforced probes validate with the document's own bounds: for every
// minimum, maximum, maxLength and enum of an agent body's groups, a value on the bound is
// accepted and one past it is refused at that field's path. A bound changed in validate
// but not in the rules table (or the other way round) fails here.
func TestOpenAPIBoundsAreEnforced(t *testing.T) {
	_, doc := openapiDocument(t)
	schemas := dig(t, doc, "components", "schemas").(map[string]any)
	// The provider each field needs, so that a valid value is not refused as belonging
	// to another provider.
	context := map[string]map[string]any{
		"llm_config.deployment":  {"provider": "azure"},
		"llm_config.endpoint":    {"provider": "azure"},
		"llm_config.api_version": {"provider": "azure"},
		"llm_config.base_url":    {"provider": "internal"},
		"llm_config.region":      {"provider": "bedrock_claude"},
		"tts_config.speed":       {"provider": "cartesia"},
		"tts_config.emotion":     {"provider": "cartesia"},
		"tts_config.speaker":     {"provider": "rime"},
		"tts_config.speed_alpha": {"provider": "rime"},
		"tts_config.voice_id":    {"provider": "elevenlabs"},
	}
	groups := map[string]string{
		"call_config": "CallConfigInput", "knowledge_base_config": "KnowledgeBaseConfigInput",
		"llm_config": "LLMConfigInput", "prompt_config": "PromptConfigInput",
		"stt_config": "STTConfigInput", "tts_config": "TTSConfigInput",
	}
	probes := 0
	check := func(path string, body map[string]any, want bool, v any) {
		t.Helper()
		raw := map[string]json.RawMessage{}
		for k, m := range body {
			b, _ := json.Marshal(m)
			raw[k] = b
		}
		_, errs := validate.ApplyAgentBody(data.DefaultAgent(), raw, true, nil)
		fields := map[string][]string{}
		var e *data.Error
		if errors.As(errs.Err(), &e) {
			fields = e.Fields
		}
		_, faulted := fields[path]
		if faulted == want {
			t.Errorf("%s = %.40v: accepted %v, want %v (%v)", path, v, !faulted, want, fields[path])
		}
		probes++
	}
	for group, schema := range groups {
		props := dig(t, schemas, schema, "properties").(map[string]any)
		for field, p := range props {
			path := group + "." + field
			probeField(path, p.(map[string]any), func(v any, valid bool) {
				members := map[string]any{field: v}
				for k, c := range context[path] {
					members[k] = c
				}
				check(path, map[string]any{"name": "probe", group: members}, valid, v)
			})
		}
	}
	// Tool fields, on an end_call tool.
	for field, p := range dig(t, schemas, "ToolInput", "properties").(map[string]any) {
		path := "llm_config.tools.0." + field
		probeField(path, p.(map[string]any), func(v any, valid bool) {
			tool := map[string]any{"name": "probe", "type": "end_call", field: v}
			check(path, map[string]any{"name": "probe", "llm_config": map[string]any{"tools": []any{tool}}}, valid, v)
		})
	}
	// The agent's name.
	probeField("name", dig(t, schemas, "AgentCreate", "properties", "name").(map[string]any), func(v any, valid bool) {
		check("name", map[string]any{"name": v}, valid, v)
	})
	if probes < 100 {
		t.Fatalf("only %d probes: the schemas lost their bounds?", probes)
	}
}

// probeField calls try with values on and past each bound of the schema p.
func probeField(path string, p map[string]any, try func(v any, valid bool)) {
	types := fmt.Sprint(p["type"])
	integer := strings.Contains(types, "integer")
	step := 0.01
	if integer {
		step = 1
	}
	if lo, ok := p["minimum"].(float64); ok {
		try(lo, true)
		try(lo-step, false)
	}
	if hi, ok := p["maximum"].(float64); ok {
		try(hi, true)
		if !(integer && hi+step > math.MaxInt32) {
			try(hi+step, false)
		}
	}
	if n, ok := p["maxLength"].(float64); ok {
		valid := true
		if _, patterned := p["pattern"]; patterned {
			valid = false // "aaa…" need not match the pattern: probe only the refusal
		}
		s := strings.Repeat("a", int(n))
		if p["format"] == "uri" {
			s = "https://example.com/" + strings.Repeat("a", int(n)-len("https://example.com/"))
		}
		if valid {
			try(s, true)
		}
		try(s+"a", false)
	}
	if enum, ok := p["enum"].([]any); ok {
		for _, v := range enum {
			try(v, true)
		}
		try("not-one-of-them", false)
	}
}
