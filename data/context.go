package data

import (
	"context"
	"errors"
	"slices"
	"time"
)

// Roles of a workspace member, strongest first (conventions §6).
const (
	RoleOwner     = "owner"
	RoleAdmin     = "admin"
	RoleDeveloper = "developer"
	RoleMember    = "member"
)

// Roles lists every role.
var Roles = []string{RoleOwner, RoleAdmin, RoleDeveloper, RoleMember}

// Modules that gate endpoint groups (conventions §6).
const (
	ModuleAgents        = "agents"
	ModuleKnowledgeBase = "knowledge_base"
	ModulePhoneNumbers  = "phone_numbers"
	ModuleCallHistory   = "call_history"
	ModuleAnalytics     = "analytics"
)

// Modules lists every module, in the order the spec names them.
var Modules = []string{ModuleAgents, ModuleKnowledgeBase, ModulePhoneNumbers, ModuleCallHistory, ModuleAnalytics}

// roleRank orders roles so that a requirement can name the weakest role it accepts.
func roleRank(role string) int {
	switch role {
	case RoleOwner:
		return 4
	case RoleAdmin:
		return 3
	case RoleDeveloper:
		return 2
	case RoleMember:
		return 1
	}
	return 0
}

// RoleAtLeast reports whether role is min or stronger.
func RoleAtLeast(role, min string) bool { return roleRank(role) >= roleRank(min) }

// Principal is who is calling: the user, the token used, and the workspace acted in, with
// the caller's membership there. The authorization layer fills it before a handler runs.
type Principal struct {
	UserID  string
	IsAdmin bool // instance administrator
	TokenID int64

	// WorkspaceID is the workspace the request acts in: the path's workspace_id where the
	// route has one, else the token's current workspace.
	WorkspaceID string
	// CurrentWorkspaceID is the workspace the token is bound to.
	CurrentWorkspaceID string
	Role               string   // "" when the caller is not a member of WorkspaceID
	Modules            []string // effective modules: owners and admins hold all
	AgentIDs           []string // empty means every agent
	// Scopes limit an API key created with scopes; nil for a token with its user's full
	// rights.
	Scopes []string
	// KeyAgentIDs are the token's own agent_ids (an API key made with them), which
	// AgentIDs already intersects with the membership's; empty when the token has none.
	// A route acting in another workspace intersects that membership with them again.
	KeyAgentIDs []string
	// ReadSince names the storage snapshot that confirmed this request's cached token (0
	// when none did). Later cache checks of the same request may rely on any snapshot at
	// least as recent: it began after the request arrived, so it holds every change
	// acknowledged before (PostgreSQL replicas then confirm a GET with one round trip).
	ReadSince uint64
	// Access names, by revision, the stored rows this principal was built from: its
	// token, its user and its membership of WorkspaceID. Every write re-checks them in its
	// transaction (service/access_recheck.go), so a request does not keep access revoked
	// or narrowed while it ran. Key 0: not built from a stored token (CLI, tests).
	Access AccessRevisions
	// ExpiresAt is when the token expires (nil: never); a write after it is refused.
	ExpiresAt *time.Time
}

// ActIn makes p act in workspaceID with membership m there (a route with a
// {workspace_id} path): m's rights, narrowed by the key's own agent_ids, and m's revision
// for the writes' re-check. A key's own agent_ids name agents of the workspace it is
// bound to: elsewhere they leave it no agent at all, never every agent.
func (p *Principal) ActIn(workspaceID string, m *Membership) {
	p.WorkspaceID, p.Role, p.Modules = workspaceID, m.Role, m.Modules
	p.AgentIDs = IntersectAgentIDs(m.AgentIDs, p.KeyAgentIDs)
	p.Access.Member = m.Revision
}

// AccessRevisions are the revisions of a token's key, user and membership, as the
// storage's AccountTx reads them (0 for an absent row).
type AccessRevisions struct {
	Key, User, Member uint64
}

// Requirement is what an endpoint needs of its caller; each route declares one.
type Requirement struct {
	// Module gates the endpoint group; "" when the endpoint is not module-gated.
	Module string
	// MinRole is the weakest role allowed; "" means any member of the workspace.
	MinRole string
	// Workspace is false for endpoints about the caller alone (profile, own keys, logout,
	// creating or listing workspaces), which need no membership.
	Workspace bool
	// InstanceAdmin restricts the endpoint to instance administrators.
	InstanceAdmin bool
	// AllAgents refuses callers limited by agent_ids (e.g. creating an agent).
	AllAgents bool
	// EveryModule refuses callers who may not read every module: a member without one,
	// or a key with scopes lacking a module's read scope (NeedAuditChain).
	EveryModule bool
	// Scope is the API key scope the operation needs; "" when only a key without scopes
	// may perform it (unless AnyKey). Read and Write set it from the module.
	Scope string
	// Runtime marks what the calls:runtime scope allows.
	Runtime bool
	// AnyKey lets every token perform the operation, scoped or not (the caller's own
	// profile, logging out).
	AnyKey bool
}

// Read is the requirement of reading in a module: any member holding the module.
func Read(module string) Requirement {
	return Requirement{Module: module, Workspace: true, Scope: ReadScope(module)}
}

// Write is the requirement of changing something in a module: developers and up.
func Write(module string) Requirement {
	return Requirement{Module: module, MinRole: RoleDeveloper, Workspace: true, Scope: WriteScope(module)}
}

// NeedAgentCreate is the requirement of adding an agent: Write in the agents module, by a
// caller not limited to some agents. The API's route and the console's offer both ask it.
func NeedAgentCreate() Requirement {
	r := Write(ModuleAgents)
	r.AllAgents = true
	return r
}

// NeedSuppressionRemove is the requirement of removing a number from the suppression
// list: Write in the call_history module, by a caller not limited to some agents (lifting
// a number's block lets every agent call it). The API's route and the console's offer
// both ask it.
func NeedSuppressionRemove() Requirement {
	r := Write(ModuleCallHistory)
	r.AllAgents = true
	return r
}

// NeedWorkspaceAdmin is the requirement of managing a workspace (its prices, members,
// settings): an admin, and a key holding workspace:admin if it has scopes. The API's
// routes and the console's offers both ask it.
func NeedWorkspaceAdmin() Requirement { return Member(RoleAdmin).WithScope(ScopeWorkspaceAdmin) }

// NeedWebhooks is the requirement of reading (change false) or changing the webhooks: an
// admin whose token sees every agent (a webhook carries every event of the workspace),
// and a key holding webhooks:read or webhooks:write if it has scopes. The API's routes
// and the console's offers both ask it.
func NeedWebhooks(change bool) Requirement {
	r := Member(RoleAdmin).WithScope(ScopeWebhooksRead)
	if change {
		r.Scope = ScopeWebhooksWrite
	}
	r.AllAgents = true
	return r
}

// NeedWorkspaceExport is the requirement of exporting or importing a whole workspace:
// NeedWorkspaceAdmin by a token that sees every agent (an export holds every agent, an
// import creates agents). The API's routes and the console's offer both ask it.
func NeedWorkspaceExport() Requirement {
	r := NeedWorkspaceAdmin()
	r.AllAgents = true
	return r
}

// NeedWorkspaceDelete is the requirement of deleting a workspace: an owner, and a key
// holding workspace:admin if it has scopes. The API's route and the console's
// confirmation both ask it.
func NeedWorkspaceDelete() Requirement {
	return Member(RoleOwner).WithScope(ScopeWorkspaceAdmin)
}

// NeedAuditLog is the requirement of reading the audit log: an admin, and a key holding
// audit:read if it has scopes. The API's route and the console's offers both ask it.
func NeedAuditLog() Requirement { return Member(RoleAdmin).WithScope(ScopeAuditRead) }

// NeedAuditChain is the requirement of reading every event of the workspace: the audit
// log by a token that sees every agent and reads every module (so every job kind too).
// The chain's head and its verification describe every event (their count, the newest
// one's id, hash and time, each fault's event), so the API's routes, the service behind
// them and the console's offer ask it; the service's visibility rule hides nothing from
// exactly these callers (conventions §6, §20: no token shows more than it holds).
func NeedAuditChain() Requirement {
	r := NeedAuditLog()
	r.AllAgents, r.EveryModule = true, true
	return r
}

// NeedMemberChange is the requirement of adding, changing or removing a workspace's
// members: an admin whose token sees every agent, with a key without scopes. The API's
// routes and the console's offers both ask it.
func NeedMemberChange() Requirement {
	r := Member(RoleAdmin)
	r.AllAgents = true
	return r
}

// MayTouchOwners tells whether a member of role may grant the owner role, or change or
// remove an owner (conventions §6: owners only). The service refuses the others; the
// console offers them neither an owner's row nor the owner role.
func MayTouchOwners(role string) bool { return role == RoleOwner }

// OwnersOnly is the refusal of what MayTouchOwners denies.
const OwnersOnly = "Only an owner can grant, change or remove an owner."

// GrantableRoles are the roles a member of role may give another: every role for an
// owner, every role but owner for the others (MayTouchOwners).
func GrantableRoles(role string) []string {
	if MayTouchOwners(role) {
		return Roles
	}
	return slices.DeleteFunc(slices.Clone(Roles), func(r string) bool { return r == RoleOwner })
}

// Member is the requirement of a role in the workspace, outside any module.
func Member(minRole string) Requirement {
	return Requirement{MinRole: minRole, Workspace: true}
}

// Self is the requirement of any authenticated caller with a key without scopes.
var Self = Requirement{}

// AnyKey is the requirement of any authenticated caller, scoped key or not.
var AnyKey = Requirement{AnyKey: true}

// WithScope returns r needing scope of an API key with scopes.
func (r Requirement) WithScope(scope string) Requirement { r.Scope = scope; return r }

// ForAnyKey returns r allowed to every token, scoped or not.
func (r Requirement) ForAnyKey() Requirement { r.AnyKey = true; return r }

// ForRuntime returns r allowed to keys with the calls:runtime scope as well.
func (r Requirement) ForRuntime() Requirement { r.Runtime = true; return r }

// ConversationNeed gates conversations (conventions §21): module agents, any role, and an
// API key with conversations:write (no part of calls:runtime). A draft needs the right to
// write agents too, which the service checks. The routes and the service's messages that
// name a conversation both read it.
var ConversationNeed = Requirement{Module: ModuleAgents, Workspace: true, Scope: ScopeConversationsWrite}

// Admin is the requirement of an instance administrator.
var Admin = Requirement{InstanceAdmin: true}

// Allows checks r against the principal and returns a forbidden error naming what is missing.
// The caller must already have established membership (non-members get not found).
func (p *Principal) Allows(r Requirement) error {
	if r.InstanceAdmin && !p.IsAdmin {
		return Errorf(EFORBIDDEN, "This operation requires an instance administrator.")
	}
	if err := p.allowsScope(r); err != nil {
		return err
	}
	if !r.Workspace {
		return nil
	}
	if r.MinRole != "" && !RoleAtLeast(p.Role, r.MinRole) {
		return Errorf(EFORBIDDEN, "Your role (%s) does not allow this operation; it needs %s or above.", p.Role, r.MinRole)
	}
	if r.Module != "" && !slices.Contains(p.Modules, r.Module) {
		return Errorf(EFORBIDDEN, "You do not have access to the %s module.", r.Module)
	}
	if r.AllAgents && len(p.AgentIDs) > 0 {
		return Errorf(EFORBIDDEN, "Your access is limited to some agents; this operation needs access to all of them.")
	}
	if r.EveryModule {
		return p.readsEveryModule()
	}
	return nil
}

// NoAgent in agent_ids means "no agent at all", which an empty list (every agent) cannot
// say: it is what remains when the last agent a member was limited to is deleted, so
// deleting an agent never widens anyone's access.
const NoAgent = "agt_00000000000000000000000000"

// HiddenAgent stands, in a record a caller limited by agent_ids reads, for an agent it may
// not see: a number bound to such an agent shows it as its inbound_agent_id or
// outbound_agent_id. It names no agent (the last id of the shape, never made), so the
// client learns the number is bound, and read-only to it, without learning to which agent
// (conventions §2: existence is never revealed). null would say "unbound", which is false
// and invites a write that is refused. docs/api.md, "What a caller sees".
const HiddenAgent = "agt_7ZZZZZZZZZZZZZZZZZZZZZZZZZ"

// CanSeeAgent reports whether the caller may see agent id (the agent_ids restriction).
// Agents outside the list are reported as not found by the storage layer.
func (p *Principal) CanSeeAgent(id string) bool {
	return len(p.AgentIDs) == 0 || slices.Contains(p.AgentIDs, id)
}

// Limited reports whether the token itself is narrower than its user: an API key with
// scopes or with agent_ids. Such a token cannot manage members (conventions §20).
func (p *Principal) Limited() bool { return p.Scopes != nil || len(p.KeyAgentIDs) > 0 }

// SameAccess reports whether p and q hold the same rights in the same workspace: what a
// reader of the event stream was allowed when a batch was read still holds.
func (p *Principal) SameAccess(q *Principal) bool {
	return p.UserID == q.UserID && p.WorkspaceID == q.WorkspaceID && p.Role == q.Role &&
		slices.Equal(p.Modules, q.Modules) && slices.Equal(p.AgentIDs, q.AgentIDs) &&
		(p.Scopes == nil) == (q.Scopes == nil) && slices.Equal(p.Scopes, q.Scopes)
}

// EffectiveModules returns the modules a member holds: owners and admins hold all five.
func EffectiveModules(role string, modules []string) []string {
	if role == RoleOwner || role == RoleAdmin {
		return slices.Clone(Modules)
	}
	return modules
}

type ctxKey int

const (
	principalKey ctxKey = iota
	ifMatchKey
	inputFaultsKey
	clientAddressKey
)

// WithPrincipal returns ctx carrying p.
func WithPrincipal(ctx context.Context, p *Principal) context.Context {
	return context.WithValue(ctx, principalKey, p)
}

// PrincipalFrom returns the caller, or nil outside an authenticated request (CLI, system).
func PrincipalFrom(ctx context.Context) *Principal {
	p, _ := ctx.Value(principalKey).(*Principal)
	return p
}

// WithIfMatch returns ctx carrying the request's If-Match value (conventions §17).
func WithIfMatch(ctx context.Context, etag string) context.Context {
	return context.WithValue(ctx, ifMatchKey, etag)
}

// IfMatch returns the If-Match value of the request, "" when there is none.
func IfMatch(ctx context.Context) string {
	s, _ := ctx.Value(ifMatchKey).(string)
	return s
}

// WithInputFaults returns ctx carrying the faults found while decoding a request's body
// (a validation_failed error): the service that validates the input adds its own, so that
// one 422 names every fault of the request and the rules run once, in the service.
func WithInputFaults(ctx context.Context, err error) context.Context {
	if err == nil {
		return ctx
	}
	return context.WithValue(ctx, inputFaultsKey, err)
}

// InputFaults returns the decoding faults ctx carries, nil when there are none.
func InputFaults(ctx context.Context) error {
	err, _ := ctx.Value(inputFaultsKey).(error)
	return err
}

// WithClientAddress returns ctx carrying the client's address, for the events it causes.
func WithClientAddress(ctx context.Context, addr string) context.Context {
	return context.WithValue(ctx, clientAddressKey, addr)
}

// ClientAddress returns the client's address ctx carries, "" when there is none.
func ClientAddress(ctx context.Context) string {
	s, _ := ctx.Value(clientAddressKey).(string)
	return s
}

// ErrCountBusy is what a RateCounter answers when it cannot count where every replica
// sees it without waiting (PostgreSQL: a migration holds the database, postgres/fence.go):
// nothing was counted, and the caller counts the request on its own rather than make it
// wait for the migration.
var ErrCountBusy = errors.New("the shared count is busy")

// RateCounter counts requests in fixed windows that every replica of a cluster shares,
// so that a rate limit is the cluster's and not one per replica.
type RateCounter interface {
	// CountRequest adds one request of key to the window that starts at start unless the
	// window already holds limit, and returns the window's count and whether this request
	// was added (a refused request is not counted).
	CountRequest(ctx context.Context, key string, start time.Time, limit int) (count int, added bool, err error)
	// UncountRequest takes back one request CountRequest added to key's window that
	// starts at start: a request that turned out not to be what the limit bounds.
	UncountRequest(ctx context.Context, key string, start time.Time) error
}
