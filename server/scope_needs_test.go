package server_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/cli"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
)

// TestScopeNeedsFollowTheRoutes: data.ScopeNeeds, by which the API refuses a key's scope
// its creator could use nothing of and the console's key form offers scopes, says what
// the route table says: for every role, set of modules and agent limit, a user meets one
// of a scope's needs exactly when one workspace operation naming the scope (its
// x-voiceapi-requires, from the route table) allows them. analytics:write, which no
// operation names, needs the module's write; the catalog, outside any workspace, is left
// aside (agents:read needs the agents module).
func TestScopeNeedsFollowTheRoutes(t *testing.T) {
	s := testkit.NewServer(t, nil)
	paths, spec := documentedPaths(t, s)
	byScope := map[string][]data.Requirement{}
	for _, path := range paths {
		for _, raw := range spec[path] {
			var op struct {
				Requires *requires `json:"x-voiceapi-requires"`
			}
			if json.Unmarshal(raw, &op) != nil || op.Requires == nil || !op.Requires.WorkspaceMember {
				continue
			}
			q := op.Requires
			need := data.Requirement{Module: q.Module, MinRole: q.MinRole, Workspace: true, AllAgents: q.AllAgents, EveryModule: q.EveryModule, AnyKey: true}
			if q.Scope != "" {
				byScope[q.Scope] = append(byScope[q.Scope], need)
			}
			if q.Runtime {
				byScope[data.ScopeCallsRuntime] = append(byScope[data.ScopeCallsRuntime], need)
			}
		}
	}
	checked := 0
	for _, role := range data.Roles {
		for set := range 1 << len(data.Modules) {
			var mods []string
			for i, m := range data.Modules {
				if set&(1<<i) != 0 {
					mods = append(mods, m)
				}
			}
			for _, agents := range [][]string{nil, {"agt_01JD6000000000000000000000"}} {
				p := &data.Principal{WorkspaceID: "ws_x", Role: role, Modules: data.EffectiveModules(role, mods), AgentIDs: agents}
				for _, sc := range data.Scopes {
					routes, ok := byScope[sc]
					if !ok {
						if sc != data.WriteScope(data.ModuleAnalytics) {
							t.Fatalf("no workspace operation names %s", sc)
						}
						routes = []data.Requirement{data.Write(data.ModuleAnalytics).ForAnyKey()}
					}
					want := slices.ContainsFunc(routes, func(r data.Requirement) bool { return p.Allows(r) == nil })
					if got := p.GivesScope(sc) == nil; got != want {
						t.Errorf("%s with modules %v, agents %v: gives %s %v, the routes say %v", role, mods, agents, sc, got, want)
					}
					checked++
				}
			}
		}
	}
	if checked < 1000 {
		t.Fatalf("only %d cases checked", checked)
	}
}

// TestKeyScopesWithinTheirCreator: a key may hold only scopes its creator could use (data.
// GivesScope): a member asking for webhooks:write or agents:write, a developer without
// the knowledge_base module asking for knowledge_base:read, or a developer limited to
// some agents asking for webhooks:read is refused 403 naming the scope, and no key is
// made; the scopes their role, modules and agents allow are given. The CLI's keys
// follow the same rule. Both engines.
func TestKeyScopesWithinTheirCreator(t *testing.T) {
	e := newEnv(t)
	ws, owner := e.Owner.WorkspaceID, e.Owner.Token
	r := e.do("POST", "/api/v1/agents", owner, map[string]any{"name": "A"})
	expect(t, r, 201)
	a := r.Data()["id"].(string)
	member := e.member(ws, "member@example.com", data.RoleMember, nil, nil)
	dev := e.member(ws, "dev@example.com", data.RoleDeveloper, []string{data.ModuleAgents, data.ModuleCallHistory}, nil)
	limited := e.member(ws, "limited@example.com", data.RoleDeveloper, nil, []string{a})
	keys := func(tok string) int { return len(e.do("GET", "/api/v1/api-keys", tok, nil).List()) }
	for _, c := range []struct {
		name, token string
		scopes      []string
		refused     string
	}{
		{"member", member, []string{"agents:read", "webhooks:write"}, "webhooks:write"},
		{"member", member, []string{"agents:write"}, "agents:write"},
		{"member", member, []string{"analytics:write"}, "analytics:write"},
		{"member", member, []string{"agents:read", "call_history:read", "audit:read", "workspace:admin", "conversations:write", "calls:runtime"}, ""},
		{"developer", dev, []string{"agents:write", "knowledge_base:read"}, "knowledge_base:read"},
		{"developer", dev, []string{"agents:write", "call_history:write", "calls:runtime"}, ""},
		{"limited developer", limited, []string{"webhooks:read"}, "webhooks:read"},
		{"limited developer", limited, []string{"agents:write", "phone_numbers:write"}, ""},
		{"owner", owner, []string{"webhooks:write", "analytics:write", "workspace:admin"}, ""},
	} {
		before := keys(c.token)
		res := e.do("POST", "/api/v1/api-keys", c.token, map[string]any{"name": "k", "scopes": c.scopes})
		if c.refused == "" {
			expect(t, res, 201)
			continue
		}
		expect(t, res, 403)
		if msg, _ := res.JSON()["message"].(string); !strings.Contains(msg, c.refused) {
			t.Errorf("the %s asking for %v: the refusal does not name %s: %s", c.name, c.scopes, c.refused, msg)
		}
		if after := keys(c.token); after != before {
			t.Errorf("the %s's refused key was made: %d keys, were %d", c.name, after, before)
		}
	}
	// voiceapi key create: no calling token, the membership alone.
	u := e.newUser("cli@example.com", false)
	expect(t, e.do("POST", "/api/v1/workspaces/"+ws+"/users", owner, map[string]any{"id": u.ID, "role": data.RoleMember}), 201)
	svc := cli.NewServices(e.DB)
	if _, _, err := svc.Auth.CreateAPIKeyFor(t.Context(), u.ID, ws, data.APIKeyCreate{Name: "cli", Scopes: []string{"webhooks:write"}}); data.ErrorCode(err) != data.EFORBIDDEN || !strings.Contains(data.ErrorMessage(err), "webhooks:write") {
		t.Errorf("the CLI's key with webhooks:write for a member: %v", err)
	}
	if _, _, err := svc.Auth.CreateAPIKeyFor(t.Context(), u.ID, ws, data.APIKeyCreate{Name: "cli", Scopes: []string{"agents:read"}}); err != nil {
		t.Errorf("the CLI's key with agents:read for a member: %v", err)
	}
}
