package service

import (
	"context"
	"slices"

	"github.com/voiceapi/voiceapi/data"
)

// A request is authorized once, as it starts, but its writes may commit much later (a
// conversation's turn waits on a model, an import extracts documents). Every write
// transaction of a request therefore re-checks, inside itself, the rows the caller's
// access was built from (conventions §20: no token grants more than it holds). The cost
// is one read of three revisions (one statement on PostgreSQL); only when one differs
// are the rows themselves compared, so a change that takes nothing away (the request's
// own profile or password change, last_used_at, a module added) refuses nothing.

// AccessRevisionsTx is an optional part of a Tx for engines where each statement is a
// round trip: a principal's three revisions in one statement.
type AccessRevisionsTx interface {
	// AccessRevisions returns what APIKeyRevision(keyID), UserRevision(userID) and
	// MemberRevision(workspaceID, userID) would give, in this transaction.
	AccessRevisions(keyID int64, userID, workspaceID string) (data.AccessRevisions, error)
}

// errTokenGone refuses a write whose token stopped being valid while the request ran.
func errTokenGone() error {
	return data.Errorf(data.EUNAUTHORIZED, "The token was revoked or expired, or its user deleted, while this request was under way: nothing was changed.")
}

// errAccessNarrowed refuses a write whose caller lost some of its access meanwhile.
func errAccessNarrowed() error {
	return data.Errorf(data.EFORBIDDEN, "The caller's access changed while this request was under way (its role, modules or agent_ids were narrowed, or it is no longer a member): nothing was changed.")
}

type waiveKey struct{}

// withoutAccessRecheck marks ctx's writes as bookkeeping of the request rather than its
// acts (freeing a lease it took, keeping the response of a change already committed):
// they are not refused when the caller's access changed meanwhile.
func withoutAccessRecheck(ctx context.Context) context.Context {
	return context.WithValue(ctx, waiveKey{}, true)
}

// accessToRecheck is the principal whose access ctx's writes re-check: nil without a
// caller built from a stored token (CLI, system and background work, login).
func accessToRecheck(ctx context.Context) *data.Principal {
	p := data.PrincipalFrom(ctx)
	if p == nil || p.Access.Key == 0 || ctx.Value(waiveKey{}) != nil {
		return nil
	}
	return p
}

// accessRevisions reads p's three revisions in tx.
func accessRevisions(tx Tx, p *data.Principal) (data.AccessRevisions, error) {
	if at, ok := tx.(AccessRevisionsTx); ok {
		return at.AccessRevisions(p.TokenID, p.UserID, p.WorkspaceID)
	}
	var r data.AccessRevisions
	var err error
	if r.Key, err = tx.APIKeyRevision(p.TokenID); err != nil {
		return r, err
	}
	if r.User, err = tx.UserRevision(p.UserID); err != nil {
		return r, err
	}
	r.Member, err = tx.MemberRevision(p.WorkspaceID, p.UserID)
	return r, err
}

// recheckAccess refuses, in the write transaction tx, a caller whose token is no longer
// valid (unauthenticated) or whose access was narrowed since p was built (forbidden).
// A refusal is logged with what changed and whose (ids only, never a secret): the
// answer alone would not tell an operator why a request that began fine was refused.
func (b *base) recheckAccess(tx Tx, p *data.Principal) error {
	reason, err := b.accessChange(tx, p)
	if err != nil || reason == "" {
		return err
	}
	b.log.Info("a write was refused: the caller's access changed during its request",
		"change", reason, "user_id", p.UserID, "token_id", p.TokenID, "workspace_id", p.WorkspaceID)
	if tokenGone[reason] {
		return errTokenGone()
	}
	return errAccessNarrowed()
}

// The changes accessChange names; those in tokenGone end the token itself.
const (
	changeKeyGone    = "key revoked"
	changeKeyExpired = "key expired"
	changeUserGone   = "user deleted"
	changeAdmin      = "instance administrator rights taken away"
	changeScopes     = "key scopes narrowed"
	changeMember     = "no longer a member"
	changeRole       = "role lowered"
	changeModules    = "module taken away"
	changeAgents     = "agent_ids narrowed"
)

var tokenGone = map[string]bool{changeKeyGone: true, changeKeyExpired: true, changeUserGone: true}

// accessChange names what p no longer holds ("" when it holds all it held): a cheap
// read of three revisions, and only when one moved the rows themselves.
func (b *base) accessChange(tx Tx, p *data.Principal) (string, error) {
	if p.ExpiresAt != nil && !b.now().Before(*p.ExpiresAt) {
		return changeKeyExpired, nil
	}
	revs, err := accessRevisions(tx, p)
	if err != nil || revs == p.Access {
		return "", err
	}
	switch {
	case revs.Key == 0:
		return changeKeyGone, nil
	case revs.User == 0:
		return changeUserGone, nil
	}
	return b.accessTakenAway(tx, p)
}

// accessTakenAway compares the stored token, user and membership with what p holds and
// names the first right of p they no longer give.
func (b *base) accessTakenAway(tx Tx, p *data.Principal) (string, error) {
	k, err := tx.APIKey(p.TokenID)
	if err != nil {
		return "", err
	}
	switch {
	case k == nil || k.UserID != p.UserID:
		return changeKeyGone, nil
	case k.ExpiresAt != nil && !b.now().Before(k.ExpiresAt.Time):
		return changeKeyExpired, nil
	}
	u, err := tx.User(p.UserID)
	if err != nil {
		return "", err
	}
	switch {
	case u == nil:
		return changeUserGone, nil
	case p.IsAdmin && !u.IsAdmin:
		return changeAdmin, nil
	case p.Scopes == nil && k.Scopes != nil:
		return changeScopes, nil
	}
	key := data.Principal{Scopes: k.Scopes}
	for _, sc := range p.Scopes {
		if !key.HoldsScope(sc) {
			return changeScopes, nil
		}
	}
	if p.Role == "" {
		return "", nil // p acts on no membership: it has none to lose
	}
	m, err := tx.Member(p.WorkspaceID, p.UserID)
	if err != nil {
		return "", err
	}
	switch {
	case m == nil:
		return changeMember, nil
	case !data.RoleAtLeast(m.Role, p.Role):
		return changeRole, nil
	}
	modules := data.EffectiveModules(m.Role, m.Modules)
	for _, mod := range p.Modules {
		if !slices.Contains(modules, mod) {
			return changeModules, nil
		}
	}
	narrowed, err := agentsNarrowed(tx, p, data.IntersectAgentIDs(m.AgentIDs, p.KeyAgentIDs))
	if err != nil || !narrowed {
		return "", err
	}
	return changeAgents, nil
}

// agentsNarrowed reports whether agents, p's agent_ids as stored now, leave out an agent
// p held that still exists (a deleted agent leaves every list, and nobody can act on it
// anyway).
func agentsNarrowed(tx Tx, p *data.Principal, agents []string) (bool, error) {
	switch {
	case len(agents) == 0:
		return false, nil // every agent
	case len(p.AgentIDs) == 0:
		return true, nil
	}
	for _, id := range p.AgentIDs {
		if slices.Contains(agents, id) {
			continue
		}
		exists, err := tx.AgentInWorkspace(p.WorkspaceID, id)
		if err != nil || exists {
			return exists, err
		}
	}
	return false, nil
}
