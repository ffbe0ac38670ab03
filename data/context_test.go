package data

import (
	"context"
	"testing"
)

func TestAllowsRolesAndModules(t *testing.T) {
	all := Modules
	reqs := map[string]Requirement{
		"self":          Self,
		"admin only":    Admin,
		"any member":    Member(""),
		"admin role":    Member(RoleAdmin),
		"owner role":    Member(RoleOwner),
		"read agents":   Read(ModuleAgents),
		"write agents":  Write(ModuleAgents),
		"read calls":    Read(ModuleCallHistory),
		"create agent":  {Module: ModuleAgents, MinRole: RoleDeveloper, Workspace: true, AllAgents: true},
		"write no role": {Module: ModuleKnowledgeBase, Workspace: true},
	}
	cases := []struct {
		name string
		p    Principal
		ok   map[string]bool
	}{
		{"owner", Principal{Role: RoleOwner, Modules: EffectiveModules(RoleOwner, nil)}, map[string]bool{
			"self": true, "any member": true, "admin role": true, "owner role": true, "read agents": true, "write agents": true,
			"read calls": true, "create agent": true, "write no role": true}},
		{"admin", Principal{Role: RoleAdmin, Modules: EffectiveModules(RoleAdmin, []string{ModuleAnalytics})}, map[string]bool{
			"self": true, "any member": true, "admin role": true, "read agents": true, "write agents": true,
			"read calls": true, "create agent": true, "write no role": true}},
		{"developer with all modules", Principal{Role: RoleDeveloper, Modules: all}, map[string]bool{
			"self": true, "any member": true, "read agents": true, "write agents": true, "read calls": true,
			"create agent": true, "write no role": true}},
		{"developer without agents", Principal{Role: RoleDeveloper, Modules: []string{ModuleCallHistory}}, map[string]bool{
			"self": true, "any member": true, "read calls": true}},
		{"developer tied to agents", Principal{Role: RoleDeveloper, Modules: all, AgentIDs: []string{"agt_1"}}, map[string]bool{
			"self": true, "any member": true, "read agents": true, "write agents": true, "read calls": true, "write no role": true}},
		{"member", Principal{Role: RoleMember, Modules: all}, map[string]bool{
			"self": true, "any member": true, "read agents": true, "read calls": true, "write no role": true}},
		{"member without modules", Principal{Role: RoleMember, Modules: []string{}}, map[string]bool{
			"self": true, "any member": true}},
		// Membership is established before Allows (non-members are 404 in server.authorize),
		// so a principal without a role passes the role-less requirement.
		{"instance admin, not a member", Principal{IsAdmin: true}, map[string]bool{"self": true, "admin only": true, "any member": true}},
	}
	for _, c := range cases {
		for name, r := range reqs {
			err := c.p.Allows(r)
			if (err == nil) != c.ok[name] {
				t.Errorf("%s / %s: %v", c.name, name, err)
			}
			if err != nil && ErrorCode(err) != EFORBIDDEN {
				t.Errorf("%s / %s: code %s", c.name, name, ErrorCode(err))
			}
		}
	}
}

func TestRoleOrderAndAgents(t *testing.T) {
	order := []string{RoleMember, RoleDeveloper, RoleAdmin, RoleOwner}
	for i, a := range order {
		for j, b := range order {
			if RoleAtLeast(a, b) != (i >= j) {
				t.Errorf("RoleAtLeast(%s, %s)", a, b)
			}
		}
		if RoleAtLeast("", a) || RoleAtLeast("root", a) {
			t.Errorf("unknown role passes %s", a)
		}
	}
	if m := EffectiveModules(RoleMember, []string{ModuleAgents}); len(m) != 1 {
		t.Errorf("member modules %v", m)
	}
	p := &Principal{AgentIDs: []string{"agt_a"}}
	if !p.CanSeeAgent("agt_a") || p.CanSeeAgent("agt_b") {
		t.Error("CanSeeAgent with a list")
	}
	if !(&Principal{}).CanSeeAgent("agt_b") {
		t.Error("empty agent_ids means all agents")
	}
}

func TestContextValues(t *testing.T) {
	ctx := context.Background()
	if PrincipalFrom(ctx) != nil || IfMatch(ctx) != "" {
		t.Error("empty context")
	}
	p := &Principal{UserID: "usr_1"}
	ctx = WithIfMatch(WithPrincipal(ctx, p), `"abc"`)
	if PrincipalFrom(ctx) != p || IfMatch(ctx) != `"abc"` {
		t.Error("round trip")
	}
}

// A principal acting in another workspace takes that membership's rights and revision:
// its writes re-check the membership they act by, not the token's own.
func TestActInCarriesThatMembershipsRevision(t *testing.T) {
	p := &Principal{UserID: "usr_1", WorkspaceID: "ws_own", Role: RoleOwner, Modules: Modules,
		KeyAgentIDs: []string{"agt_1"}, Access: AccessRevisions{Key: 7, User: 8, Member: 9}}
	p.ActIn("ws_other", &Membership{Role: RoleDeveloper, Modules: []string{ModuleAgents}, AgentIDs: []string{"agt_2"}, Revision: 42})
	want := AccessRevisions{Key: 7, User: 8, Member: 42}
	if p.WorkspaceID != "ws_other" || p.Role != RoleDeveloper || p.Access != want {
		t.Errorf("principal = %+v; want ws_other as developer with access %+v", p, want)
	}
	if len(p.AgentIDs) != 1 || p.AgentIDs[0] != NoAgent {
		t.Errorf("agent_ids = %v; the key's own agents elsewhere leave none", p.AgentIDs)
	}
}
