package bolt

import (
	"context"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/validate"
)

var _ data.WorkspaceService = (*DB)(nil)

// workspaceRow is a workspace as stored; PersonalOf names the user whose personal
// workspace it is.
type workspaceRow struct {
	data.Workspace
	PersonalOf string `json:"personal_of,omitempty"`
}

func loadWorkspace(tx *bbolt.Tx, id string) (*workspaceRow, error) {
	var row workspaceRow
	found, err := getJSON(tx.Bucket(bucketWorkspaces), []byte(id), &row)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, data.NotFound("Workspace")
	}
	return &row, nil
}

// memberWorkspace loads a workspace the caller is a member of; others are not found.
func memberWorkspace(ctx context.Context, tx *bbolt.Tx, id string) (*workspaceRow, error) {
	p := data.PrincipalFrom(ctx)
	if p != nil && tx.Bucket(bucketMembers).Get(memberKey(id, p.UserID)) == nil {
		return nil, data.NotFound("Workspace")
	}
	return loadWorkspace(tx, id)
}

// insertWorkspace creates a workspace with ownerID as its owner.
func (db *DB) insertWorkspace(tx *bbolt.Tx, ownerID string, in data.WorkspaceCreate, personalOf string) (*data.Workspace, error) {
	now := db.timeNow()
	row := workspaceRow{Workspace: data.Workspace{
		ID: db.ids.New(data.PrefixWorkspace), Name: in.Name, Description: in.Description,
		CreatedAt: now, UpdatedAt: now,
	}, PersonalOf: personalOf}
	if err := putJSON(tx.Bucket(bucketWorkspaces), []byte(row.ID), row); err != nil {
		return nil, err
	}
	m := &memberRow{UserID: ownerID, WorkspaceID: row.ID, Role: data.RoleOwner, Modules: data.Modules, AgentIDs: []string{}, CreatedAt: now, UpdatedAt: now}
	if err := putMember(tx, m); err != nil {
		return nil, err
	}
	ws := row.Workspace
	return &ws, nil
}

// ListWorkspaces implements data.WorkspaceService.
func (db *DB) ListWorkspaces(ctx context.Context, req data.PageRequest) ([]*data.Workspace, data.Page, error) {
	p := data.PrincipalFrom(ctx)
	var list []*data.Workspace
	var page data.Page
	err := db.view(func(tx *bbolt.Tx) error {
		ids, pg, err := db.page(tx, bucketMemberships, p.UserID, req)
		if err != nil {
			return err
		}
		page = pg
		list = make([]*data.Workspace, 0, len(ids))
		for _, id := range ids {
			row, err := loadWorkspace(tx, id)
			if err != nil {
				return err
			}
			ws := row.Workspace
			list = append(list, &ws)
		}
		return nil
	})
	return list, page, err
}

// ListAllWorkspaces lists every workspace, oldest first (the CLI).
func (db *DB) ListAllWorkspaces(ctx context.Context) ([]*data.Workspace, error) {
	var list []*data.Workspace
	err := db.view(func(tx *bbolt.Tx) error {
		return tx.Bucket(bucketWorkspaces).ForEach(func(k, v []byte) error {
			var row workspaceRow
			if err := jsonUnmarshal(v, &row); err != nil {
				return err
			}
			ws := row.Workspace
			list = append(list, &ws)
			return nil
		})
	})
	return list, err
}

// CreateWorkspace implements data.WorkspaceService.
func (db *DB) CreateWorkspace(ctx context.Context, in data.WorkspaceCreate) (*data.Workspace, error) {
	if err := validate.WorkspaceCreate(in); err != nil {
		return nil, err
	}
	p := data.PrincipalFrom(ctx)
	var ws *data.Workspace
	err := db.update(func(tx *bbolt.Tx) error {
		var err error
		ws, err = db.insertWorkspace(tx, p.UserID, in, "")
		return err
	})
	return ws, err
}

// Workspace implements data.WorkspaceService.
func (db *DB) Workspace(ctx context.Context, id string) (*data.Workspace, error) {
	var ws *data.Workspace
	err := db.view(func(tx *bbolt.Tx) error {
		row, err := memberWorkspace(ctx, tx, id)
		if err == nil {
			w := row.Workspace
			ws = &w
		}
		return err
	})
	return ws, err
}

// UpdateWorkspace implements data.WorkspaceService.
func (db *DB) UpdateWorkspace(ctx context.Context, id string, in data.WorkspaceUpdate) (*data.Workspace, error) {
	if err := validate.WorkspaceUpdate(in); err != nil {
		return nil, err
	}
	var ws *data.Workspace
	err := db.update(func(tx *bbolt.Tx) error {
		row, err := memberWorkspace(ctx, tx, id)
		if err != nil {
			return err
		}
		if err := data.CheckIfMatch(data.IfMatch(ctx), row.Workspace); err != nil {
			return err
		}
		if in.Name.Set {
			row.Name = in.Name.V
		}
		if in.Description.Set {
			row.Description = in.Description.V
		}
		row.UpdatedAt = db.timeNow()
		if err := putJSON(tx.Bucket(bucketWorkspaces), []byte(id), row); err != nil {
			return err
		}
		w := row.Workspace
		ws = &w
		_, err = db.recordEvent(ctx, tx, data.EventWorkspaceUpdated, id, ws)
		return err
	})
	return ws, err
}

// DeleteWorkspace implements data.WorkspaceService.
func (db *DB) DeleteWorkspace(ctx context.Context, id string) error {
	return db.update(func(tx *bbolt.Tx) error {
		row, err := memberWorkspace(ctx, tx, id)
		if err != nil {
			return err
		}
		if err := data.CheckIfMatch(data.IfMatch(ctx), row.Workspace); err != nil {
			return err
		}
		if row.PersonalOf != "" {
			return data.FieldError("workspace_id", "A personal workspace cannot be deleted; it goes with its user.")
		}
		return db.deleteWorkspaceTx(ctx, tx, id)
	})
}

// deleteWorkspaceTx removes a workspace and every record in it, in tx.
func (db *DB) deleteWorkspaceTx(ctx context.Context, tx *bbolt.Tx, id string) error {
	for _, cascade := range workspaceCascades {
		if err := cascade(db, tx, id); err != nil {
			return err
		}
	}
	for _, userID := range scopeIDs(tx.Bucket(bucketMembers), id) {
		if err := deleteMember(tx, id, userID); err != nil {
			return err
		}
	}
	if err := deleteWorkspaceTokens(tx, id, func(*apiKeyRow) bool { return true }); err != nil {
		return err
	}
	if err := deleteWorkspaceEvents(tx, id); err != nil {
		return err
	}
	return tx.Bucket(bucketWorkspaces).Delete([]byte(id))
}
