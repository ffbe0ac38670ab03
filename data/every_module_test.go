package data

import (
	"strings"
	"testing"
)

// EveryModule refuses a caller who may not read some module, naming each one missing:
// modules its membership lacks, else read scopes its key lacks (a write scope grants its
// read scope); NeedAuditChain asks it on top of the audit log's requirement.
func TestAllowsEveryModule(t *testing.T) {
	every := Requirement{Workspace: true, EveryModule: true, AnyKey: true}
	for _, c := range []struct {
		name string
		p    Principal
		r    Requirement
		says string // "" when allowed
	}{
		{"member of every module", Principal{Role: RoleMember, Modules: Modules}, every, ""},
		{"member without two modules", Principal{Role: RoleMember, Modules: []string{ModuleAgents, ModuleKnowledgeBase, ModuleCallHistory}}, every,
			"the modules phone_numbers, analytics"},
		{"member without one module", Principal{Role: RoleMember, Modules: []string{ModuleAgents, ModuleKnowledgeBase, ModulePhoneNumbers, ModuleCallHistory}}, every,
			"the analytics module"},
		{"key of every read scope", Principal{Role: RoleOwner, Modules: Modules, Scopes: []string{"agents:read", "knowledge_base:read", "phone_numbers:read", "call_history:read", "analytics:read"}}, every, ""},
		{"key of every write scope", Principal{Role: RoleOwner, Modules: Modules, Scopes: []string{"agents:write", "knowledge_base:write", "phone_numbers:write", "call_history:write", "analytics:write"}}, every, ""},
		{"key without two read scopes", Principal{Role: RoleOwner, Modules: Modules, Scopes: []string{"agents:read", "knowledge_base:read", "phone_numbers:read"}}, every,
			"lacks the scopes call_history:read, analytics:read"},
		{"audit chain, owner", Principal{Role: RoleOwner, Modules: Modules}, NeedAuditChain(), ""},
		{"audit chain, key of audit:read alone", Principal{Role: RoleOwner, Modules: Modules, Scopes: []string{ScopeAuditRead}}, NeedAuditChain(),
			"lacks the scopes agents:read, knowledge_base:read, phone_numbers:read, call_history:read, analytics:read"},
		{"audit chain, key without audit:read", Principal{Role: RoleOwner, Modules: Modules, Scopes: []string{"agents:read"}}, NeedAuditChain(),
			"lacks the audit:read scope"},
		{"audit chain, owner of one agent", Principal{Role: RoleOwner, Modules: Modules, AgentIDs: []string{"agt_1"}}, NeedAuditChain(),
			"limited to some agents"},
		{"audit chain, developer", Principal{Role: RoleDeveloper, Modules: Modules}, NeedAuditChain(), "needs admin"},
	} {
		err := c.p.Allows(c.r)
		switch {
		case c.says == "" && err != nil:
			t.Errorf("%s: %v; want allowed", c.name, err)
		case c.says != "" && (ErrorCode(err) != EFORBIDDEN || !strings.Contains(err.Error(), c.says)):
			t.Errorf("%s: %v; want forbidden saying %q", c.name, err, c.says)
		}
	}
}
