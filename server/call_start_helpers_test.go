package server_test

import (
	"context"
	"testing"

	"github.com/voiceapi/voiceapi/bolt"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
)

// startKey is the credential the tests' agents carry: the call-start answer shows it in
// clear, and nothing else may.
const startKey = "gsk_start-secret-0123456789abcdef"

// startEnv is a workspace ready for call starts: a published agent whose texts use
// variables, an inbound/outbound number bound to it, and a calls:runtime key.
type startEnv struct {
	*testkit.Server
	t       *testing.T
	ws      string
	agent   string
	number  string // id of +14155550123
	runtime string // a key with the calls:runtime scope
}

const startNumber = "+14155550123"

// startAgentBody is an agent whose prompt, welcome message and a custom function (its
// credential header too, sealed at rest) use variables: customer_name has a default, plan has none (a start must give it), and
// current_time is written in Europe/Paris.
func startAgentBody(name string) map[string]any {
	return map[string]any{
		"name": name,
		"prompt_config": map[string]any{
			"prompt":            "You help {{customer_name}} on the {{plan}} plan. It is {{current_time}}; the caller is {{caller_number}}.",
			"welcome_message":   "Hello {{customer_name}}!",
			"default_variables": map[string]any{"customer_name": "there", "plan": "basic"},
			"timezone":          "Europe/Paris",
		},
		"llm_config": map[string]any{"provider": "groq", "model": "llama-3.3-70b-versatile", "api_key": startKey,
			"tools": []any{map[string]any{"name": "lookup", "type": "custom_function", "description": "Look up {{customer_name}}'s order.",
				"http_method": "POST", "api_endpoint": "https://api.example.com/orders/{{customer_name}}",
				"custom_function_headers":    []string{"X-Api-Key: key-{{plan}}-runtime-0001"},
				"custom_function_parameters": `{"type":"object","properties":{"note":{"type":"string","description":"about {{plan}}"}}}`}}},
	}
}

func newStartEnv(t *testing.T) *startEnv { t.Helper(); return newStartEnvWith(t, nil) }

// newStartEnvWith is newStartEnv on a database tune adjusts (a clock, say).
func newStartEnvWith(t *testing.T, tune func(*bolt.Options)) *startEnv {
	t.Helper()
	s := testkit.NewServer(t, tune)
	e := &startEnv{Server: s, t: t, ws: s.Owner.WorkspaceID}
	e.agent = e.publishedAgent("Front desk")
	r := s.Do("POST", "/api/v1/numbers", s.Owner.Token, map[string]any{"phone_number": startNumber, "provider": "sip",
		"inbound_agent_id": e.agent, "outbound_agent_id": e.agent})
	testkit.Expect(t, r, 201)
	e.number = r.Data()["id"].(string)
	e.runtime = keyWithScopes(t, s, data.ScopeCallsRuntime)
	return e
}

// publishedAgent creates an agent from startAgentBody and publishes it (version 1).
func (e *startEnv) publishedAgent(name string) string {
	e.t.Helper()
	r := e.Do("POST", "/api/v1/agents", e.Owner.Token, startAgentBody(name))
	testkit.Expect(e.t, r, 201)
	id := r.Data()["id"].(string)
	testkit.Expect(e.t, e.Do("POST", "/api/v1/agents/"+id+"/publish", e.Owner.Token, nil), 204)
	return id
}

// start posts a call start with the runtime key.
func (e *startEnv) start(body map[string]any) *testkit.Response {
	e.t.Helper()
	return e.Do("POST", "/api/v1/calls/start", e.runtime, body)
}

// inbound is the body of an inbound start from caller.
func inbound(caller string, vars map[string]any) map[string]any {
	b := map[string]any{"direction": "inbound", "to_number": startNumber, "from_number": caller}
	if vars != nil {
		b["variables"] = vars
	}
	return b
}

// setLimits sets the workspace's plan limits, as the operator does.
func (e *startEnv) setLimits(limits map[string]int64) {
	e.t.Helper()
	if _, err := e.Svc.Subscriptions.SetSubscription(context.Background(), e.ws, data.SubscriptionSet{Limits: limits}); err != nil {
		e.t.Fatal(err)
	}
}

// callCount counts the workspace's calls, as the owner lists them.
func (e *startEnv) callCount() int {
	e.t.Helper()
	r := e.Do("GET", "/api/v1/calls?per_page=100", e.Owner.Token, nil)
	testkit.Expect(e.t, r, 200)
	return len(r.List())
}

// answer splits a 201's data into its call, agent and variant.
func answer(t testing.TB, r *testkit.Response) (call, agent, variant map[string]any) {
	t.Helper()
	testkit.Expect(t, r, 201)
	d := r.Data()
	return d["call"].(map[string]any), d["agent"].(map[string]any), d["variant"].(map[string]any)
}

// group returns a configuration group of an answer's agent.
func group(agent map[string]any, name string) map[string]any { return agent[name].(map[string]any) }
