package data

import (
	"slices"
	"strings"
)

// API key scopes: a key created with scopes holds only what they name, within its user's
// role, modules and agent_ids at the time of each request.
const (
	ScopeWebhooksRead   = "webhooks:read"
	ScopeWebhooksWrite  = "webhooks:write"
	ScopeAuditRead      = "audit:read"
	ScopeWorkspaceAdmin = "workspace:admin"
	// ScopeCallsRuntime is what a voice runtime needs: register and update calls, read
	// agents and numbers, query knowledge.
	ScopeCallsRuntime = "calls:runtime"
	// ScopeConversationsWrite lets a key talk to agents (conventions §21); it is no part
	// of calls:runtime.
	ScopeConversationsWrite = "conversations:write"
)

// ReadScope and WriteScope name a module's scopes, e.g. agents:read.
func ReadScope(module string) string  { return module + ":read" }
func WriteScope(module string) string { return module + ":write" }

// Scopes lists every scope a key may be given, in the order documents show them.
var Scopes = func() []string {
	var out []string
	for _, m := range Modules {
		out = append(out, ReadScope(m), WriteScope(m))
	}
	return append(out, ScopeWebhooksRead, ScopeWebhooksWrite, ScopeAuditRead, ScopeWorkspaceAdmin, ScopeCallsRuntime, ScopeConversationsWrite)
}()

// ScopeNeeds are what the workspace operations a scope names need of a key's user, the
// scope aside: the user who meets one of them may do something with a key holding the
// scope. They are the route table's requirements, weakest first (server
// TestScopeNeedsFollowTheRoutes checks them against it): a module's read or write; the
// webhooks' admin who sees every agent; any member for audit:read (the event stream, each
// event as the user reads it) and workspace:admin (the member list); calls:runtime's
// reads and its calls' registration; conversations with the agents module. A module's
// write scope needs its write (analytics, with no write operation, too): it grants its
// reads, but no more than the read scope to a user who may not write. Nil for an unknown
// scope.
func ScopeNeeds(scope string) []Requirement {
	switch scope {
	case ScopeWebhooksRead, ScopeWebhooksWrite:
		return []Requirement{NeedWebhooks(scope == ScopeWebhooksWrite)}
	case ScopeAuditRead, ScopeWorkspaceAdmin:
		return []Requirement{Member("")}
	case ScopeCallsRuntime:
		return []Requirement{Read(ModuleAgents), Read(ModuleKnowledgeBase), Read(ModulePhoneNumbers), Write(ModuleCallHistory)}
	case ScopeConversationsWrite:
		return []Requirement{ConversationNeed}
	}
	for _, m := range Modules {
		switch scope {
		case ReadScope(m):
			return []Requirement{Read(m)}
		case WriteScope(m):
			return []Requirement{Write(m)}
		}
	}
	return nil
}

// GivesScope checks that p may give a new API key scope (conventions §20: no token grants
// more than it holds): p's token holds it, and p's role, modules and agent_ids meet one
// of its ScopeNeeds, so that the key gains something by it. The service refuses a key
// asking for any other (403 naming it); the console offers no other.
func (p *Principal) GivesScope(scope string) error {
	if !p.HoldsScope(scope) {
		return Errorf(EFORBIDDEN, "This API key does not hold the %s scope, so it cannot give it to a new key.", scope)
	}
	for _, need := range ScopeNeeds(scope) {
		if p.Allows(need.ForAnyKey()) == nil {
			return nil
		}
	}
	return Errorf(EFORBIDDEN, "Your role, modules and agents in this workspace allow nothing the %s scope grants, so a key of yours cannot hold it.", scope)
}

// hasScope reports whether scopes grant want; a write scope grants its read scope.
func hasScope(scopes []string, want string) bool {
	if slices.Contains(scopes, want) {
		return true
	}
	if base, ok := strings.CutSuffix(want, ":read"); ok {
		return slices.Contains(scopes, base+":write")
	}
	return false
}

// HoldsScope reports whether the token grants scope: every scope for a token without
// scopes; for a key with scopes, the scope itself or, for a read scope, its write scope.
func (p *Principal) HoldsScope(scope string) bool {
	return p.Scopes == nil || hasScope(p.Scopes, scope)
}

// allowsScope checks r's scope against a scoped key's scopes (nil: a full-rights token).
func (p *Principal) allowsScope(r Requirement) error {
	switch {
	case p.Scopes == nil || r.AnyKey:
		return nil
	case r.Runtime && slices.Contains(p.Scopes, ScopeCallsRuntime):
		return nil
	case r.Scope == "":
		return Errorf(EFORBIDDEN, "This API key is limited to scopes (%s); this operation needs a key without scopes.", strings.Join(p.Scopes, ", "))
	case !hasScope(p.Scopes, r.Scope):
		return Errorf(EFORBIDDEN, "This API key lacks the %s scope.", r.Scope)
	}
	return nil
}

// readsEveryModule refuses, naming what is missing, a caller who may not read some
// module: one its membership lacks, or whose read scope its key lacks.
func (p *Principal) readsEveryModule() error {
	var modules, scopes []string
	for _, m := range Modules {
		if !slices.Contains(p.Modules, m) {
			modules = append(modules, m)
		} else if !p.HoldsScope(ReadScope(m)) {
			scopes = append(scopes, ReadScope(m))
		}
	}
	switch {
	case modules != nil:
		return Errorf(EFORBIDDEN, "This operation needs to read every event of the workspace; you do not have access to %s.", named("module", modules))
	case scopes != nil:
		return Errorf(EFORBIDDEN, "This operation needs to read every event of the workspace; this API key lacks %s.", named("scope", scopes))
	}
	return nil
}

// named is "the x module" for one name, "the modules x, y" for more.
func named(noun string, names []string) string {
	if len(names) == 1 {
		return "the " + names[0] + " " + noun
	}
	return "the " + noun + "s " + strings.Join(names, ", ")
}

// IntersectAgentIDs narrows a member's agent_ids (empty: every agent) by a key's (empty:
// no narrowing). A result that would be empty, and so mean every agent, is NoAgent.
func IntersectAgentIDs(member, key []string) []string {
	switch {
	case len(key) == 0:
		return member
	case len(member) == 0:
		return key
	}
	var out []string
	for _, id := range key {
		if slices.Contains(member, id) {
			out = append(out, id)
		}
	}
	if len(out) == 0 {
		return []string{NoAgent}
	}
	return out
}
