// Package fakeagents makes complete agent bodies, every group given and tools of every
// type, for the benchmarks, the fuzz tests and the bench tool.
package fakeagents

import (
	"fmt"

	"github.com/voiceapi/voiceapi/data"
)

// ToolOfType returns a complete tool of typ named name, as docs/agents.md writes them.
func ToolOfType(typ, name string) map[string]any {
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

// Body is a full agent body named name: every config group, and tools tools cycling
// through the tool types. It is valid for a create and for a full replacement (PUT).
func Body(name string, tools int) map[string]any {
	list := make([]map[string]any, tools)
	for i := range list {
		typ := data.ToolTypes[i%len(data.ToolTypes)]
		list[i] = ToolOfType(typ, fmt.Sprintf("%s_%d", typ, i))
	}
	return map[string]any{
		"name":                  name,
		"call_config":           map[string]any{"max_call_duration_ms": 1_800_000, "ring_duration_ms": 20_000},
		"knowledge_base_config": map[string]any{"chunks_to_retrieve": 5, "similarity_threshold": 0.5},
		"llm_config": map[string]any{
			"provider": "groq", "model": "llama-3.3-70b-versatile", "temperature": 0.3,
			"max_tokens": 800, "api_key": "gsk_0123456789abcdef", "knowledge_base_ids": []string{}, "tools": list,
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
