package service

import (
	"context"
	"strings"
	"unicode/utf8"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/validate"
)

// WorkspaceUserService manages the members of a workspace.
type WorkspaceUserService struct{ *base }

var _ data.WorkspaceUserService = (*WorkspaceUserService)(nil)

// loadMember returns a membership, not found when there is none.
func loadMember(tx Tx, workspaceID, userID string) (*data.MemberRecord, error) {
	m, err := tx.Member(workspaceID, userID)
	if err == nil && m == nil {
		err = data.NotFound("Workspace user")
	}
	return m, err
}

// lastOwner reports whether userID is the only owner of workspaceID.
func lastOwner(tx Tx, workspaceID, userID string) (bool, error) {
	members, err := tx.Members(workspaceID)
	if err != nil {
		return false, err
	}
	owners, isOwner := 0, false
	for _, m := range members {
		if m.Role == data.RoleOwner {
			owners++
			isOwner = isOwner || m.UserID == userID
		}
	}
	return isOwner && owners == 1, nil
}

// workspaceUser is a membership as responses show it to the caller of ctx: its agent_ids
// cut to the agents the caller sees (visibility.memberAgents).
func workspaceUser(ctx context.Context, tx Tx, m *data.MemberRecord) (*data.WorkspaceUser, error) {
	u, err := loadUser(tx, m.UserID)
	if err != nil {
		return nil, err
	}
	role := m.Role
	return &data.WorkspaceUser{
		ID: u.ID, Name: u.Name, Email: u.Email, Role: &role, IsOwner: m.Role == data.RoleOwner,
		Modules: data.EffectiveModules(m.Role, m.Modules), AgentIDs: visibilityOf(data.PrincipalFrom(ctx)).memberAgents(m.AgentIDs),
	}, nil
}

// ListWorkspaceUsers implements data.WorkspaceUserService.
func (s *WorkspaceUserService) ListWorkspaceUsers(ctx context.Context, workspaceID string, req data.PageRequest) ([]*data.WorkspaceUser, data.Page, error) {
	var list []*data.WorkspaceUser
	var page data.Page
	err := s.store.View(ctx, func(tx Tx) error {
		if _, err := memberWorkspace(ctx, tx, workspaceID); err != nil {
			return err
		}
		members, pg, err := tx.MemberPage(workspaceID, req)
		if err != nil {
			return err
		}
		page = pg
		list = make([]*data.WorkspaceUser, 0, len(members))
		for _, m := range members {
			wu, err := workspaceUser(ctx, tx, m)
			if err != nil {
				return err
			}
			list = append(list, wu)
		}
		return nil
	})
	return list, page, err
}

// checkAgentIDs reports agent_ids that are not agents of the workspace, each at its path.
func checkAgentIDs(tx Tx, workspaceID string, ids []string) error {
	var errs validate.Errors
	if err := addAgentIDFaults(tx, workspaceID, ids, &errs); err != nil {
		return err
	}
	return errs.Err()
}

// addAgentIDFaults adds to errs a fault for each of ids that is not an agent of the
// workspace, at its path under agent_ids.
func addAgentIDFaults(tx Tx, workspaceID string, ids []string, errs *validate.Errors) error {
	if len(ids) > validate.MaxIDListItems {
		return nil // refused whole by the rules (checkInputAndRefs): not looked up one by one
	}
	for i, id := range ids {
		if id == data.NoAgent {
			continue
		}
		ok := false
		if data.ValidID(data.PrefixAgent, id) { // else the rules refused it: not looked up
			var err error
			if ok, err = tx.AgentInWorkspace(workspaceID, id); err != nil {
				return err
			}
		}
		if !ok {
			p := validate.Index("agent_ids", i)
			errs.Addf(p, "The %s field must be an agent of this workspace.", p)
		}
	}
	return nil
}

// newMemberRefs returns the id of the user a member's add names (by id or by email) and
// reports, in one 422, a user that does not exist and agent_ids that are not agents of
// the workspace.
func newMemberRefs(tx Tx, workspaceID string, in data.WorkspaceUserAdd) (string, error) {
	var errs validate.Errors
	userID := in.ID
	if in.Email != "" {
		// Named by email, as people invite each other; the same answer as an unknown id.
		// Text storage cannot hold (NUL, broken UTF-8) the rules refused: not looked up.
		var u *data.UserRecord
		if utf8.ValidString(in.Email) && !strings.ContainsRune(in.Email, 0) {
			var err error
			if u, err = tx.UserByEmail(validate.NormalizeEmail(in.Email)); err != nil {
				return "", err
			}
		}
		if u == nil {
			errs.Add("email", "The email field must be the email of an existing user.")
		} else {
			userID = u.ID
		}
	} else if !data.ValidID(data.PrefixUser, in.ID) {
		errs.Add("id", "The id field must be the id of an existing user.")
	} else if u, err := tx.User(in.ID); err != nil {
		return "", err
	} else if u == nil {
		errs.Add("id", "The id field must be the id of an existing user.")
	}
	if in.AgentIDs.Set {
		if err := addAgentIDFaults(tx, workspaceID, in.AgentIDs.V, &errs); err != nil {
			return "", err
		}
	}
	return userID, errs.Err()
}

// refuseLimitedToken refuses a token narrower than its user (a key with scopes or
// agent_ids) and one limited to some agents: managing members with it could grant more
// than it holds (conventions §20). The route refuses them first; nil is the CLI.
func refuseLimitedToken(p *data.Principal) error {
	if p != nil && (p.Limited() || !visibilityOf(p).allAgents()) {
		return data.Errorf(data.EFORBIDDEN, "Adding, changing or removing workspace users needs a token that is not limited to some scopes or agents.")
	}
	return nil
}

// memberChangeAllowed is what a member's add or update checks before its references: a
// token as wide as its user, in a workspace the caller may change the members of.
func memberChangeAllowed(ctx context.Context, tx Tx, p *data.Principal, workspaceID string) error {
	if err := refuseLimitedToken(p); err != nil {
		return err
	}
	_, err := memberWorkspace(ctx, tx, workspaceID)
	return err
}

// AddWorkspaceUser implements data.WorkspaceUserService.
func (s *WorkspaceUserService) AddWorkspaceUser(ctx context.Context, workspaceID string, in data.WorkspaceUserAdd) (*data.WorkspaceUser, error) {
	p := data.PrincipalFrom(ctx)
	refs := func(tx Tx) error {
		if err := memberChangeAllowed(ctx, tx, p, workspaceID); err != nil {
			return err
		}
		_, err := newMemberRefs(tx, workspaceID, in)
		return err
	}
	if err := s.checkInputAndRefs(ctx, validate.WorkspaceUserAdd(in), refs); err != nil {
		return nil, err
	}
	if err := refuseLimitedToken(p); err != nil {
		return nil, err
	}
	var out *data.WorkspaceUser
	err := s.store.Update(ctx, func(tx Tx) error {
		if _, err := memberWorkspace(ctx, tx, workspaceID); err != nil {
			return err
		}
		if in.Role == data.RoleOwner {
			if err := refuseUnlessOwner(tx, p, workspaceID, "Only an owner can grant the owner role."); err != nil {
				return err
			}
		}
		userID, err := newMemberRefs(tx, workspaceID, in)
		if err != nil {
			return err
		}
		in.ID = userID
		if m, err := tx.Member(workspaceID, in.ID); err != nil {
			return err
		} else if m != nil {
			return data.Errorf(data.ECONFLICT, "The user is already a member of this workspace.")
		}
		m := &data.MemberRecord{UserID: in.ID, WorkspaceID: workspaceID, Role: in.Role, Modules: data.Modules, AgentIDs: []string{}}
		if in.Modules.Set {
			m.Modules = in.Modules.V
		}
		if in.AgentIDs.Set {
			m.AgentIDs = in.AgentIDs.V
		}
		if err := checkQuota(tx, workspaceID, data.LimitWorkspaceUsers); err != nil {
			return err
		}
		m.CreatedAt, m.UpdatedAt = s.timeNow(), s.timeNow()
		if err := tx.PutMember(m); err != nil {
			return err
		}
		if out, err = workspaceUser(ctx, tx, m); err != nil {
			return err
		}
		_, err = s.record(ctx, tx, data.EventWorkspaceUserAdded, workspaceID, out)
		return err
	})
	return out, err
}

// WorkspaceUser implements data.WorkspaceUserService.
func (s *WorkspaceUserService) WorkspaceUser(ctx context.Context, workspaceID, userID string) (*data.WorkspaceUser, error) {
	var out *data.WorkspaceUser
	err := s.store.View(ctx, func(tx Tx) error {
		if _, err := memberWorkspace(ctx, tx, workspaceID); err != nil {
			return err
		}
		m, err := loadMember(tx, workspaceID, userID)
		if err != nil {
			return err
		}
		out, err = workspaceUser(ctx, tx, m)
		return err
	})
	return out, err
}

// loadMemberForChange loads a member about to change, with its workspace and its record
// as the caller last saw it, refusing a stale If-Match.
func loadMemberForChange(ctx context.Context, tx Tx, workspaceID, userID string) (*data.WorkspaceRecord, *data.MemberRecord, *data.WorkspaceUser, error) {
	w, err := memberWorkspace(ctx, tx, workspaceID)
	if err != nil {
		return nil, nil, nil, err
	}
	m, err := loadMember(tx, workspaceID, userID)
	if err != nil {
		return nil, nil, nil, err
	}
	current, err := workspaceUser(ctx, tx, m)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := data.CheckIfMatch(data.IfMatch(ctx), current); err != nil {
		return nil, nil, nil, err
	}
	return w, m, current, nil
}

// refuseUnlessOwner refuses (forbidden, with message) a caller that is not an owner of
// workspaceID as stored now, rather than as the request found it: an owner demoted or
// removed while the request was under way no longer acts as one.
func refuseUnlessOwner(tx Tx, p *data.Principal, workspaceID, message string) error {
	caller, err := tx.Member(workspaceID, p.UserID)
	if err != nil {
		return err
	}
	if caller == nil || !data.MayTouchOwners(caller.Role) {
		return data.Errorf(data.EFORBIDDEN, "%s", message)
	}
	return nil
}

// guardOwner refuses what only owners may do to owners, and leaving a workspace ownerless.
func guardOwner(tx Tx, p *data.Principal, m *data.MemberRecord, newRole string, removing bool) error {
	if m.Role == data.RoleOwner || newRole == data.RoleOwner {
		if err := refuseUnlessOwner(tx, p, m.WorkspaceID, data.OwnersOnly); err != nil {
			return err
		}
	}
	if m.Role != data.RoleOwner || (!removing && newRole == data.RoleOwner) {
		return nil
	}
	last, err := lastOwner(tx, m.WorkspaceID, m.UserID)
	if err != nil || !last {
		return err
	}
	field := "role"
	if removing {
		field = "id"
	}
	return data.FieldError(field, "A workspace must keep an owner: make another member an owner first.")
}

// UpdateWorkspaceUser implements data.WorkspaceUserService.
func (s *WorkspaceUserService) UpdateWorkspaceUser(ctx context.Context, workspaceID, userID string, in data.WorkspaceUserUpdate) (*data.WorkspaceUser, error) {
	p := data.PrincipalFrom(ctx)
	refs := func(tx Tx) error {
		if err := memberChangeAllowed(ctx, tx, p, workspaceID); err != nil {
			return err
		}
		if _, err := loadMember(tx, workspaceID, userID); err != nil || !in.AgentIDs.Set {
			return err
		}
		return checkAgentIDs(tx, workspaceID, in.AgentIDs.V)
	}
	if err := s.checkInputAndRefs(ctx, validate.WorkspaceUserUpdate(in), refs); err != nil {
		return nil, err
	}
	if err := refuseLimitedToken(p); err != nil {
		return nil, err
	}
	var out *data.WorkspaceUser
	err := s.store.Update(ctx, func(tx Tx) error {
		_, m, current, err := loadMemberForChange(ctx, tx, workspaceID, userID)
		if err != nil {
			return err
		}
		before := storedSnapshot(m)
		newRole := m.Role
		if in.Role.Set {
			newRole = in.Role.V
		}
		if err := guardOwner(tx, p, m, newRole, false); err != nil {
			return err
		}
		if in.AgentIDs.Set && !in.Role.Set {
			var errs validate.Errors
			validate.MemberAgentLimit(&errs, newRole, in.AgentIDs.V)
			if err := errs.Err(); err != nil {
				return err
			}
		}
		m.Role = newRole
		if in.Modules.Set {
			m.Modules = in.Modules.V
		}
		if in.AgentIDs.Set {
			if err := checkAgentIDs(tx, workspaceID, in.AgentIDs.V); err != nil {
				return err
			}
			m.AgentIDs = in.AgentIDs.V
		}
		if newRole == data.RoleOwner || newRole == data.RoleAdmin {
			m.AgentIDs = []string{} // a promotion lifts the limit: they see every agent
		}
		if unchangedSince(before, m) {
			out = current
			return errNothingToWrite // nothing changed: no write, no event (unchanged.go)
		}
		m.UpdatedAt = s.timeNow()
		if err := tx.PutMember(m); err != nil {
			return err
		}
		if out, err = workspaceUser(ctx, tx, m); err != nil {
			return err
		}
		_, err = s.record(ctx, tx, data.EventWorkspaceUserUpdated, workspaceID, out)
		return err
	})
	return out, err
}

// RemoveWorkspaceUser implements data.WorkspaceUserService.
func (s *WorkspaceUserService) RemoveWorkspaceUser(ctx context.Context, workspaceID, userID string) error {
	p := data.PrincipalFrom(ctx)
	if err := refuseLimitedToken(p); err != nil {
		return err
	}
	return s.store.Update(ctx, func(tx Tx) error {
		w, m, current, err := loadMemberForChange(ctx, tx, workspaceID, userID)
		if err != nil {
			return err
		}
		if w.PersonalOf == userID {
			return data.FieldError("id", "A user cannot be removed from their personal workspace.")
		}
		if err := guardOwner(tx, p, m, "", true); err != nil {
			return err
		}
		// Tokens bound to this workspace would only fail from now on: storage revokes
		// them with the membership, and what they kept goes with them. The user's
		// tokens bound elsewhere live on, but what they kept of requests made here
		// (adding a member, an import) goes: they can no longer act here.
		tokens, err := userTokens(tx, userID, func(*data.APIKeyRecord) bool { return true })
		if err != nil {
			return err
		}
		if err := tx.DeleteMember(workspaceID, userID); err != nil {
			return err
		}
		cut := newKeptCut()
		removedAt := s.timeNow()
		for _, k := range tokens {
			w := deleteTokenAnswersPayload{TokenID: k.ID}
			if k.WorkspaceID != workspaceID {
				w.WorkspaceID, w.Before = workspaceID, &removedAt
			}
			if err := cut.take(tx, w, workspaceID); err != nil {
				return err
			}
		}
		if err := cut.queue(s.base, tx); err != nil {
			return err
		}
		_, err = s.record(ctx, tx, data.EventWorkspaceUserRemoved, workspaceID, current)
		return err
	})
}

// Membership implements data.WorkspaceUserService.
func (s *WorkspaceUserService) Membership(ctx context.Context, workspaceID, userID string) (*data.Membership, error) {
	var out *data.Membership
	err := s.store.View(ctx, func(tx Tx) error {
		m, err := loadMember(tx, workspaceID, userID)
		if err != nil {
			return err
		}
		rev, err := tx.MemberRevision(workspaceID, userID)
		out = &data.Membership{Role: m.Role, Modules: data.EffectiveModules(m.Role, m.Modules), AgentIDs: m.AgentIDs, Revision: rev}
		return err
	})
	return out, err
}
