package data

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestMaskSecret(t *testing.T) {
	for in, want := range map[string]string{
		"":                     "****",
		"abc":                  "****",
		"1234567":              "****",
		"12345678":             "****5678",
		"sk-live-abcdefghWXYZ": "****WXYZ",
		"clé-secrète-€€€€":     "****€€€€",
	} {
		if got := MaskSecret(in); got != want {
			t.Errorf("MaskSecret(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestMaskedLeavesTheOriginal(t *testing.T) {
	key := "sk-live-abcdefghWXYZ"
	a := &Agent{AgentConfig: DefaultAgentConfig()}
	a.LLMConfig.APIKey = &key
	m := a.Masked()
	if *m.LLMConfig.APIKey != "****WXYZ" || *a.LLMConfig.APIKey != key {
		t.Fatalf("masked %q, original %q", *m.LLMConfig.APIKey, *a.LLMConfig.APIKey)
	}
	v := AgentVersion{AgentConfig: a.AgentConfig}
	if mv := v.Masked(); *mv.LLMConfig.APIKey != "****WXYZ" || *v.LLMConfig.APIKey != key {
		t.Fatal("version masking")
	}
	if (Agent{}).Masked().LLMConfig.APIKey != nil {
		t.Fatal("no key must stay null")
	}
}

func TestArraysEncodeAsEmpty(t *testing.T) {
	a := Agent{AgentConfig: AgentConfig{LLMConfig: LLMConfig{Tools: []*Tool{{Name: "t", Type: ToolEndCall, Variables: []ToolVariable{{Type: "string"}}}}}}}
	b, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for _, want := range []string{
		`"knowledge_base_ids":[]`, `"custom_sip_headers":{}`, `"phone_directory":[]`, `"custom_function_headers":[]`,
		`"custom_function_query":[]`, `"custom_function_variables":[]`, `"speak_during_execution_options":[]`, `"choices":[]`,
	} {
		if !strings.Contains(s, want) {
			t.Errorf("%s not in %s", want, s)
		}
	}
	if strings.Contains(s, `"tools":null`) || strings.Contains(s, `":[null]`) {
		t.Errorf("null array in %s", s)
	}
	if b, _ := json.Marshal(LLMConfig{}); !strings.Contains(string(b), `"tools":[]`) {
		t.Errorf("tools: %s", b)
	}
}

func TestAgentJSONShape(t *testing.T) {
	a := DefaultAgent()
	a.ID, a.Name = "agt_1", "Support"
	a.CreatedAt = NewTime(time.Date(2026, 11, 21, 10, 4, 5, 123456789, time.UTC))
	b, _ := json.Marshal(a)
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"id", "workspace_id", "name", "status", "published_version", "call_config", "knowledge_base_config",
		"llm_config", "prompt_config", "stt_config", "tts_config", "analysis_config", "privacy", "max_concurrent_calls", "used_variables", "created_at", "updated_at", "published_at"} {
		if _, ok := m[k]; !ok {
			t.Errorf("no %s in %s", k, b)
		}
	}
	if len(m) != 18 || string(m["created_at"]) != `"2026-11-21T10:04:05.123Z"` || string(m["published_at"]) != "null" {
		t.Errorf("shape: %s", b)
	}
}

func TestCloneIsDeep(t *testing.T) {
	a := DefaultAgent()
	a.LLMConfig.Tools = []*Tool{{Name: "end", Type: ToolEndCall}}
	c := a.Clone()
	c.LLMConfig.Tools[0].Name = "changed"
	*c.LLMConfig.Temperature = 0.9
	if a.LLMConfig.Tools[0].Name != "end" || *a.LLMConfig.Temperature != DefaultTemperature {
		t.Fatal("clone shares memory with the original")
	}
}
