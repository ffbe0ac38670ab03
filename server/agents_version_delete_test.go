package server_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// versionNumbers lists the agent's version numbers, newest first.
func (e *env) versionNumbers(token, id string) []float64 {
	e.t.Helper()
	var out []float64
	for _, v := range e.do("GET", "/api/v1/agents/"+id+"/versions", token, nil).List() {
		out = append(out, v.(map[string]any)["version_number"].(float64))
	}
	return out
}

// TestAgentVersionDelete: DELETE …/versions/{n} is 204 without a body for a version
// nothing runs on, after which reading, restoring and deleting it are 404 and a call made
// on it still names it; 409 conflict saying why for the published version and a rollout's
// variant, the version kept; 412 for an If-Match that is not its ETag; 404 for a version
// never published. A member's 403 and other workspaces' 404 are TestAgentModuleGate's and
// TestAgentUnknownOrForeignIsNotFound's (agentRoutes).
func TestAgentVersionDelete(t *testing.T) {
	e := newEnv(t)
	tok := e.Owner.Token
	id := e.createAgent(tok, map[string]any{"name": "Pruned"})["id"].(string)
	for range 4 {
		e.publish(tok, id, nil)
	}
	base := "/api/v1/agents/" + id + "/versions/"
	r := e.do("POST", "/api/v1/calls", tok, map[string]any{"agent_id": id, "agent_version": 1, "direction": "web", "status": "ended"})
	expect(t, r, 201)
	callID := r.Data()["id"].(string)

	r = e.do("DELETE", base+"1", tok, nil)
	expect(t, r, 204)
	if len(r.Body) != 0 {
		t.Errorf("204 with a body: %s", r.Body)
	}
	expect(t, e.do("GET", base+"1", tok, nil), 404)
	expect(t, e.do("POST", base+"1/restore", tok, nil), 404)
	expect(t, e.do("DELETE", base+"1", tok, nil), 404)
	expect(t, e.do("DELETE", base+"9", tok, nil), 404)
	if got := e.versionNumbers(tok, id); !slices.Equal(got, []float64{4, 3, 2}) {
		t.Errorf("versions after the delete = %v, want [4 3 2]", got)
	}
	if v := e.do("GET", "/api/v1/calls/"+callID, tok, nil).Data()["agent_version"]; v != 1.0 {
		t.Errorf("the call made on the deleted version shows agent_version %v, want 1", v)
	}

	expect(t, e.do("PUT", "/api/v1/agents/"+id+"/rollout", tok, map[string]any{"variants": []map[string]any{{"version": 4, "weight": 90}, {"version": 3, "weight": 10}}}), 200)
	for n, says := range map[int]string{4: "published version", 3: "rollout"} {
		r := e.do("DELETE", fmt.Sprint(base, n), tok, nil)
		expect(t, r, 409)
		if r.Code() != "conflict" || !strings.Contains(string(r.Body), says) {
			t.Errorf("deleting version %d: %s, want conflict saying %q", n, r.Body, says)
		}
		expect(t, e.do("GET", fmt.Sprint(base, n), tok, nil), 200)
	}

	etag := e.do("GET", base+"2", tok, nil).Header.Get("ETag")
	expect(t, e.do("DELETE", base+"2", tok, nil, "If-Match", `"not-its-etag"`), 412)
	expect(t, e.do("GET", base+"2", tok, nil), 200)
	expect(t, e.do("DELETE", base+"2", tok, nil, "If-Match", etag), 204)
}
