package server_test

import (
	"slices"
	"strings"
	"testing"
)

// specField is a field of the spec's agent tables with its nullability: "number,
// nullable" and the like are nullable, every other type is not.
type specField struct {
	path     string // dot path, tools fields under llm_config.tools.0
	nullable bool
}

// specAgentFields lists every field of the spec's agent tables (Resources: Agent and
// its config groups, the Tool object), in the spec's order.
var specAgentFields = func() []specField {
	var out []specField
	add := func(prefix string, nullable bool, names ...string) {
		for _, n := range names {
			out = append(out, specField{prefix + n, nullable})
		}
	}
	add("", false, "name", "call_config", "knowledge_base_config", "llm_config", "prompt_config", "stt_config", "tts_config")
	add("call_config.", false, "max_call_duration_ms", "ring_duration_ms")
	add("knowledge_base_config.", false, "chunks_to_retrieve")
	add("knowledge_base_config.", true, "similarity_threshold")
	add("llm_config.", false, "provider", "model", "temperature", "deployment", "endpoint", "api_version", "base_url",
		"region", "max_tokens", "knowledge_base_ids", "tools")
	add("llm_config.", true, "api_key")
	const tool = "llm_config.tools.0."
	add(tool, false, "name", "type", "custom_sip_headers", "phone_directory", "content_type", "content", "http_method",
		"api_endpoint", "custom_function_headers", "custom_function_query", "custom_function_variables",
		"speak_during_execution_options", "variables")
	add(tool, true, "description", "announcement_type", "announcement_message", "announcement_prompt",
		"transfer_declined_message", "hold_audio", "voicemail_detection", "voicemail_response_action_type",
		"voicemail_response_text", "pause_detection_delay_ms", "timeout", "custom_function_parameters",
		"speak_during_execution", "speak_after_execution")
	add("prompt_config.", false, "prompt", "first_speaker", "ai_speak_after_silence", "ai_speak_wait_time",
		"welcome_message_type", "welcome_message")
	add("stt_config.", false, "provider", "model")
	add("tts_config.", false, "provider", "model", "streaming_latency", "speed_alpha")
	add("tts_config.", true, "voice_id", "speaker", "speed", "emotion")
	return out
}()

// nullBody is an agent update that sets field f to null and is otherwise valid, in the
// group (provider, tool type) where f is used, so that null is the only fault it can have.
func nullBody(f string) map[string]any {
	group, field, _ := strings.Cut(f, ".")
	if field == "" {
		return map[string]any{group: nil}
	}
	if tool, ok := strings.CutPrefix(field, "tools.0."); ok {
		return map[string]any{group: map[string]any{"tools": []any{nullTool(tool)}}}
	}
	var g map[string]any
	switch {
	case field == "provider":
		g = map[string]any{"llm_config": map[string]any{"model": "llama-3.3-70b-versatile"}, "stt_config": map[string]any{"model": "nova-3"},
			"tts_config": map[string]any{"model": "eleven_flash_v2_5", "voice_id": "v", "streaming_latency": 1}}[group].(map[string]any)
	case group == "llm_config" && slices.Contains([]string{"deployment", "endpoint", "api_version"}, field):
		g = map[string]any{"provider": "azure", "model": "gpt-4o", "deployment": "d", "endpoint": "https://x.openai.azure.com", "api_version": "2024-06-01"}
	case group == "llm_config" && field == "base_url":
		g = map[string]any{"provider": "internal", "model": "llama3", "base_url": "https://llm.example.com/v1"}
	case group == "llm_config" && (field == "region" || field == "max_tokens"):
		g = map[string]any{"provider": "bedrock_claude", "model": "anthropic.claude-sonnet-4-6", "region": "eu-west-1", "max_tokens": 512}
	case group == "tts_config" && slices.Contains([]string{"voice_id", "speed_alpha"}, field):
		// voice_id is nullable where no provider needs it: rime's (spec: speaker is "used
		// instead of voice_id").
		g = map[string]any{"provider": "rime", "model": "mistv2", "speaker": "cove", "streaming_latency": 1, "speed_alpha": 1.0}
	case group == "tts_config" && field == "speaker":
		g = map[string]any{"provider": "elevenlabs", "model": "eleven_flash_v2_5", "voice_id": "v", "streaming_latency": 1}
	case group == "tts_config" && slices.Contains([]string{"speed", "emotion"}, field):
		g = map[string]any{"provider": "cartesia", "model": "sonic-2", "voice_id": "v", "speed": "slow", "emotion": "anger"}
	default:
		g = map[string]any{}
	}
	g[field] = nil
	return map[string]any{group: g}
}

// nullTool is a valid tool of the type that uses field, with field set to null.
func nullTool(field string) map[string]any {
	t := map[string]any{"name": "t", "type": "end_call"}
	switch field {
	case "phone_directory":
		t["type"] = "transfer_call"
	case "content_type", "content":
		t["type"], t["content_type"], t["content"] = "send_sms", "static", "Your code is 1234."
	case "variables":
		t["type"] = "extract_dynamic_variable"
	case "http_method", "api_endpoint", "custom_function_headers", "custom_function_query", "custom_function_variables",
		"custom_function_parameters", "speak_during_execution", "speak_during_execution_options", "speak_after_execution":
		t["type"], t["http_method"], t["api_endpoint"] = "custom_function", "POST", "https://api.example.com/orders"
	}
	t[field] = nil
	return t
}

// TestSpecAgentNullability walks every field of the spec's agent tables: "A nullable
// field accepts null; a non-nullable field given null is a validation error" (conventions
// §1), the spec's "string, nullable" and the like deciding which is which. Each update
// sets one field to null in a body otherwise valid; a nullable field is stored as null
// (200), a non-nullable one is a 422 naming exactly its path and changes nothing. The
// OpenAPI document says the same of each field (its type lists "null" exactly when the
// spec's does). A nullable field that some provider requires (voice_id, speaker) is tried
// with a provider that does not.
func TestSpecAgentNullability(t *testing.T) {
	e := newEnv(t)
	id := e.createAgent(e.Owner.Token, map[string]any{"name": "Nulls"})["id"].(string)
	_, etag := e.agent(e.Owner.Token, id)
	for _, f := range specAgentFields {
		r := e.do("PUT", "/api/v1/agents/"+id, e.Owner.Token, nullBody(f.path))
		if !f.nullable {
			expectFields(t, r, f.path)
			if _, now := e.agent(e.Owner.Token, id); now != etag {
				t.Fatalf("%s: null refused, yet the agent changed", f.path)
			}
			continue
		}
		if r.Status != 200 {
			t.Errorf("%s is nullable in the spec, yet null was refused: %d %s", f.path, r.Status, r.Body)
			continue
		}
		if v, ok := r.Data()[strings.Split(f.path, ".")[0]].(map[string]any); ok && path(r.Data(), f.path) != nil {
			t.Errorf("%s: null stored as %v (%v)", f.path, path(r.Data(), f.path), v)
		}
		_, etag = e.agent(e.Owner.Token, id)
	}
	checkDocumentedNullability(t)
}

// checkDocumentedNullability checks the OpenAPI document's agent input schemas give each
// spec field a type with "null" exactly when the spec makes it nullable.
func checkDocumentedNullability(t *testing.T) {
	t.Helper()
	_, doc := openapiDocument(t)
	schemas := path(doc, "components.schemas").(map[string]any)
	inputs := map[string]string{"": "AgentUpdate", "call_config": "CallConfigInput", "knowledge_base_config": "KnowledgeBaseConfigInput",
		"llm_config": "LLMConfigInput", "llm_config.tools.0": "ToolInput", "prompt_config": "PromptConfigInput",
		"stt_config": "STTConfigInput", "tts_config": "TTSConfigInput"}
	for _, f := range specAgentFields {
		i := strings.LastIndex(f.path, ".")
		parent, name := "", f.path
		if i >= 0 {
			parent, name = f.path[:i], f.path[i+1:]
		}
		prop, _ := path(schemas[inputs[parent]], "properties."+name).(map[string]any)
		if prop == nil {
			t.Errorf("%s: not in the document's %s", f.path, inputs[parent])
			continue
		}
		if documented := nullableSchema(prop); documented != f.nullable {
			t.Errorf("%s: the document's nullable is %v, the spec's %v (%v)", f.path, documented, f.nullable, prop)
		}
	}
}

// nullableSchema reports whether a property schema admits null.
func nullableSchema(prop map[string]any) bool {
	switch typ := prop["type"].(type) {
	case []any:
		return slices.Contains(typ, any("null"))
	case string:
		return typ == "null"
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		alts, _ := prop[k].([]any)
		for _, a := range alts {
			if m, _ := a.(map[string]any); m != nil && (m["type"] == "null" || nullableSchema(m)) {
				return true
			}
		}
	}
	return false
}
