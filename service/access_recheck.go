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
func (b *base) recheckAccess(tx Tx, p *data.Principal) error {
	if p.ExpiresAt != nil && !b.now().Before(*p.ExpiresAt) {
		return errTokenGone()
	}
	revs, err := accessRevisions(tx, p)
	if err != nil {
		return err
	}
	if revs == p.Access {
		return nil
	}
	if revs.Key == 0 || revs.User == 0 {
		return errTokenGone()
	}
	return b.accessStillHeld(tx, p)
}

// accessStillHeld compares the stored token, user and membership with what p holds: any
// right of p they no longer give refuses the write.
func (b *base) accessStillHeld(tx Tx, p *data.Principal) error {
	k, err := tx.APIKey(p.TokenID)
	if err != nil {
		return err
	}
	if k == nil || k.UserID != p.UserID || k.ExpiresAt != nil && !b.now().Before(k.ExpiresAt.Time) {
		return errTokenGone()
	}
	u, err := tx.User(p.UserID)
	if err != nil {
		return err
	}
	if u == nil {
		return errTokenGone()
	}
	if p.IsAdmin && !u.IsAdmin {
		return errAccessNarrowed()
	}
	key := data.Principal{Scopes: k.Scopes}
	if p.Scopes == nil && k.Scopes != nil {
		return errAccessNarrowed()
	}
	for _, sc := range p.Scopes {
		if !key.HoldsScope(sc) {
			return errAccessNarrowed()
		}
	}
	if p.Role == "" {
		return nil // p acts on no membership: it has none to lose
	}
	m, err := tx.Member(p.WorkspaceID, p.UserID)
	if err != nil {
		return err
	}
	if m == nil || !data.RoleAtLeast(m.Role, p.Role) {
		return errAccessNarrowed()
	}
	modules := data.EffectiveModules(m.Role, m.Modules)
	for _, mod := range p.Modules {
		if !slices.Contains(modules, mod) {
			return errAccessNarrowed()
		}
	}
	return agentsStillHeld(tx, p, data.IntersectAgentIDs(m.AgentIDs, p.KeyAgentIDs))
}

// agentsStillHeld refuses p when agents, its agent_ids as stored now, leave out an
// agent p held that still exists (a deleted agent leaves every list, and nobody can act
// on it anyway).
func agentsStillHeld(tx Tx, p *data.Principal, agents []string) error {
	switch {
	case len(agents) == 0:
		return nil // every agent
	case len(p.AgentIDs) == 0:
		return errAccessNarrowed()
	}
	for _, id := range p.AgentIDs {
		if slices.Contains(agents, id) {
			continue
		}
		exists, err := tx.AgentInWorkspace(p.WorkspaceID, id)
		if err != nil {
			return err
		}
		if exists {
			return errAccessNarrowed()
		}
	}
	return nil
}
