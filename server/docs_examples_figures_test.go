package server_test

import (
	"testing"

	"github.com/voiceapi/voiceapi/internal/testkit"
)

// The figures' examples (analytics.md, analysis.md's figures), on an agent with
// analysis.md's analysis_config and two calls: one ended, priced and analyzed on version
// 1, one whose dial failed on version 2. The figures are asked from the day of the env's
// clock, so that their series have the one bucket the examples show.

// figuresAgent makes that agent once and returns its id.
func (e *docEnv) figuresAgent(t *testing.T) string {
	t.Helper()
	if e.figures != "" {
		return e.figures
	}
	config := stripElided(docJSON(t, e.block(t, "analysis.md#1"))[0].body).(map[string]any)
	config["name"] = "Bookings"
	config["llm_config"] = map[string]any{"provider": "groq", "model": "llama-3.3-70b-versatile", "api_key": "gsk_0123456789abcdef"}
	r := e.Do("POST", "/api/v1/agents", e.tok, config)
	testkit.Expect(t, r, 201)
	id := r.Data()["id"].(string)
	testkit.Expect(t, e.Do("POST", "/api/v1/agents/"+id+"/publish", e.tok, nil), 204)
	prices := docJSON(t, e.block(t, "analysis.md#3"))[0].body
	testkit.Expect(t, e.Do("PUT", "/api/v1/price-table", e.tok, prices), 200)
	usage := reportedUsage(t, docJSON(t, e.block(t, "analysis.md#2"))[0].body)["usage"]
	e.registerCall(t, map[string]any{"agent_id": id, "usage": usage,
		"analysis": map[string]any{"outcome": "booked", "party_size": 2, "call_successful": true}})
	// The failed call runs on a second version, as analytics.md's versions show.
	testkit.Expect(t, e.Do("PUT", "/api/v1/agents/"+id, e.tok, map[string]any{"name": "Bookings v2"}), 200)
	testkit.Expect(t, e.Do("POST", "/api/v1/agents/"+id+"/publish", e.tok, nil), 204)
	e.registerCall(t, map[string]any{"agent_id": id, "status": "failed", "disconnection_reason": "dial_failed",
		"started_at": nil, "ended_at": nil})
	e.figures = id
	return id
}

// figuresFrom is the start of the env clock's day.
const figuresFrom = "2026-03-09T00:00:00Z"

// callFigures checks analytics.md's answer against the agent's call figures.
func callFigures(e *docEnv, t *testing.T, reqs []docRequest) {
	r := e.Do("GET", "/api/v1/analytics/calls?from="+figuresFrom+"&agent_id="+e.figuresAgent(t), e.tok, nil)
	testkit.Expect(t, r, 200)
	expectShape(t, reqs[0].body, r, true)
}

// analysisFigures checks analysis.md's figures against the agent's outcome figures.
func analysisFigures(e *docEnv, t *testing.T, reqs []docRequest) {
	r := e.Do("GET", "/api/v1/analytics/analysis?field=outcome&from="+figuresFrom+"&agent_id="+e.figuresAgent(t), e.tok, nil)
	testkit.Expect(t, r, 200)
	expectShape(t, reqs[0].body, r, true)
}
