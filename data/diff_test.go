package data

import (
	"encoding/json"
	"reflect"
	"testing"
)

func snapshot(edit func(*AgentSnapshot)) AgentSnapshot {
	s := AgentSnapshot{Name: "Support", AgentConfig: DefaultAgentConfig()}
	if edit != nil {
		edit(&s)
	}
	return s
}

func TestDiffIdentical(t *testing.T) {
	got := DiffAgentConfig(snapshot(nil), snapshot(nil))
	if got == nil || len(got) != 0 {
		t.Fatalf("want an empty, non-nil list, got %#v", got)
	}
	if b, _ := json.Marshal(got); string(b) != "[]" {
		t.Fatalf("encodes as %s", b)
	}
}

func TestDiffChanges(t *testing.T) {
	oldKey, newKey := "sk-old-0000000011112222", "sk-new-0000000033334444"
	a := snapshot(func(s *AgentSnapshot) {
		s.LLMConfig.APIKey = &oldKey
		s.LLMConfig.Tools = []*Tool{{Name: "end", Type: ToolEndCall}, {Name: "t2", Type: ToolPressIVR}}
	})
	b := snapshot(func(s *AgentSnapshot) {
		s.Name = "Support v2"
		s.CallConfig.RingDurationMS = 20000
		s.LLMConfig.APIKey = &newKey
		s.LLMConfig.MaxTokens = new(int)
		*s.LLMConfig.MaxTokens = 256
		s.LLMConfig.Tools = []*Tool{{Name: "hang_up", Type: ToolEndCall}, {Name: "t2", Type: ToolPressIVR}, nil}
		for i := range 9 {
			s.LLMConfig.Tools = append(s.LLMConfig.Tools, &Tool{Name: "x" + string(rune('a'+i)), Type: ToolEndCall})
		}
		s.TTSConfig.VoiceID = nil
	})
	got := DiffAgentConfig(a, b)
	paths := make([]string, len(got))
	byPath := map[string]Change{}
	for i, c := range got {
		paths[i] = c.Path
		byPath[c.Path] = c
	}
	want := []string{
		"call_config.ring_duration_ms",
		"llm_config.api_key",
		"llm_config.max_tokens",
		"llm_config.tools.0.name",
		"llm_config.tools.2", "llm_config.tools.3", "llm_config.tools.4", "llm_config.tools.5", "llm_config.tools.6",
		"llm_config.tools.7", "llm_config.tools.8", "llm_config.tools.9", "llm_config.tools.10", "llm_config.tools.11",
		"name",
		"tts_config.voice_id",
	}
	if !reflect.DeepEqual(paths, want) {
		t.Fatalf("paths\n got %v\nwant %v", paths, want)
	}
	if c := byPath["llm_config.api_key"]; c.Old != "****2222" || c.New != "****4444" {
		t.Errorf("api_key not masked: %+v", c)
	}
	if c := byPath["llm_config.max_tokens"]; c.Old != nil || c.New != json.Number("256") {
		t.Errorf("added field: %#v", c)
	}
	if c := byPath["llm_config.tools.0.name"]; c.Old != "end" || c.New != "hang_up" {
		t.Errorf("tool name: %+v", c)
	}
	if c := byPath["llm_config.tools.2"]; c.Old != nil || c.New != nil {
		t.Errorf("an added null item is old null, new null: %+v", c)
	}
	if c := byPath["llm_config.tools.3"]; c.Old != nil || c.New.(map[string]any)["name"] != "xa" {
		t.Errorf("added item: %+v", c)
	}
	if c := byPath["tts_config.voice_id"]; c.Old != DefaultVoiceID || c.New != nil {
		t.Errorf("voice_id: %+v", c)
	}
	if c := byPath["call_config.ring_duration_ms"]; c.Old != json.Number("30000") || c.New != json.Number("20000") {
		t.Errorf("ring: %#v", c)
	}
}

func TestDiffRemovedItem(t *testing.T) {
	a := snapshot(func(s *AgentSnapshot) { s.LLMConfig.KnowledgeBaseIDs = []string{"kb_1", "kb_2"} })
	b := snapshot(func(s *AgentSnapshot) { s.LLMConfig.KnowledgeBaseIDs = []string{"kb_1"} })
	got := DiffAgentConfig(a, b)
	if len(got) != 1 || got[0].Path != "llm_config.knowledge_base_ids.1" || got[0].Old != "kb_2" || got[0].New != nil {
		t.Fatalf("got %+v", got)
	}
}
