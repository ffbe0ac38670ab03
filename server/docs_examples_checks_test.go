package server_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/voiceapi/voiceapi/internal/llmtest"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/service"
)

// The checks of docExamples that need more than one request.

// callStart sends runtime.md's start with the runtime key.
func callStart(e *docEnv, t *testing.T, reqs []docRequest) *testkit.Response {
	t.Helper()
	r := e.Do("POST", "/api/v1/calls/start", e.runtime, e.substitute(t, stripElided(reqs[0].body)))
	testkit.Expect(t, r, 201)
	return r
}

// callStartAnswer checks runtime.md's answer against a start of runtime.md's request.
func callStartAnswer(e *docEnv, t *testing.T, reqs []docRequest) {
	r := callStart(e, t, docJSON(t, e.block(t, "runtime.md#1")))
	expectShape(t, reqs[0].body, r, true)
}

// conversationStart starts a conversation with the published agent.
func conversationStart(e *docEnv, t *testing.T, reqs []docRequest) *testkit.Response {
	t.Helper()
	return e.start(t, e.ids["agt"], e.substitute(t, stripElided(reqs[0].body)), 201)
}

// conversationAnswer checks conversations.md's 201 against a start of its request.
func conversationAnswer(e *docEnv, t *testing.T, reqs []docRequest) {
	r := conversationStart(e, t, docJSON(t, e.block(t, "conversations.md#6")))
	expectShape(t, reqs[0].body, r, true)
}

// errorShape checks api.md's failure against a create without a name.
func errorShape(e *docEnv, t *testing.T, reqs []docRequest) {
	r := e.Do("POST", "/api/v1/agents", e.tok, map[string]any{})
	testkit.Expect(t, r, 422)
	expectShape(t, reqs[0].body, r, true)
}

// redactionSetting puts redaction.md's setting where it lives, the workspace's privacy.
func redactionSetting(e *docEnv, t *testing.T, reqs []docRequest) {
	body := map[string]any{"privacy": map[string]any{"redaction": reqs[0].body}}
	r := e.Do("PUT", "/api/v1/workspaces/"+e.ids["ws"], e.tok, body)
	testkit.Expect(t, r, 200)
	expectMember(t, reqs[0].body, r, true, "data", "privacy", "redaction")
}

// registerCall registers an ended call of runtime.md's agent with more members.
func (e *docEnv) registerCall(t *testing.T, more map[string]any) string {
	t.Helper()
	body := map[string]any{"agent_id": e.frontDesk, "number_id": e.ids["num"], "direction": "inbound",
		"from_number": "+15551230000", "to_number": docNumber, "status": "ended", "disconnection_reason": "user_hangup",
		"started_at": "2026-03-09T12:00:00Z", "ended_at": "2026-03-09T12:01:05Z"}
	for k, v := range more {
		body[k] = v
	}
	r := e.Do("POST", "/api/v1/calls", e.runtime, body)
	testkit.Expect(t, r, 201)
	return r.Data()["id"].(string)
}

// reportedUsage is analysis.md's usage member as a runtime sends it: without the
// analysis list, which post-call analysis alone writes (the doc says so below it).
func reportedUsage(t *testing.T, doc any) map[string]any {
	t.Helper()
	body := stripElided(doc).(map[string]any)
	usage := body["usage"].(map[string]any)
	if _, ok := usage["analysis"]; !ok {
		t.Fatal("the usage example no longer shows the analysis list: update reportedUsage")
	}
	delete(usage, "analysis")
	return body
}

// callUsage registers a call with analysis.md's usage, as a runtime reports it, on an
// agent of the stand-in with analysis.md's analysis_config, has post-call analysis run
// on it (which adds the analysis list) and checks the call's usage against the example,
// whole.
func callUsage(e *docEnv, t *testing.T, reqs []docRequest) {
	config := stripElided(docJSON(t, e.block(t, "analysis.md#1"))[0].body).(map[string]any)
	config["name"] = "Analyzed"
	agent := e.createAgent(t, config)
	testkit.Expect(t, e.Do("POST", "/api/v1/agents/"+agent+"/publish", e.tok, nil), 204)
	more := reportedUsage(t, reqs[0].body)
	more["agent_id"] = agent
	more["transcript"] = []any{map[string]any{"role": "user", "content": "A table for four on June 5.", "start_ms": 0}}
	id := e.registerCall(t, more)
	e.stand.Respond(func(llmtest.Request) llmtest.Reply { return llmtest.JSON(docAnalysis) })
	testkit.Expect(t, e.Do("POST", "/api/v1/calls/"+id+"/analyze", e.tok, nil), 202)
	if _, err := e.Svc.Jobs.NewRunner(service.RunnerOptions{}).RunDue(context.Background()); err != nil {
		t.Fatal(err)
	}
	r := e.Do("GET", "/api/v1/calls/"+id, e.tok, nil)
	testkit.Expect(t, r, 200)
	expectMember(t, reqs[0].body.(map[string]any)["usage"], r, true, "data", "usage")
}

// docAnalysis is what the stand-in answers post-call analysis, fitting analysis.md's fields.
const docAnalysis = `{"outcome":"booked","party_size":4,"visit_date":"2026-06-05","wants_newsletter":null,"notes":null,"call_successful":true,"summary":"A table for four."}`

// callCost checks analysis.md's cost member against a call with its usage, priced by a
// table without elevenlabs so that the tts line is unpriced as in the example.
func callCost(e *docEnv, t *testing.T, reqs []docRequest) {
	prices := map[string]any{"currency": "USD", "prices": []any{
		map[string]any{"provider": "groq", "model": "*", "unit": "llm_input_1m_tokens", "price": "0.59"},
		map[string]any{"provider": "groq", "model": "*", "unit": "llm_output_1m_tokens", "price": "0.79"},
		map[string]any{"provider": "twilio", "model": "*", "unit": "telephony_minute", "price": "0.014"}}}
	testkit.Expect(t, e.Do("PUT", "/api/v1/price-table", e.tok, prices), 200)
	id := e.registerCall(t, reportedUsage(t, docJSON(t, e.block(t, "analysis.md#2"))[0].body))
	r := e.Do("GET", "/api/v1/calls/"+id, e.tok, nil)
	testkit.Expect(t, r, 200)
	expectMember(t, reqs[0].body.(map[string]any)["cost"], r, true, "data", "cost")
}

// searchMember checks calls.md's search member against a search that finds a call.
func searchMember(e *docEnv, t *testing.T, reqs []docRequest) {
	e.registerCall(t, map[string]any{"transcript": []any{
		map[string]any{"role": "agent", "content": "Hello!", "start_ms": 0},
		map[string]any{"role": "user", "content": "I want to CANCEL my subscription, please.", "start_ms": 1800}}})
	r := e.Do("GET", "/api/v1/calls?q=cancel+subscription", e.tok, nil)
	testkit.Expect(t, r, 200)
	expectMember(t, reqs[0].body.(map[string]any)["search"], r, true, "data", 0, "search")
}

// versionDiff checks agents.md's diff against the change it describes: a key replaced,
// a tool renamed, a tool added, the name changed.
func versionDiff(e *docEnv, t *testing.T, reqs []docRequest) {
	tool := func(name, typ string) map[string]any { return map[string]any{"name": name, "type": typ} }
	press := map[string]any{"name": "press_digit", "type": "press_ivr"}
	agent := map[string]any{"name": "Support", "llm_config": map[string]any{"provider": "groq", "model": "llama-3.3-70b-versatile",
		"api_key": "gsk_0123456789abcdef2222", "tools": []any{tool("end", "end_call"), press}}}
	r := e.Do("POST", "/api/v1/agents", e.tok, agent)
	testkit.Expect(t, r, 201)
	id := r.Data()["id"].(string)
	testkit.Expect(t, e.Do("POST", "/api/v1/agents/"+id+"/publish", e.tok, nil), 204)
	transfer := map[string]any{"name": "transfer", "type": "transfer_call",
		"phone_directory": []any{map[string]any{"name": "Billing", "phone_number": "+14155550100",
			"description": "Invoices and refunds", "transfer_type": "warm"}}}
	change := map[string]any{"name": "Support v2", "llm_config": map[string]any{"provider": "groq", "model": "llama-3.3-70b-versatile",
		"api_key": "gsk_0123456789abcdef4444", "tools": []any{tool("hang_up", "end_call"), press, transfer}}}
	testkit.Expect(t, e.Do("PUT", "/api/v1/agents/"+id, e.tok, change), 200)
	r = e.Do("GET", "/api/v1/agents/"+id+"/versions/1/diff/current", e.tok, nil)
	testkit.Expect(t, r, 200)
	expectShape(t, reqs[0].body, r, true)
}

// runtimeRequest sends runtime.md's request as documented.
func runtimeRequest(e *docEnv, t *testing.T, reqs []docRequest) { callStart(e, t, reqs) }

// conversationRequest sends conversations.md's start as documented.
func conversationRequest(e *docEnv, t *testing.T, reqs []docRequest) { conversationStart(e, t, reqs) }

// dialClaim checks campaigns.md's claim answer against a claim of its campaign (the
// example above it), whose New York recipient is due on the env's clock.
func dialClaim(e *docEnv, t *testing.T, reqs []docRequest) {
	body := e.substitute(t, stripElided(docJSON(t, e.block(t, "campaigns.md#1"))[0].body))
	testkit.Expect(t, e.Do("POST", "/api/v1/campaigns", e.tok, body), 201)
	r := e.Do("POST", "/api/v1/dial-tasks/claim", e.runtime, map[string]any{"max": 10, "lease_seconds": 60})
	testkit.Expect(t, r, 200)
	expectShape(t, reqs[0].body, r, true)
}

// suppressionBoundAnswer checks campaigns.md's 422 against a JSON import past the
// suppression list's bound, lowered to 5 for the check (LowerSuppressionBound, as the
// bound's own tests do) in a workspace of its own: the list holds 3, 3 new would make 6.
func suppressionBoundAnswer(e *docEnv, t *testing.T, reqs []docRequest) {
	r := e.Do("POST", "/api/v1/workspaces", e.tok, map[string]any{"name": "Lists"})
	testkit.Expect(t, r, 201)
	tok := e.Server.TokenIn(e.Owner, r.Data()["id"].(string))
	e.Svc.LowerSuppressionBound(5)
	t.Cleanup(func() { e.Svc.LowerSuppressionBound(0) })
	rows := func(from int) []any {
		var out []any
		for i := from; i < from+3; i++ {
			out = append(out, map[string]any{"phone_number": fmt.Sprintf("+1415000%04d", i)})
		}
		return out
	}
	testkit.Expect(t, e.Do("POST", "/api/v1/suppressions/import", tok, map[string]any{"rows": rows(0)}), 200)
	r = e.Do("POST", "/api/v1/suppressions/import", tok, map[string]any{"rows": rows(10)})
	testkit.Expect(t, r, 422)
	expectShape(t, reqs[0].body, r, true)
}
