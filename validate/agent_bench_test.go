package validate_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/strictjson"
	"github.com/voiceapi/voiceapi/validate"
)

var catalog = func() *data.Catalog {
	cat, err := data.LoadCatalog("")
	if err != nil {
		panic(err)
	}
	return cat
}()

// toolOfType returns a complete tool of typ named name, as the docs' examples write it.
func toolOfType(typ, name string) map[string]any {
	t := map[string]any{"name": name, "type": typ, "description": "Tool " + name}
	switch typ {
	case data.ToolTransferCall:
		t["announcement_type"] = "static"
		t["announcement_message"] = "Let me put you through."
		t["hold_audio"] = "classical"
		t["custom_sip_headers"] = map[string]string{"X-Customer-Id": "42"}
		t["phone_directory"] = []map[string]string{{"name": "Billing", "phone_number": "+14155550100", "description": "Invoices", "transfer_type": "warm"}}
	case data.ToolPressIVR:
		t["pause_detection_delay_ms"] = 2000
	case data.ToolSendSMS:
		t["content_type"] = "static"
		t["content"] = "Your booking is confirmed."
	case data.ToolExtractDynamicVariable:
		t["variables"] = []map[string]any{
			{"type": "string", "name": "customer_name", "description": "The caller's name"},
			{"type": "enum", "name": "plan", "description": "The plan", "choices": []string{"basic", "pro"}},
		}
	case data.ToolCustomFunction:
		t["http_method"] = "POST"
		t["api_endpoint"] = "https://api.example.com/orders"
		t["timeout"] = 5000
		t["custom_function_headers"] = []string{"Authorization: Bearer token"}
		t["custom_function_parameters"] = `{"type":"object","properties":{"order_id":{"type":"string"}}}`
		t["custom_function_variables"] = []string{"order_id"}
		t["speak_during_execution"] = true
		t["speak_during_execution_options"] = []string{"One moment while I check."}
	}
	return t
}

// fullAgentBody is a create body giving every group, with n tools cycling through the
// tool types.
func fullAgentBody(n int) map[string]any {
	tools := make([]map[string]any, n)
	for i := range tools {
		typ := data.ToolTypes[i%len(data.ToolTypes)]
		tools[i] = toolOfType(typ, fmt.Sprintf("%s_%d", typ, i))
	}
	return map[string]any{
		"name":                  "Support line",
		"call_config":           map[string]any{"max_call_duration_ms": 1_800_000, "ring_duration_ms": 20_000},
		"knowledge_base_config": map[string]any{"chunks_to_retrieve": 5, "similarity_threshold": 0.5},
		"llm_config": map[string]any{
			"provider": "groq", "model": "llama-3.3-70b-versatile", "temperature": 0.3,
			"max_tokens": 800, "api_key": "gsk_0123456789abcdef", "knowledge_base_ids": []string{}, "tools": tools,
		},
		"prompt_config": map[string]any{
			"prompt": "You are the support line of Example Inc.", "first_speaker": "ai",
			"ai_speak_after_silence": true, "ai_speak_wait_time": 3, "welcome_message_type": "static",
			"welcome_message": "Hello, Example support.",
		},
		"stt_config": map[string]any{"provider": "deepgram", "model": "nova-3"},
		"tts_config": map[string]any{"provider": "cartesia", "model": "sonic-3", "voice_id": "a0e99841-438c-4a64-b679-ae501e7d6091", "speed": "normal", "emotion": "positivity:high"},
	}
}

// applyBody is what a create or an update does with a body before storage: decode it
// strictly into a data.AgentUpdate, merge it into base, and check the result; the faults
// come back as one error.
func applyBody(base *data.Agent, body []byte, creating bool) (*data.Agent, error) {
	var in data.AgentUpdate
	decodeErr := strictjson.Decode(body, &in)
	if decodeErr != nil && data.ErrorCode(decodeErr) != data.EINVALID {
		return nil, decodeErr
	}
	a := in.Apply(base)
	return a, validate.Combine(decodeErr, validate.AgentChange(a, &in, creating, catalog).Err())
}

func mustBody(tb testing.TB, v any) []byte {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func TestFullAgentBodyIsValid(t *testing.T) {
	a, err := applyBody(data.DefaultAgent(), mustBody(t, fullAgentBody(20)), true)
	if err != nil {
		t.Fatalf("full body rejected: %v", err.(*data.Error).Fields)
	}
	if len(a.LLMConfig.Tools) != 20 || a.TTSConfig.Provider != data.TTSCartesia || a.CallConfig.RingDurationMS != 20_000 {
		t.Fatalf("body not applied: %d tools, tts %s, ring %d", len(a.LLMConfig.Tools), a.TTSConfig.Provider, a.CallConfig.RingDurationMS)
	}
}

// BenchmarkApplyAgentBody decodes, merges and validates a full agent with 20 tools from
// its bytes, as a create does (target: under 50 µs/op).
func BenchmarkApplyAgentBody(b *testing.B) {
	body := mustBody(b, fullAgentBody(20))
	base := data.DefaultAgent()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := applyBody(base, body, true); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkUnmarshalAgentBody decodes the same body with plain encoding/json into `any`:
// no rules, no strictness. On a shared machine, whose speed varies from run to run, the
// ratio of BenchmarkApplyAgentBody to it is the steadier figure.
func BenchmarkUnmarshalAgentBody(b *testing.B) {
	raw, err := json.Marshal(fullAgentBody(20))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			b.Fatal(err)
		}
	}
}
