package server_test

import (
	"reflect"
	"testing"
)

// A body with several faults gets every one of them, with exact dot paths, in one 422.
func TestAgentEveryFaultAtOnce(t *testing.T) {
	e := newEnv(t)
	body := map[string]any{
		"name":        "",
		"call_config": map[string]any{"max_call_duration_ms": 59999, "ring_duration_ms": 300001},
		"llm_config": map[string]any{
			"temperature": 1.5,
			"temprature":  0.3,
			"tools": []any{
				map[string]any{"name": "ok", "type": "end_call"},
				map[string]any{"name": "transfer", "type": "transfer_call", "phone_directory": []any{
					map[string]any{"name": "Billing", "phone_number": "+14155550100", "description": "d", "transfer_type": "hot"},
				}},
				map[string]any{"name": "ok", "type": "end_call"},
			},
		},
		"prompt_config": map[string]any{"first_speaker": "robot"},
		"tts_config":    map[string]any{"speed": "fast"},
		"status":        "published",
	}
	want := []string{
		"name",
		"status",
		"call_config.max_call_duration_ms",
		"call_config.ring_duration_ms",
		"llm_config.temperature",
		"llm_config.temprature",
		"llm_config.tools.1.phone_directory.0.transfer_type",
		"llm_config.tools.2.name",
		"prompt_config.first_speaker",
		"tts_config.speed",
	}
	expectFields(t, e.do("POST", "/api/v1/agents", e.Owner.Token, body), want...)

	id := e.createAgent(e.Owner.Token, map[string]any{"name": "Valid"})["id"].(string)
	delete(body, "name")
	expectFields(t, e.do("PUT", "/api/v1/agents/"+id, e.Owner.Token, body), want[1:]...)
	if n := len(e.do("GET", "/api/v1/agents", e.Owner.Token, nil).List()); n != 1 {
		t.Errorf("%d agents, want the one valid create", n)
	}
}

// After any rejected update the stored agent is unchanged: the whole body and the ETag.
func TestAgentRejectedUpdateChangesNothing(t *testing.T) {
	e := newEnv(t)
	id := e.createAgent(e.Owner.Token, map[string]any{
		"name":       "Stable",
		"llm_config": map[string]any{"api_key": "gsk_stable_secret_0001", "tools": []any{map[string]any{"name": "end", "type": "end_call"}}},
	})["id"].(string)
	e.publish(e.Owner.Token, id, map[string]any{"description": "v1"})
	before, etag := e.agent(e.Owner.Token, id)

	rename := "Changed"
	cases := []struct {
		name   string
		body   map[string]any
		fields []string
	}{
		{"range", map[string]any{"name": rename, "call_config": map[string]any{"ring_duration_ms": 4999}}, []string{"call_config.ring_duration_ms"}},
		{"enum", map[string]any{"name": rename, "prompt_config": map[string]any{"welcome_message_type": "voice"}}, []string{"prompt_config.welcome_message_type"}},
		{"unknown provider", map[string]any{"name": rename, "tts_config": map[string]any{"provider": "polly"}}, []string{"tts_config.provider", "tts_config.model"}},
		{"unknown field", map[string]any{"name": rename, "llm_config": map[string]any{"temprature": 0.3}}, []string{"llm_config.temprature"}},
		{"unknown top-level field", map[string]any{"name": rename, "nmae": "x"}, []string{"nmae"}},
		{"null for non-nullable", map[string]any{"name": rename, "call_config": map[string]any{"max_call_duration_ms": nil}}, []string{"call_config.max_call_duration_ms"}},
		{"null group", map[string]any{"name": rename, "stt_config": nil}, []string{"stt_config"}},
		{"null name", map[string]any{"name": nil}, []string{"name"}},
		{"provider switch without its required fields", map[string]any{"name": rename, "llm_config": map[string]any{"provider": "bedrock_claude"}},
			[]string{"llm_config.model", "llm_config.region", "llm_config.max_tokens"}},
		{"unknown knowledge base", map[string]any{"name": rename, "llm_config": map[string]any{"knowledge_base_ids": []string{"kb_01JD6ZZZZZZZZZZZZZZZZZZZZZ"}}},
			[]string{"llm_config.knowledge_base_ids.0"}},
		{"masked key of another secret", map[string]any{"name": rename, "llm_config": map[string]any{"api_key": "****9999"}}, []string{"llm_config.api_key"}},
		{"read-only field", map[string]any{"name": rename, "published_version": 7}, []string{"published_version"}},
		{"tool item fault", map[string]any{"name": rename, "llm_config": map[string]any{"tools": []any{map[string]any{"name": "x", "type": "send_sms"}}}},
			[]string{"llm_config.tools.0.content_type", "llm_config.tools.0.content"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := e.do("PUT", "/api/v1/agents/"+id, e.Owner.Token, c.body)
			expectFields(t, r, c.fields...)
			after, etag2 := e.agent(e.Owner.Token, id)
			if !reflect.DeepEqual(before, after) || etag2 != etag {
				t.Fatalf("rejected update changed the agent:\nbefore %v\nafter  %v", before, after)
			}
		})
	}
	// Nothing rejected made a version or an event-visible change: still version 1, published.
	if vs := e.do("GET", "/api/v1/agents/"+id+"/versions", e.Owner.Token, nil).List(); len(vs) != 1 {
		t.Errorf("%d versions, want 1", len(vs))
	}
}
