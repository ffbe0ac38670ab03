package server_test

import (
	"testing"

	"github.com/voiceapi/voiceapi/internal/testkit"
)

// TestAgentTestFromCallLeavesWhatToolsSet: a conversation's call keeps the variables its
// tools set (note's vip, book's booking_id) beside those it began with. The test made from
// it begins with the latter only: given vip and booking_id at the start, a variable_equals
// criterion on them would hold before the agent called anything.
func TestAgentTestFromCallLeavesWhatToolsSet(t *testing.T) {
	e := newTestsEnv(t)
	agent := e.bookingAgent(t, "Trattoria")
	call := e.Do("POST", "/api/v1/calls", e.tok, map[string]any{"agent_id": agent, "direction": "web", "status": "ended",
		"variables": map[string]any{"shop": "Trattoria", "vip": true, "booking_id": "B7", "party": "Ada"},
		"transcript": []map[string]any{
			{"role": "agent", "content": "Hi, Trattoria here.", "start_ms": 0},
			{"role": "user", "content": "A table for two, I'm a vip", "start_ms": 1000},
			{"role": "tool", "content": `note({"vip":true}) → {"set":{"vip":true}}`, "start_ms": 1500},
			{"role": "tool", "content": `book({"people":2}) → {"status":200,"body":{"booking_id":"B7"}}`, "start_ms": 1600},
		}})
	testkit.Expect(t, call, 201)
	r := e.Do("POST", "/api/v1/agents/"+agent+"/tests/from-call/"+call.Data()["id"].(string), e.tok, nil)
	testkit.Expect(t, r, 201)
	vars := r.Data()["variables"].(map[string]any)
	if len(vars) != 2 || vars["shop"] != "Trattoria" || vars["party"] != "Ada" {
		t.Errorf("the test from the call begins with %v; want shop and party only", vars)
	}
}
