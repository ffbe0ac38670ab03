package data

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// testedConfig is a configuration with a tool, a key and a variable, for TestedContent.
func testedConfig() AgentConfig {
	c := DefaultAgentConfig()
	key, desc := "sk-live-abcdefghWXYZ", "Ends the call"
	c.LLMConfig.APIKey = &key
	c.LLMConfig.Tools = []*Tool{{Name: "hang_up", Type: ToolEndCall, Description: &desc}}
	c.LLMConfig.KnowledgeBaseIDs = []string{"kb_01"}
	c.PromptConfig.DefaultVariables = map[string]any{"shop": "Trattoria", "seats": 4.0}
	return c
}

// TestTestedContent: every field a test can observe changes the content, each of
// UntestedFields leaves it as it was, and absent defaults read as the defaults (an agent
// stored before a field existed is the same draft).
func TestTestedContent(t *testing.T) {
	base, err := TestedContent(testedConfig())
	if err != nil {
		t.Fatal(err)
	}
	other, wait := "x", 9.0
	cases := []struct {
		name   string
		change func(c *AgentConfig)
		counts bool
	}{
		{"prompt, one character", func(c *AgentConfig) { c.PromptConfig.Prompt += "!" }, true},
		{"welcome message", func(c *AgentConfig) { c.PromptConfig.WelcomeMessage = "Hi" }, true},
		{"first speaker", func(c *AgentConfig) { c.PromptConfig.FirstSpeaker = "user" }, true},
		{"default variable", func(c *AgentConfig) { c.PromptConfig.DefaultVariables["seats"] = 5.0 }, true},
		{"timezone", func(c *AgentConfig) { c.PromptConfig.Timezone = "Europe/Rome" }, true},
		{"model", func(c *AgentConfig) { c.LLMConfig.Model = "other" }, true},
		{"temperature", func(c *AgentConfig) { *c.LLMConfig.Temperature = 0.6 }, true},
		{"api_key", func(c *AgentConfig) { c.LLMConfig.APIKey = &other }, true},
		{"a tool's description", func(c *AgentConfig) { c.LLMConfig.Tools[0].Description = &other }, true},
		{"knowledge bases", func(c *AgentConfig) { c.LLMConfig.KnowledgeBaseIDs = nil }, true},
		{"chunks to retrieve", func(c *AgentConfig) { c.KnowledgeBaseConfig.ChunksToRetrieve = 5 }, true},
		{"similarity threshold", func(c *AgentConfig) { c.KnowledgeBaseConfig.SimilarityThreshold = &wait }, true},
		{"ring duration", func(c *AgentConfig) { c.CallConfig.RingDurationMS = 1 }, false},
		{"max call duration", func(c *AgentConfig) { c.CallConfig.MaxCallDurationMS = 1 }, false},
		{"stt model", func(c *AgentConfig) { c.STTConfig.Model = "other" }, false},
		{"voice", func(c *AgentConfig) { c.TTSConfig.VoiceID = &other }, false},
		{"speak after silence", func(c *AgentConfig) { c.PromptConfig.AISpeakAfterSilence = true }, false},
		{"speak wait time", func(c *AgentConfig) { c.PromptConfig.AISpeakWaitTime = &wait }, false},
		{"analysis", func(c *AgentConfig) { c.AnalysisConfig.Summary = true }, false},
		{"timezone absent is UTC", func(c *AgentConfig) { c.PromptConfig.Timezone = "" }, false},
		{"default variables removed", func(c *AgentConfig) { c.PromptConfig.DefaultVariables = nil }, true},
	}
	for _, tc := range cases {
		c := testedConfig()
		tc.change(&c)
		got, err := TestedContent(c)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if changed := !bytes.Equal(got, base); changed != tc.counts {
			t.Errorf("%s: content changed %v, want %v", tc.name, changed, tc.counts)
		}
	}
	empty := testedConfig()
	empty.PromptConfig.DefaultVariables = map[string]any{}
	nilVars := testedConfig()
	nilVars.PromptConfig.DefaultVariables = nil
	a, _ := TestedContent(empty)
	b, _ := TestedContent(nilVars)
	if !bytes.Equal(a, b) {
		t.Errorf("default_variables null and {} differ:\n%s\n%s", a, b)
	}
}

// TestUntestedFieldsExist: each entry names a field of the configuration's JSON, so a
// renamed field cannot silently start counting or an entry outlive its field.
func TestUntestedFieldsExist(t *testing.T) {
	c := testedConfig()
	c.PromptConfig.AISpeakAfterSilence = true
	raw, _ := json.Marshal(c)
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	for _, f := range UntestedFields {
		group, member, nested := strings.Cut(f.Path, ".")
		g, ok := doc[group]
		if ok && nested {
			_, ok = g.(map[string]any)[member]
		}
		if !ok || f.Why == "" {
			t.Errorf("UntestedFields: %q is not a field of the configuration, or says no why", f.Path)
		}
	}
	content, _ := TestedContent(c)
	for _, f := range UntestedFields {
		name := f.Path[strings.LastIndex(f.Path, ".")+1:]
		if bytes.Contains(content, []byte(`"`+name+`"`)) {
			t.Errorf("the tested content holds %s", f.Path)
		}
	}
}
