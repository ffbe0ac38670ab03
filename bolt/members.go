package bolt

import (
	"context"
	"slices"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/validate"
)

var _ data.WorkspaceUserService = (*DB)(nil)

// memberRow is a membership as stored under "<workspace>\x00<user>".
type memberRow struct {
	UserID      string    `json:"user_id"`
	WorkspaceID string    `json:"workspace_id"`
	Role        string    `json:"role"`
	Modules     []string  `json:"modules"`
	AgentIDs    []string  `json:"agent_ids"`
	CreatedAt   data.Time `json:"created_at"`
	UpdatedAt   data.Time `json:"updated_at"`
}

func memberKey(workspaceID, userID string) []byte { return indexKey(workspaceID, userID) }

func putMember(tx *bbolt.Tx, m *memberRow) error {
	if err := putJSON(tx.Bucket(bucketMembers), memberKey(m.WorkspaceID, m.UserID), m); err != nil {
		return err
	}
	return indexPut(tx.Bucket(bucketMemberships), m.UserID, m.WorkspaceID)
}

func loadMember(tx *bbolt.Tx, workspaceID, userID string) (*memberRow, error) {
	var m memberRow
	found, err := getJSON(tx.Bucket(bucketMembers), memberKey(workspaceID, userID), &m)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, data.NotFound("Workspace user")
	}
	return &m, nil
}

func deleteMember(tx *bbolt.Tx, workspaceID, userID string) error {
	if err := tx.Bucket(bucketMembers).Delete(memberKey(workspaceID, userID)); err != nil {
		return err
	}
	return indexDelete(tx.Bucket(bucketMemberships), userID, workspaceID)
}

func countOwners(tx *bbolt.Tx, workspaceID string) int {
	n := 0
	b := tx.Bucket(bucketMembers)
	for _, userID := range scopeIDs(b, workspaceID) {
		var m memberRow
		if found, _ := getJSON(b, memberKey(workspaceID, userID), &m); found && m.Role == data.RoleOwner {
			n++
		}
	}
	return n
}

// agentInWorkspace reports whether agentID is an agent of workspaceID.
func agentInWorkspace(tx *bbolt.Tx, workspaceID, agentID string) bool {
	return inWorkspace(tx.Bucket(bucketAgents), workspaceID, agentID)
}

// knowledgeBaseInWorkspace reports whether kbID is a knowledge base of workspaceID.
func knowledgeBaseInWorkspace(tx *bbolt.Tx, workspaceID, kbID string) bool {
	return inWorkspace(tx.Bucket(bucketKnowledgeBase), workspaceID, kbID)
}

// inWorkspace reports whether the record id in b belongs to workspaceID: every
// workspace-scoped record stores its "workspace_id".
func inWorkspace(b *bbolt.Bucket, workspaceID, id string) bool {
	var rec struct {
		WorkspaceID string `json:"workspace_id"`
	}
	found, err := getJSON(b, []byte(id), &rec)
	return err == nil && found && rec.WorkspaceID == workspaceID
}

// removeAgentFromMembers drops a deleted agent from every member's agent_ids. A member
// whose list becomes empty would gain every agent, so such a member gets data.NoAgent.
func removeAgentFromMembers(tx *bbolt.Tx, workspaceID, agentID string) error {
	b := tx.Bucket(bucketMembers)
	for _, userID := range scopeIDs(b, workspaceID) {
		m, err := loadMember(tx, workspaceID, userID)
		if err != nil {
			return err
		}
		i := slices.Index(m.AgentIDs, agentID)
		if i < 0 {
			continue
		}
		m.AgentIDs = slices.Delete(m.AgentIDs, i, i+1)
		if len(m.AgentIDs) == 0 {
			m.AgentIDs = []string{data.NoAgent}
		}
		if err := putJSON(b, memberKey(workspaceID, userID), m); err != nil {
			return err
		}
	}
	return nil
}

func (db *DB) workspaceUser(tx *bbolt.Tx, m *memberRow) (*data.WorkspaceUser, error) {
	u, err := loadUser(tx, m.UserID)
	if err != nil {
		return nil, err
	}
	role := m.Role
	return &data.WorkspaceUser{
		ID: u.ID, Name: u.Name, Email: u.Email, Role: &role, IsOwner: m.Role == data.RoleOwner,
		Modules: data.EffectiveModules(m.Role, m.Modules), AgentIDs: m.AgentIDs,
	}, nil
}

// ListWorkspaceUsers implements data.WorkspaceUserService.
func (db *DB) ListWorkspaceUsers(ctx context.Context, workspaceID string, req data.PageRequest) ([]*data.WorkspaceUser, data.Page, error) {
	var list []*data.WorkspaceUser
	var page data.Page
	err := db.view(func(tx *bbolt.Tx) error {
		if _, err := memberWorkspace(ctx, tx, workspaceID); err != nil {
			return err
		}
		ids, pg, err := db.page(tx, bucketMembers, workspaceID, req)
		if err != nil {
			return err
		}
		page = pg
		list = make([]*data.WorkspaceUser, 0, len(ids))
		for _, userID := range ids {
			m, err := loadMember(tx, workspaceID, userID)
			if err != nil {
				return err
			}
			wu, err := db.workspaceUser(tx, m)
			if err != nil {
				return err
			}
			list = append(list, wu)
		}
		return nil
	})
	return list, page, err
}

// checkAgentIDs reports agent_ids that are not agents of the workspace.
func checkAgentIDs(tx *bbolt.Tx, workspaceID string, ids []string) error {
	var errs validate.Errors
	for i, id := range ids {
		if id != data.NoAgent && !agentInWorkspace(tx, workspaceID, id) {
			p := validate.Index("agent_ids", i)
			errs.Addf(p, "The %s field must be an agent of this workspace.", p)
		}
	}
	return errs.Err()
}

// AddWorkspaceUser implements data.WorkspaceUserService.
func (db *DB) AddWorkspaceUser(ctx context.Context, workspaceID string, in data.WorkspaceUserAdd) (*data.WorkspaceUser, error) {
	if err := validate.WorkspaceUserAdd(in); err != nil {
		return nil, err
	}
	p := data.PrincipalFrom(ctx)
	var wu *data.WorkspaceUser
	err := db.update(func(tx *bbolt.Tx) error {
		if _, err := memberWorkspace(ctx, tx, workspaceID); err != nil {
			return err
		}
		if in.Role == data.RoleOwner && p.Role != data.RoleOwner {
			return data.Errorf(data.EFORBIDDEN, "Only an owner can grant the owner role.")
		}
		if _, err := loadUser(tx, in.ID); err != nil {
			return data.FieldError("id", "The id field must be the id of an existing user.")
		}
		if tx.Bucket(bucketMembers).Get(memberKey(workspaceID, in.ID)) != nil {
			return data.Errorf(data.ECONFLICT, "The user is already a member of this workspace.")
		}
		m := &memberRow{UserID: in.ID, WorkspaceID: workspaceID, Role: in.Role, Modules: data.Modules, AgentIDs: []string{}}
		if in.Modules.Set {
			m.Modules = in.Modules.V
		}
		if in.AgentIDs.Set {
			m.AgentIDs = in.AgentIDs.V
			if err := checkAgentIDs(tx, workspaceID, m.AgentIDs); err != nil {
				return err
			}
		}
		if err := db.checkQuota(tx, workspaceID, quotaWorkspaceUsers); err != nil {
			return err
		}
		m.CreatedAt, m.UpdatedAt = db.timeNow(), db.timeNow()
		if err := putMember(tx, m); err != nil {
			return err
		}
		var err error
		if wu, err = db.workspaceUser(tx, m); err != nil {
			return err
		}
		_, err = db.recordEvent(ctx, tx, data.EventWorkspaceUserAdded, workspaceID, wu)
		return err
	})
	return wu, err
}

// WorkspaceUser implements data.WorkspaceUserService.
func (db *DB) WorkspaceUser(ctx context.Context, workspaceID, userID string) (*data.WorkspaceUser, error) {
	var wu *data.WorkspaceUser
	err := db.view(func(tx *bbolt.Tx) error {
		if _, err := memberWorkspace(ctx, tx, workspaceID); err != nil {
			return err
		}
		m, err := loadMember(tx, workspaceID, userID)
		if err != nil {
			return err
		}
		wu, err = db.workspaceUser(tx, m)
		return err
	})
	return wu, err
}

// loadMemberForChange loads a member about to change, with its workspace and its record
// as the caller last saw it, refusing a stale If-Match.
func (db *DB) loadMemberForChange(ctx context.Context, tx *bbolt.Tx, workspaceID, userID string) (*workspaceRow, *memberRow, *data.WorkspaceUser, error) {
	ws, err := memberWorkspace(ctx, tx, workspaceID)
	if err != nil {
		return nil, nil, nil, err
	}
	m, err := loadMember(tx, workspaceID, userID)
	if err != nil {
		return nil, nil, nil, err
	}
	current, err := db.workspaceUser(tx, m)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := data.CheckIfMatch(data.IfMatch(ctx), current); err != nil {
		return nil, nil, nil, err
	}
	return ws, m, current, nil
}

// guardOwner refuses what only owners may do to owners, and leaving a workspace ownerless.
func guardOwner(tx *bbolt.Tx, p *data.Principal, m *memberRow, newRole string, removing bool) error {
	touchesOwner := m.Role == data.RoleOwner || newRole == data.RoleOwner
	if touchesOwner && p.Role != data.RoleOwner {
		return data.Errorf(data.EFORBIDDEN, "Only an owner can grant, change or remove an owner.")
	}
	if m.Role == data.RoleOwner && (removing || newRole != data.RoleOwner) && countOwners(tx, m.WorkspaceID) == 1 {
		field := "role"
		if removing {
			field = "id"
		}
		return data.FieldError(field, "A workspace must keep an owner: make another member an owner first.")
	}
	return nil
}

// UpdateWorkspaceUser implements data.WorkspaceUserService.
func (db *DB) UpdateWorkspaceUser(ctx context.Context, workspaceID, userID string, in data.WorkspaceUserUpdate) (*data.WorkspaceUser, error) {
	if err := validate.WorkspaceUserUpdate(in); err != nil {
		return nil, err
	}
	p := data.PrincipalFrom(ctx)
	var wu *data.WorkspaceUser
	err := db.update(func(tx *bbolt.Tx) error {
		_, m, _, err := db.loadMemberForChange(ctx, tx, workspaceID, userID)
		if err != nil {
			return err
		}
		newRole := m.Role
		if in.Role.Set {
			newRole = in.Role.V
		}
		if err := guardOwner(tx, p, m, newRole, false); err != nil {
			return err
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
		m.UpdatedAt = db.timeNow()
		if err := putMember(tx, m); err != nil {
			return err
		}
		if wu, err = db.workspaceUser(tx, m); err != nil {
			return err
		}
		_, err = db.recordEvent(ctx, tx, data.EventWorkspaceUserUpdated, workspaceID, wu)
		return err
	})
	return wu, err
}

// RemoveWorkspaceUser implements data.WorkspaceUserService.
func (db *DB) RemoveWorkspaceUser(ctx context.Context, workspaceID, userID string) error {
	p := data.PrincipalFrom(ctx)
	return db.update(func(tx *bbolt.Tx) error {
		ws, m, current, err := db.loadMemberForChange(ctx, tx, workspaceID, userID)
		if err != nil {
			return err
		}
		if ws.PersonalOf == userID {
			return data.FieldError("id", "A user cannot be removed from their personal workspace.")
		}
		if err := guardOwner(tx, p, m, "", true); err != nil {
			return err
		}
		if err := deleteMember(tx, workspaceID, userID); err != nil {
			return err
		}
		// Tokens bound to this workspace would only fail from now on: revoke them.
		if err := deleteWorkspaceTokens(tx, workspaceID, func(r *apiKeyRow) bool { return r.UserID == userID }); err != nil {
			return err
		}
		_, err = db.recordEvent(ctx, tx, data.EventWorkspaceUserRemoved, workspaceID, current)
		return err
	})
}

// Membership implements data.WorkspaceUserService.
func (db *DB) Membership(ctx context.Context, workspaceID, userID string) (*data.Membership, error) {
	var out *data.Membership
	err := db.view(func(tx *bbolt.Tx) error {
		m, err := loadMember(tx, workspaceID, userID)
		if err != nil {
			return err
		}
		out = &data.Membership{Role: m.Role, Modules: data.EffectiveModules(m.Role, m.Modules), AgentIDs: m.AgentIDs}
		return nil
	})
	return out, err
}
