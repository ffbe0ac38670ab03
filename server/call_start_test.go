package server_test

import (
	"strings"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
)

// An inbound start answers the registered call, the published version with every
// variable substituted (the version's default, the number's, the call's, the built-ins),
// its credential in clear, and the variant; the call is the one GET shows.
func TestCallStartInbound(t *testing.T) {
	e := newStartEnv(t)
	testkit.Expect(t, e.Do("PUT", "/api/v1/numbers/"+e.number, e.Owner.Token, map[string]any{"variables": map[string]any{"plan": "gold"}}), 200)

	call, agent, variant := answer(t, e.start(inbound("+15551230000", map[string]any{"customer_name": "Ada"})))
	if call["status"] != "registered" || call["agent_id"] != e.agent || call["agent_version"] != float64(1) ||
		call["number_id"] != e.number || call["direction"] != "inbound" || call["from_number"] != "+15551230000" ||
		call["to_number"] != startNumber {
		t.Fatalf("call: %v", call)
	}
	if v := call["variables"].(map[string]any); len(v) != 1 || v["customer_name"] != "Ada" {
		t.Errorf("the call's variables are the request's: %v", v)
	}
	if variant["version"] != float64(1) || variant["weight"] != float64(100) || variant["rollout"] != false {
		t.Errorf("variant: %v", variant)
	}
	prompt := group(agent, "prompt_config")
	if !strings.HasPrefix(prompt["prompt"].(string), "You help Ada on the gold plan. It is ") ||
		!strings.HasSuffix(prompt["prompt"].(string), "; the caller is +15551230000.") || prompt["welcome_message"] != "Hello Ada!" {
		t.Errorf("prompt not substituted: %v", prompt)
	}
	vars := agent["variables"].(map[string]any)
	now, err := time.Parse(time.RFC3339, vars["current_time"].(string))
	if err != nil || !strings.HasSuffix(vars["current_time"].(string), "+01:00") && !strings.HasSuffix(vars["current_time"].(string), "+02:00") ||
		time.Since(now).Abs() > time.Minute {
		t.Errorf("current_time %v is not now in Europe/Paris (%v)", vars["current_time"], err)
	}
	if vars["call_id"] != call["id"] || vars["called_number"] != startNumber || vars["plan"] != "gold" {
		t.Errorf("variables: %v", vars)
	}
	llm := group(agent, "llm_config")
	if llm["api_key"] != startKey {
		t.Errorf("api_key %v, want it in clear", llm["api_key"])
	}
	tool := llm["tools"].([]any)[0].(map[string]any)
	if tool["description"] != "Look up Ada's order." || tool["api_endpoint"] != "https://api.example.com/orders/Ada" ||
		!strings.Contains(tool["custom_function_parameters"].(string), `"about gold"`) {
		t.Errorf("tool not substituted: %v", tool)
	}
	// The runtime calls the function with the credential header: opened, then substituted.
	if h := tool["custom_function_headers"].([]any); len(h) != 1 || h[0] != "X-Api-Key: key-gold-runtime-0001" {
		t.Errorf("custom_function_headers %v, want the header opened and substituted", h)
	}
	if agent["id"] != e.agent || agent["version"] != float64(1) || agent["name"] != "Front desk" || agent["knowledge"] != nil {
		t.Errorf("agent: id %v version %v name %v knowledge %v", agent["id"], agent["version"], agent["name"], agent["knowledge"])
	}
	shown := e.Do("GET", "/api/v1/calls/"+call["id"].(string), e.Owner.Token, nil)
	testkit.Expect(t, shown, 200)
	if !jsonEqual(shown.Data(), call) {
		t.Errorf("GET shows %v, the answer %v", shown.Data(), call)
	}

	// The credential is in the answer only: not in the call, its events (the audit log is
	// every event, what webhooks and the event stream carry), nor the server's log.
	audit := e.Do("GET", "/api/v1/audit-log?per_page=100", e.Owner.Token, nil)
	testkit.Expect(t, audit, 200)
	for where, text := range map[string]string{"the call": string(shown.Body), "the audit log": string(audit.Body), "the server's log": e.Logs.String()} {
		if strings.Contains(text, startKey) || strings.Contains(text, "-runtime-") {
			t.Errorf("%s holds the credential in clear", where)
		}
	}

	// The agent's default fills what neither the number nor the call gives.
	_, agent, _ = answer(t, e.start(inbound("+15551230001", nil)))
	if group(agent, "prompt_config")["welcome_message"] != "Hello there!" {
		t.Errorf("default_variables not used: %v", group(agent, "prompt_config")["welcome_message"])
	}
}

// Outbound: the named agent places the call; without one, the calling number's outbound
// agent; from_number names the number when it is the workspace's.
func TestCallStartOutbound(t *testing.T) {
	e := newStartEnv(t)
	other := e.publishedAgent("Sales")
	cases := []struct {
		name      string
		body      map[string]any
		agent     string
		number    any
		caller    string
		otherSide string
	}{
		{"by agent, from a number the workspace does not hold", map[string]any{"agent_id": other, "from_number": "+33100000000"}, other, nil, "+33100000000", "+15559990000"},
		{"by agent, from the workspace's number", map[string]any{"agent_id": other, "from_number": startNumber}, other, "number", startNumber, "+15559990000"},
		{"by the number's outbound agent", map[string]any{"from_number": startNumber}, "", "number", startNumber, "+15559990000"},
		{"by agent, no caller id", map[string]any{"agent_id": other}, other, nil, "", "+15559990000"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			body := c.body
			body["direction"], body["to_number"] = "outbound", c.otherSide
			call, agent, _ := answer(t, e.start(body))
			want := c.agent
			if want == "" {
				want = e.agent
			}
			wantNumber := c.number
			if wantNumber == "number" {
				wantNumber = e.number
			}
			if call["agent_id"] != want || agent["id"] != want || call["number_id"] != wantNumber || call["direction"] != "outbound" {
				t.Errorf("call %v (agent %v)", call, agent["id"])
			}
			vars := agent["variables"].(map[string]any)
			if vars["caller_number"] != c.caller || vars["called_number"] != c.otherSide {
				t.Errorf("built-ins: %v", vars)
			}
		})
	}
}

// Every refusal of conventions §23 and of the body's rules, with its status and code,
// and nothing stored by any of them.
func TestCallStartErrors(t *testing.T) {
	e := newStartEnv(t)
	draft := e.Do("POST", "/api/v1/agents", e.Owner.Token, map[string]any{"name": "Draft"}).Data()["id"].(string)
	testkit.Expect(t, e.Do("POST", "/api/v1/numbers", e.Owner.Token, map[string]any{"phone_number": "+14155550124", "provider": "sip"}), 201)
	testkit.Expect(t, e.Do("POST", "/api/v1/numbers", e.Owner.Token, map[string]any{"phone_number": "+14155550125", "provider": "sip", "inbound_agent_id": draft}), 201)
	stranger := e.NewUser("stranger@example.com", false)
	foreign := e.Do("POST", "/api/v1/agents", stranger.Token, map[string]any{"name": "Theirs"}).Data()["id"].(string)
	testkit.Expect(t, e.Do("POST", "/api/v1/numbers", stranger.Token, map[string]any{"phone_number": "+14155550126", "provider": "sip", "inbound_agent_id": foreign}), 201)
	needsPlan := e.Do("POST", "/api/v1/agents", e.Owner.Token, map[string]any{"name": "Needs",
		"prompt_config": map[string]any{"prompt": "{{account}} and {{tier}} for {{customer_name}}"}}).Data()["id"].(string)
	testkit.Expect(t, e.Do("POST", "/api/v1/agents/"+needsPlan+"/publish", e.Owner.Token, nil), 204)

	before := e.callCount()
	out := func(extra map[string]any) map[string]any {
		b := map[string]any{"direction": "outbound", "to_number": "+15559990000"}
		for k, v := range extra {
			b[k] = v
		}
		return b
	}
	scenarios := []testkit.Scenario{
		{Name: "unknown number", Body: inbound("", nil), Status: 404, Code: data.ENOTFOUND,
			Vars: map[string]string{}},
		{Name: "another workspace's number", Body: map[string]any{"direction": "inbound", "to_number": "+14155550126"}, Status: 404, Code: data.ENOTFOUND},
		{Name: "unknown calling number", Body: out(map[string]any{"from_number": "+14155550199"}), Status: 404, Code: data.ENOTFOUND},
		{Name: "another workspace's agent", Body: out(map[string]any{"agent_id": foreign}), Status: 404, Code: data.ENOTFOUND},
		{Name: "number without an inbound agent", Body: map[string]any{"direction": "inbound", "to_number": "+14155550124"}, Status: 409, Code: data.ECONFLICT},
		{Name: "number without an outbound agent", Body: out(map[string]any{"from_number": "+14155550124"}), Status: 409, Code: data.ECONFLICT},
		{Name: "no published version", Body: map[string]any{"direction": "inbound", "to_number": "+14155550125"}, Status: 409, Code: data.ENOTPUBLISHED},
		{Name: "no published version by agent", Body: out(map[string]any{"agent_id": draft}), Status: 409, Code: data.ENOTPUBLISHED},
		{Name: "missing variables", Body: out(map[string]any{"agent_id": needsPlan, "variables": map[string]any{"tier": 2}}),
			Code: data.EMISSINGVARIABLES, Fields: []string{"variables.account", "variables.customer_name"}},
		{Name: "to_number not E.164", Body: map[string]any{"direction": "inbound", "to_number": "4155550123"}, Fields: []string{"to_number"}},
		{Name: "no to_number", Body: map[string]any{"direction": "inbound"}, Fields: []string{"to_number"}},
		{Name: "agent_id on an inbound call", Body: map[string]any{"direction": "inbound", "to_number": startNumber, "agent_id": e.agent}, Fields: []string{"agent_id"}},
		{Name: "outbound with neither agent_id nor from_number", Body: out(nil), Fields: []string{"agent_id"}},
		{Name: "agent_id not of an agent id's form", Body: out(map[string]any{"agent_id": "nope"}), Fields: []string{"agent_id"}},
		{Name: "direction web", Body: map[string]any{"direction": "web", "to_number": startNumber}, Fields: []string{"direction"}},
		{Name: "no direction", Body: map[string]any{"to_number": startNumber}, Fields: []string{"direction"}},
		{Name: "variables of other types", Body: inbound("+15551230000", map[string]any{"a": map[string]any{}, "b": []any{1}, "c": nil, "ok": 1.5}),
			Fields: []string{"variables.a", "variables.b", "variables.c"}},
		{Name: "a variable name off the pattern", Body: inbound("+15551230000", map[string]any{"no spaces": "x"}), Fields: []string{"variables.no spaces"}},
		{Name: "an unknown member", Body: map[string]any{"direction": "inbound", "to_number": startNumber, "agent": e.agent}, Fields: []string{"agent"}},
	}
	for i := range scenarios {
		scenarios[i].Method, scenarios[i].Path = "POST", "/api/v1/calls/start"
		scenarios[i].Token = func(*testkit.Server) string { return e.runtime }
		if scenarios[i].Fields != nil && scenarios[i].Code == "" {
			scenarios[i].Code = data.EINVALID
		}
	}
	scenarios[0].Body = map[string]any{"direction": "inbound", "to_number": "+14155550100"}
	e.Run(t, scenarios)
	if after := e.callCount(); after != before {
		t.Errorf("refused starts stored calls: %d before, %d after", before, after)
	}
}

// The month's minutes and the concurrency limits refuse a start: 403 quota_exceeded,
// 429 concurrency_limit with Retry-After; an ended call frees its place.
func TestCallStartLimits(t *testing.T) {
	e := newStartEnv(t)
	e.setLimits(map[string]int64{data.LimitConcurrentCalls: 2})
	first, _, _ := answer(t, e.start(inbound("+15550000001", nil)))
	answer(t, e.start(inbound("+15550000002", nil)))
	r := e.start(inbound("+15550000003", nil))
	testkit.Expect(t, r, 429)
	if r.Code() != data.ECONCURRENCY || r.Header.Get("Retry-After") != "5" || !strings.Contains(r.JSON()["message"].(string), "concurrent_calls") {
		t.Errorf("third start: %s (Retry-After %q)", r.Body, r.Header.Get("Retry-After"))
	}
	sub := e.Do("GET", "/api/v1/subscription", e.Owner.Token, nil).Data()
	if sub["usage"].(map[string]any)["concurrent_calls"] != float64(2) || sub["limits"].(map[string]any)["concurrent_calls"] != float64(2) {
		t.Errorf("subscription: %v", sub)
	}
	testkit.Expect(t, e.Do("PUT", "/api/v1/calls/"+first["id"].(string), e.runtime, map[string]any{"status": "ended"}), 204)
	answer(t, e.start(inbound("+15550000003", nil)))

	// The agent's own bound, below the workspace's.
	e.setLimits(map[string]int64{data.LimitConcurrentCalls: -1})
	testkit.Expect(t, e.Do("PUT", "/api/v1/agents/"+e.agent, e.Owner.Token, map[string]any{"max_concurrent_calls": 2}), 200)
	r = e.start(inbound("+15550000004", nil))
	if r.Status != 429 || !strings.Contains(r.JSON()["message"].(string), "max_concurrent_calls") {
		t.Errorf("agent bound: %d %s", r.Status, r.Body)
	}
	// The registration channel is held to the same bound.
	reg := e.Do("POST", "/api/v1/calls", e.runtime, map[string]any{"agent_id": e.agent, "direction": "web"})
	if reg.Status != 429 {
		t.Errorf("POST /calls past the agent's bound: %d %s", reg.Status, reg.Body)
	}
	// A finished call registered is no open call: it passes.
	testkit.Expect(t, e.Do("POST", "/api/v1/calls", e.runtime, map[string]any{"agent_id": e.agent, "direction": "web", "status": "ended"}), 201)
	testkit.Expect(t, e.Do("PUT", "/api/v1/agents/"+e.agent, e.Owner.Token, map[string]any{"max_concurrent_calls": nil}), 200)

	// The month's minutes: a call of two minutes uses a limit of 2.
	e.setLimits(map[string]int64{data.LimitCallMinutes: 2})
	started := time.Now().Add(-2 * time.Minute).UTC().Format(time.RFC3339)
	testkit.Expect(t, e.Do("POST", "/api/v1/calls", e.runtime, map[string]any{"agent_id": e.agent, "direction": "web", "status": "ended",
		"started_at": started, "duration_ms": 120000}), 201)
	r = e.start(inbound("+15550000005", nil))
	testkit.Expect(t, r, 403)
	if r.Code() != data.EQUOTA {
		t.Errorf("minutes used up: %s", r.Body)
	}
}

// A workspace's export carries what the call start reads (an agent's default_variables,
// timezone and max_concurrent_calls, a number's variables), and an import restores them.
func TestCallStartSettingsTravelInExports(t *testing.T) {
	e := newStartEnv(t)
	testkit.Expect(t, e.Do("PUT", "/api/v1/agents/"+e.agent, e.Owner.Token, map[string]any{"max_concurrent_calls": 5}), 200)
	testkit.Expect(t, e.Do("PUT", "/api/v1/numbers/"+e.number, e.Owner.Token, map[string]any{"variables": map[string]any{"plan": "gold", "seats": 3}}), 200)
	doc := e.Do("GET", "/api/v1/workspaces/"+e.ws+"/export", e.Owner.Token, nil)
	testkit.Expect(t, doc, 200)

	dst := testkit.NewServer(t, nil)
	imp := dst.Do("POST", "/api/v1/workspaces/"+dst.Owner.WorkspaceID+"/import", dst.Owner.Token, doc.Body)
	testkit.Expect(t, imp, 201)
	agents := dst.Do("GET", "/api/v1/agents", dst.Owner.Token, nil).List()
	numbers := dst.Do("GET", "/api/v1/numbers", dst.Owner.Token, nil).List()
	if len(agents) != 1 || len(numbers) != 1 {
		t.Fatalf("imported %d agents, %d numbers", len(agents), len(numbers))
	}
	a, n := agents[0].(map[string]any), numbers[0].(map[string]any)
	pc := a["prompt_config"].(map[string]any)
	if a["max_concurrent_calls"] != float64(5) || pc["timezone"] != "Europe/Paris" || pc["default_variables"].(map[string]any)["plan"] != "basic" {
		t.Errorf("imported agent: max_concurrent_calls %v, prompt_config %v", a["max_concurrent_calls"], pc)
	}
	if v := n["variables"].(map[string]any); v["plan"] != "gold" || v["seats"] != float64(3) {
		t.Errorf("imported number's variables: %v", v)
	}
}
