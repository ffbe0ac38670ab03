package server_test

import (
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
)

// versionRoute is a route whose request names a version of the agent in its path.
type versionRoute struct {
	name, method string
	field        string // the version's field path
	accepted     int    // the status of a request naming a version the agent has
	// path is the route's path for agent and the request's version; body its body (nil
	// for a GET). fault adds one fault of the request's own at faultField.
	path       func(agent string, version int, fault bool) string
	body       func(version int, fault bool) map[string]any
	faultField string
	list       string // a list under the agent that a refused request must not grow
}

// versionRoutes are every route whose request names a version of the agent (grep
// "version" in docs/openapi.json's request bodies and parameters): each is refused one way.
func versionRoutes() []versionRoute {
	agentPath := func(rest string) func(string, int, bool) string {
		return func(agent string, _ int, _ bool) string { return "/api/v1/agents/" + agent + rest }
	}
	from, to := time.Now().UTC().Add(-time.Hour).Format(time.RFC3339), time.Now().UTC().Add(time.Hour).Format(time.RFC3339)
	return []versionRoute{
		{name: "conversation", method: "POST", field: "version", accepted: 201, path: agentPath("/conversations"),
			body: func(v int, fault bool) map[string]any {
				b := map[string]any{"version": v}
				if fault {
					b["variables"] = map[string]any{"1bad": "x"}
				}
				return b
			}, faultField: "variables.1bad"},
		{name: "test run", method: "POST", field: "version", accepted: 202, path: agentPath("/test-runs"),
			body: func(v int, fault bool) map[string]any {
				b := map[string]any{"version": v}
				if fault {
					b["extra"] = 1
				}
				return b
			}, faultField: "extra", list: "/test-runs"},
		{name: "test run, an unknown test too", method: "POST", field: "version", accepted: 202, path: agentPath("/test-runs"),
			body: func(v int, fault bool) map[string]any {
				b := map[string]any{"version": v}
				if fault {
					b["test_ids"] = []string{unknownTestID}
				}
				return b
			}, faultField: "test_ids.0", list: "/test-runs"},
		{name: "analysis backfill", method: "POST", field: "agent_version", accepted: 202, path: agentPath("/analysis/backfill"),
			body: func(v int, fault bool) map[string]any {
				b := map[string]any{"from": from, "to": to, "agent_version": v}
				if fault {
					b["from"] = "yesterday"
				}
				return b
			}, faultField: "from"},
		{name: "agent knowledge query", method: "POST", field: "agent_version", accepted: 200, path: agentPath("/knowledge/query"),
			body: func(v int, fault bool) map[string]any {
				b := map[string]any{"query": "opening hours", "agent_version": v}
				if fault {
					b["query"] = " "
				}
				return b
			}, faultField: "query"},
		{name: "rollout", method: "PUT", field: "variants.0.version", accepted: 200, path: agentPath("/rollout"),
			body: func(v int, fault bool) map[string]any {
				b := map[string]any{"variants": []any{map[string]any{"version": v, "weight": 100}}}
				if fault {
					b["rollback"] = map[string]any{"metric": "vibes", "threshold": 0.5, "min_calls": 10}
				}
				return b
			}, faultField: "rollback.metric"},
		// A query's parameters are the request's fields as a body's are (conventions §4).
		{name: "analysis figures", method: "GET", field: "agent_version", accepted: 200,
			path: func(agent string, v int, fault bool) string {
				q := url.Values{"agent_id": {agent}, "field": {"outcome"}, "agent_version": {strconv.Itoa(v)}}
				if fault {
					q.Set("from", to)
					q.Set("to", from)
				}
				return "/api/v1/analytics/analysis?" + q.Encode()
			}, faultField: "to"},
	}
}

// versionsAgent creates an agent on the language model stand-in that analyzes its calls
// and has a test, and publishes it: version 1.
func versionsAgent(t *testing.T, e *convEnv, name string) string {
	t.Helper()
	agent := e.createAgent(t, map[string]any{"name": name, "analysis_config": analysisGroup(),
		"prompt_config": map[string]any{"prompt": "You greet.", "welcome_message": "Hello."}})
	testkit.Expect(t, e.Do("POST", "/api/v1/agents/"+agent+"/publish", e.tok, nil), 204)
	testkit.Expect(t, e.Do("POST", "/api/v1/agents/"+agent+"/tests", e.tok, map[string]any{"name": "Greets",
		"user": map[string]any{"script": []string{"Hi"}}, "criteria": []any{map[string]any{"type": "says", "pattern": "Hello"}}}), 201)
	return agent
}

// Conventions §1, §2: a version a request names that the agent does not have is the
// request's fault, a 422 naming the field, as a rollout's always was; reported with the
// request's other faults; nothing stored. A conversation, a test run, a backfill and
// analysis figures answered 404 (not_found) for it, which told nothing the caller could
// not list (GET …/versions) but read as "no such agent". A version the agent has is taken.
func TestVersionRefsAreFieldFaults(t *testing.T) {
	e := newConvEnv(t, nil)
	agent := versionsAgent(t, e, "Front desk")
	for _, c := range versionRoutes() {
		t.Run(c.name, func(t *testing.T) {
			do := func(version int, fault bool) *testkit.Response {
				var body any
				if c.body != nil {
					body = c.body(version, fault)
				}
				return e.Do(c.method, c.path(agent, version, fault), e.tok, body)
			}
			count := func() int {
				if c.list == "" {
					return 0
				}
				return len(e.Do("GET", "/api/v1/agents/"+agent+c.list, e.tok, nil).List())
			}
			before := count()
			r := do(9, false)
			testkit.ExpectFields(t, r, c.field)
			want := "The " + c.field + " field must be a published version of the agent; version 9 is none."
			if msgs, _ := r.FieldErrors()[c.field].([]any); len(msgs) != 1 || msgs[0] != want {
				t.Errorf("%s: %v, want %q", c.field, msgs, want)
			}
			testkit.ExpectFields(t, do(9, true), c.faultField, c.field)
			if n := count(); n != before {
				t.Errorf("%s holds %d records after refused requests, %d before", c.list, n, before)
			}
			testkit.Expect(t, do(1, false), c.accepted)
		})
	}
}

// The version's fault is told only to a caller that may see the agent: to a developer
// limited to another agent, an agent outside its agent_ids is not found (a path id, or
// the figures' agent_id), whatever version the request names, exactly as an agent that
// does not exist.
func TestVersionRefsRevealNothingOutsideTheCaller(t *testing.T) {
	e := newConvEnv(t, nil)
	agent := versionsAgent(t, e, "Front desk")
	mine := versionsAgent(t, e, "Back office")
	dev := e.Member("limited@example.com", e.Owner.WorkspaceID, "developer", nil, []string{mine})
	for _, c := range versionRoutes() {
		t.Run(c.name, func(t *testing.T) {
			var body any
			if c.body != nil {
				body = c.body(9, false)
			}
			hidden := e.Do(c.method, c.path(agent, 9, false), dev.Token, body)
			testkit.Expect(t, hidden, 404)
			unknown := e.Do(c.method, c.path(unknownAgentID, 9, false), dev.Token, body)
			testkit.Expect(t, unknown, 404)
			if hidden.Code() != data.ENOTFOUND || string(hidden.Body) != string(unknown.Body) {
				t.Errorf("an agent outside the caller's agent_ids reads otherwise than an unknown one:\n%s\n%s", hidden.Body, unknown.Body)
			}
			// The caller's own agent: the version is the field's fault.
			testkit.ExpectFields(t, e.Do(c.method, c.path(mine, 9, false), dev.Token, body), c.field)
		})
	}
}
