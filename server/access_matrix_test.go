package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/service"
)

// requires is an operation's x-voiceapi-requires in the OpenAPI document.
type requires struct {
	WorkspaceMember bool   `json:"workspace_member"`
	InstanceAdmin   bool   `json:"instance_admin"`
	AllAgents       bool   `json:"all_agents"`
	EveryModule     bool   `json:"every_module"`
	AnyKey          bool   `json:"any_key"`
	Runtime         bool   `json:"calls_runtime"`
	MinRole         string `json:"min_role"`
	Module          string `json:"module"`
	Scope           string `json:"scope"`
}

// caller is one row of the matrix: who calls, and what it holds.
type caller struct {
	name     string
	admin    bool // instance administrator
	role     string
	modules  []string
	agentIDs []string
	scopes   []string
	token    func() string // a fresh token, so a route that revokes its caller harms no other row
}

// allows is the rule the matrix checks every route against, stated once from the
// document's requirement: instance admin, scope (or the runtime preset), role, module,
// agent restriction.
func (c caller) allows(r requires) bool {
	if r.InstanceAdmin && !c.admin {
		return false
	}
	if c.scopes != nil && !r.AnyKey {
		ok := r.Scope != "" && (slices.Contains(c.scopes, r.Scope) || slices.Contains(c.scopes, writeOf(r.Scope)))
		if !ok && !(r.Runtime && slices.Contains(c.scopes, data.ScopeCallsRuntime)) {
			return false
		}
	}
	if !r.WorkspaceMember {
		return true
	}
	if r.MinRole != "" && !data.RoleAtLeast(c.role, r.MinRole) {
		return false
	}
	if r.Module != "" && !slices.Contains(data.EffectiveModules(c.role, c.modules), r.Module) {
		return false
	}
	if r.EveryModule && !c.readsEveryModule() {
		return false
	}
	return !(r.AllAgents && len(c.agentIDs) > 0)
}

// readsEveryModule: the caller holds every module and, on a key with scopes, each one's
// read (or write) scope.
func (c caller) readsEveryModule() bool {
	for _, m := range data.Modules {
		if !slices.Contains(data.EffectiveModules(c.role, c.modules), m) {
			return false
		}
		if c.scopes != nil && !slices.Contains(c.scopes, data.ReadScope(m)) && !slices.Contains(c.scopes, data.WriteScope(m)) {
			return false
		}
	}
	return true
}

func writeOf(scope string) string {
	if m := regexp.MustCompile(`^(.*):read$`).FindStringSubmatch(scope); m != nil {
		return m[1] + ":write"
	}
	return ""
}

// TestAccessMatrix holds docs/api.md's access tables to the requirement each operation of
// the OpenAPI document states (checkAccessDocs), then calls every operation as callers of
// every role, with and without the module, limited to some agents or not, and with keys
// of every scope, and checks each answer against that requirement: 403 where the rule
// refuses, anything but 401 and 403 where it allows (the handler may then say 404 or 422
// for the placeholder ids and empty bodies).
func TestAccessMatrix(t *testing.T) {
	s := testkit.NewServer(t, nil)
	ws := s.Owner.WorkspaceID
	agent := s.Do("POST", "/api/v1/agents", s.Owner.Token, map[string]any{"name": "A"}).Data()["id"].(string)
	callers := matrixCallers(t, s, agent)
	paths, spec := documentedPaths(t, s)
	var ops []operation
	for _, path := range paths {
		for method, raw := range spec[path] {
			var op struct {
				Requires *requires `json:"x-voiceapi-requires"`
			}
			if json.Unmarshal(raw, &op) == nil && op.Requires != nil {
				ops = append(ops, operation{methodName(method), strings.TrimPrefix(path, "/api/v1"), *op.Requires})
			}
		}
	}
	checkAccessDocs(t, ops)
	if testing.Short() {
		t.Skip("calls every route dozens of times")
	}
	checked := 0
	for _, path := range paths {
		for method, raw := range spec[path] {
			checked += checkOperationAccess(t, s, ws, path, method, raw, callers)
		}
	}
	if checked < 100 {
		t.Fatalf("checked only %d calls: the document lists too few operations", checked)
	}
}

// matrixCallers makes the callers of the owner's workspace: a member of each role, a
// developer limited to analytics, one limited to agent, the owner, and the owner's keys
// narrowed to agent and to each scope.
func matrixCallers(t *testing.T, s *testkit.Server, agent string) []caller {
	t.Helper()
	ws := s.Owner.WorkspaceID
	var callers []caller
	member := func(name, role string, modules, agentIDs []string) {
		a := s.Member(name+"@example.com", ws, role, modules, agentIDs)
		if modules == nil {
			modules = data.Modules // what a member is given when none are named
		}
		callers = append(callers, caller{name: name, role: role, modules: modules, agentIDs: agentIDs,
			token: func() string { return s.TokenIn(a, ws) }})
	}
	for _, role := range []string{data.RoleAdmin, data.RoleDeveloper, data.RoleMember} {
		member(role, role, nil, nil)
	}
	member("developer-analytics-only", data.RoleDeveloper, []string{data.ModuleAnalytics}, nil)
	member("developer-one-agent", data.RoleDeveloper, nil, []string{agent})
	callers = append(callers, caller{name: "owner", admin: true, role: data.RoleOwner, token: func() string { return s.TokenIn(s.Owner, ws) }})
	// An owner's key narrowed by agent_ids: its user is never limited, its token is.
	callers = append(callers, caller{name: "owner-key-one-agent", admin: true, role: data.RoleOwner, agentIDs: []string{agent},
		token: func() string { return keyWithAgents(t, s, agent) }})
	for _, scope := range data.Scopes {
		callers = append(callers, caller{name: "owner-key-" + scope, admin: true, role: data.RoleOwner, scopes: []string{scope},
			token: func() string { return keyWithScopes(t, s, scope) }})
	}
	return callers
}

// documentedPaths reads the served OpenAPI document: its paths, sorted, and each path's
// operations by method.
func documentedPaths(t *testing.T, s *testkit.Server) ([]string, map[string]map[string]json.RawMessage) {
	t.Helper()
	doc := s.Do("GET", "/api/v1/openapi.json", "", nil)
	var spec struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(doc.Body, &spec); err != nil {
		t.Fatal(err)
	}
	paths := make([]string, 0, len(spec.Paths))
	for p := range spec.Paths {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	return paths, spec.Paths
}

// checkOperationAccess calls the documented operation (method, path) as every caller:
// refused with 403 exactly when its requirement does not allow the caller. It returns
// how many calls it checked (none for a public operation).
func checkOperationAccess(t *testing.T, s *testkit.Server, ws, path, method string, raw json.RawMessage, callers []caller) int {
	t.Helper()
	var op struct {
		Requires  *requires `json:"x-voiceapi-requires"`
		Responses map[string]struct {
			Content map[string]any `json:"content"`
		} `json:"responses"`
	}
	if json.Unmarshal(raw, &op) != nil || op.Requires == nil {
		return 0 // public, or not an operation
	}
	url := pathParam.ReplaceAllStringFunc(path, func(p string) string {
		if p == "{workspace_id}" {
			return ws
		}
		return "0"
	})
	if _, stream := op.Responses["200"].Content["text/event-stream"]; stream {
		// An allowed caller would get a stream that never ends: a placeholder
		// position makes the handler answer 422 once authorization has passed.
		url += "?last_event_id=0"
	}
	for _, c := range callers {
		want := c.allows(*op.Requires)
		token := c.token()
		r := s.Do(methodName(method), url, token, nil)
		revokeToken(t, s, token)
		switch {
		case !want && r.Status != 403:
			t.Errorf("%s %s as %s: %d, want 403 (%+v); body %s", methodName(method), path, c.name, r.Status, *op.Requires, r.Body)
		case want && (r.Status == 403 || r.Status == 401):
			t.Errorf("%s %s as %s: %d, want it allowed (%+v); body %s", methodName(method), path, c.name, r.Status, *op.Requires, r.Body)
		}
	}
	return len(callers)
}

// revokeToken deletes a caller's fresh token once used, so that the keys made for the
// matrix stay under the bound on a user's live API keys (validate.MaxLiveAPIKeys).
func revokeToken(t *testing.T, s *testkit.Server, token string) {
	t.Helper()
	id, _, _ := strings.Cut(token, "|")
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil {
		t.Fatalf("token %q: %v", id, err)
	}
	if err := s.Store.Update(context.Background(), func(tx service.Tx) error { return tx.DeleteAPIKey(n) }); err != nil {
		t.Fatal(err)
	}
}

func methodName(m string) string {
	return map[string]string{"get": "GET", "post": "POST", "put": "PUT", "delete": "DELETE", "patch": "PATCH"}[m]
}

func keyWithAgents(t *testing.T, s *testkit.Server, agentIDs ...string) string {
	t.Helper()
	r := s.Do("POST", "/api/v1/api-keys", s.Owner.Token, map[string]any{"name": "agents", "agent_ids": agentIDs})
	testkit.Expect(t, r, 201)
	return r.JSON()["token"].(string)
}

func keyWithScopes(t *testing.T, s *testkit.Server, scopes ...string) string {
	t.Helper()
	r := s.Do("POST", "/api/v1/api-keys", s.Owner.Token, map[string]any{"name": fmt.Sprint(scopes), "scopes": scopes})
	testkit.Expect(t, r, 201)
	return r.JSON()["token"].(string)
}
