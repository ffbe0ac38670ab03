package main

import (
	"encoding/json"
)

// nameMark stands for the agent name in a PUT body; the Lua script puts a new name there
// on each request, so that every PUT changes the agent and really writes (an unchanged
// body is answered without a transaction).
const nameMark = "@@NAME@@"

// callBody is a typical finished call as the voice runtime registers it.
func callBody(agentID string) map[string]any {
	return map[string]any{
		"agent_id": agentID, "direction": "inbound", "status": "ended",
		"from_number": "+14155550123", "to_number": "+442071838750",
		"started_at": "2026-11-20T10:00:00Z", "ended_at": "2026-11-20T10:03:00Z",
		"disconnection_reason": "user_hangup",
		"transcript": []map[string]any{
			{"role": "agent", "content": "Hello, thanks for calling. How can I help?", "start_ms": 0},
			{"role": "user", "content": "I'd like to move my appointment to Friday.", "start_ms": 2100},
			{"role": "agent", "content": "Done: Friday at 10. Anything else?", "start_ms": 5200},
			{"role": "user", "content": "No, thank you.", "start_ms": 8000},
		},
		"variables": map[string]any{"customer": "Ada"}, "metadata": map[string]any{"crm_id": 42},
	}
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
