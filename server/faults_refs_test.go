package server_test

import (
	"testing"

	"github.com/voiceapi/voiceapi/internal/testkit"
)

// Well formed ids that name nothing.
const (
	unknownNumberID = "num_01JD6ZZZZZZZZZZZZZZZZZZZZZ"
	unknownUserID   = "usr_01JD6ZZZZZZZZZZZZZZZZZZZZZ"
	unknownTestID   = "tst_01JD6ZZZZZZZZZZZZZZZZZZZZZ"
)

// Conventions §2: "Every failing field of the request is reported at once, never only the
// first." Each route whose body names other records (agents, numbers, knowledge bases,
// users, tests, versions) is sent one fault of the body's shape (a rule, or a member the
// decoder refuses) and one reference to nothing: one 422 names both, and nothing is
// stored. Numbers, calls, API keys, workspace users, rollouts, test runs and an agent's
// knowledge query told only the shape fault (their references were read once the rest
// held), and a campaign with a member the decoder refused did too. A version named in a
// conversation's, a test run's, a backfill's body is TestVersionRefsAreFieldFaults'. Not
// here: a call start's number, which its document answers 404; the body's faults still
// come first there.
func TestFaultsReferencesReportedWithShapeFaults(t *testing.T) {
	e := newStartEnv(t)
	tok, ws := e.Owner.Token, e.Owner.WorkspaceID
	member := e.NewUser("faults@example.com", false)
	testkit.Expect(t, e.Do("POST", "/api/v1/workspaces/"+ws+"/users", tok, map[string]any{"id": member.ID, "role": "developer"}), 201)
	campaign := (&campaignEnv{startEnv: e}).campaignBody([]string{"+14155550101"},
		map[string]any{"agent_id": unknownAgentID, "extra": 1})
	agentPath := "/api/v1/agents/" + e.agent
	r := e.Do("POST", agentPath+"/tests", tok, map[string]any{"name": "Greets", "user": map[string]any{"script": []string{"Hi"}},
		"criteria": []any{map[string]any{"type": "says", "pattern": "Hello"}}})
	testkit.Expect(t, r, 201)
	agentTest := agentPath + "/tests/" + r.Data()["id"].(string)

	cases := []struct {
		name, method, path string
		body               map[string]any
		fields             []string
		list               string // a list that must not grow, for a create
	}{
		{"number create", "POST", "/api/v1/numbers",
			map[string]any{"phone_number": "12", "provider": "twilio", "inbound_agent_id": unknownAgentID},
			[]string{"phone_number", "inbound_agent_id"}, "/api/v1/numbers"},
		// Ids of no id's shape are the body's own faults; storage need not look them up
		// (PostgreSQL's text refuses NUL), and the answer is the 422, never a 500.
		{"number create, an id of no id's shape", "POST", "/api/v1/numbers",
			map[string]any{"phone_number": "12", "provider": "twilio", "inbound_agent_id": "agt_\u0000", "outbound_agent_id": unknownAgentID},
			[]string{"phone_number", "inbound_agent_id", "outbound_agent_id"}, "/api/v1/numbers"},
		{"api key, ids of no id's shape", "POST", "/api/v1/api-keys",
			map[string]any{"name": "", "agent_ids": []string{"\u0000", unknownAgentID}},
			[]string{"name", "agent_ids.0", "agent_ids.1"}, "/api/v1/api-keys"},
		{"number update", "PUT", "/api/v1/numbers/" + e.number,
			map[string]any{"provider": "carrier-pigeon", "outbound_agent_id": unknownAgentID},
			[]string{"provider", "outbound_agent_id"}, ""},
		{"call register", "POST", "/api/v1/calls",
			map[string]any{"agent_id": unknownAgentID, "number_id": unknownNumberID, "direction": "sideways"},
			[]string{"direction", "agent_id", "number_id"}, "/api/v1/calls"},
		{"call register, a member the decoder refuses", "POST", "/api/v1/calls",
			map[string]any{"agent_id": unknownAgentID, "direction": "web", "extra": 1},
			[]string{"extra", "agent_id"}, "/api/v1/calls"},
		{"api key", "POST", "/api/v1/api-keys",
			map[string]any{"name": "", "agent_ids": []string{unknownAgentID}},
			[]string{"name", "agent_ids.0"}, "/api/v1/api-keys"},
		{"workspace user add", "POST", "/api/v1/workspaces/" + ws + "/users",
			map[string]any{"id": unknownUserID, "role": "king", "agent_ids": []string{unknownAgentID}},
			[]string{"role", "id", "agent_ids.0"}, "/api/v1/workspaces/" + ws + "/users"},
		{"workspace user update", "PUT", "/api/v1/workspaces/" + ws + "/users/" + member.ID,
			map[string]any{"modules": []string{"gardening"}, "agent_ids": []string{unknownAgentID}},
			[]string{"modules.0", "agent_ids.0"}, ""},
		{"rollout", "PUT", agentPath + "/rollout",
			map[string]any{"variants": []any{map[string]any{"version": 1, "weight": 50}, map[string]any{"version": 9, "weight": 50}},
				"rollback": map[string]any{"metric": "vibes", "threshold": 0.5, "min_calls": 10}},
			[]string{"rollback.metric", "variants.1.version"}, ""},
		{"test run", "POST", agentPath + "/test-runs",
			map[string]any{"test_ids": []string{unknownTestID}, "extra": 1},
			[]string{"extra", "test_ids.0"}, agentPath + "/test-runs"},
		{"agent knowledge query", "POST", agentPath + "/knowledge/query",
			map[string]any{"query": " ", "agent_version": 9},
			[]string{"query", "agent_version"}, ""},
		{"campaign, a member the decoder refuses", "POST", "/api/v1/campaigns",
			campaign, []string{"extra", "agent_id"}, "/api/v1/campaigns"},
		// Already right: the knowledge bases, and a test's mocked tools, were checked with
		// the other rules.
		{"agent test", "POST", agentPath + "/tests",
			map[string]any{"name": "", "user": map[string]any{"script": []string{"Hi"}},
				"criteria": []any{map[string]any{"type": "says", "pattern": "Hello"}},
				"mocks":    map[string]any{"nosuch": map[string]any{"status": 200, "body": map[string]any{}}}},
			[]string{"name", "mocks.nosuch"}, agentPath + "/tests"},
		{"agent test update", "PUT", agentTest,
			map[string]any{"name": "", "mocks": map[string]any{"nosuch": map[string]any{"status": 200, "body": map[string]any{}}}},
			[]string{"name", "mocks.nosuch"}, ""},
		{"agent create", "POST", "/api/v1/agents",
			map[string]any{"name": "", "llm_config": map[string]any{"knowledge_base_ids": []string{unknownKBID}}},
			[]string{"name", "llm_config.knowledge_base_ids.0"}, "/api/v1/agents"},
		{"agent update", "PUT", agentPath,
			map[string]any{"name": "", "llm_config": map[string]any{"knowledge_base_ids": []string{unknownKBID}}},
			[]string{"name", "llm_config.knowledge_base_ids.0"}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := 0
			if c.list != "" {
				before = len(e.Do("GET", c.list, tok, nil).List())
			}
			testkit.ExpectFields(t, e.Do(c.method, c.path, tok, c.body), c.fields...)
			if c.list != "" {
				if n := len(e.Do("GET", c.list, tok, nil).List()); n != before {
					t.Errorf("%s holds %d records after a refused create, %d before", c.list, n, before)
				}
			}
		})
	}
}

// Reporting references with the body's other faults tells a caller nothing about records
// it may not see (conventions §2, §6, §20): to a developer limited to one agent, another
// agent of the workspace reads as an unknown one, on a number (its binding's fault) and on
// an API key (whose agents beyond the caller's are never looked up: the shape fault alone,
// for a member limited to one agent and for an owner's key limited to one).
func TestFaultsReferencesRevealNothingOutsideTheCaller(t *testing.T) {
	e := newStartEnv(t)
	other := e.publishedAgent("Back office")
	dev := e.Member("limited@example.com", e.Owner.WorkspaceID, "developer", nil, []string{e.agent})
	r := e.Do("POST", "/api/v1/api-keys", e.Owner.Token, map[string]any{"name": "narrow", "agent_ids": []string{e.agent}})
	testkit.Expect(t, r, 201)
	narrow := r.JSON()["token"].(string)
	for _, c := range []struct {
		name, path, token string
		body              func(agent string) map[string]any
		fields            []string
	}{
		{"number", "/api/v1/numbers", dev.Token, func(agent string) map[string]any {
			return map[string]any{"phone_number": "12", "provider": "twilio", "inbound_agent_id": agent}
		}, []string{"phone_number", "inbound_agent_id"}},
		{"api key", "/api/v1/api-keys", dev.Token, func(agent string) map[string]any {
			return map[string]any{"name": "", "agent_ids": []string{agent}}
		}, []string{"name"}},
		{"api key from a key limited to one agent", "/api/v1/api-keys", narrow, func(agent string) map[string]any {
			return map[string]any{"name": "", "agent_ids": []string{agent}}
		}, []string{"name"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			hidden := e.Do("POST", c.path, c.token, c.body(other))
			testkit.ExpectFields(t, hidden, c.fields...)
			unknown := e.Do("POST", c.path, c.token, c.body(unknownAgentID))
			if string(hidden.Body) != string(unknown.Body) {
				t.Errorf("an agent outside the caller's agent_ids reads otherwise than an unknown one:\n%s\n%s", hidden.Body, unknown.Body)
			}
		})
	}
}
