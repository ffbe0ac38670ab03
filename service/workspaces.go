package service

import (
	"context"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/validate"
)

// WorkspaceService manages workspaces.
type WorkspaceService struct{ *base }

var _ data.WorkspaceService = (*WorkspaceService)(nil)

// memberWorkspace loads a workspace the caller is a member of; to anyone else it is not
// found, so that its existence does not leak.
func memberWorkspace(ctx context.Context, tx Tx, id string) (*data.WorkspaceRecord, error) {
	if p := data.PrincipalFrom(ctx); p != nil {
		m, err := tx.Member(id, p.UserID)
		if err != nil {
			return nil, err
		}
		if m == nil {
			return nil, data.NotFound("Workspace")
		}
	}
	w, err := tx.Workspace(id)
	if err == nil && w == nil {
		err = data.NotFound("Workspace")
	}
	return w, err
}

// insertWorkspace creates a workspace with ownerID as its owner.
func (b *base) insertWorkspace(tx Tx, ownerID string, in data.WorkspaceCreate, personalOf string) (*data.Workspace, error) {
	now := b.timeNow()
	w := &data.WorkspaceRecord{Workspace: data.Workspace{
		ID: b.ids.New(data.PrefixWorkspace), Name: in.Name, Description: in.Description,
		CreatedAt: now, UpdatedAt: now,
	}, PersonalOf: personalOf}
	if err := tx.PutWorkspace(w); err != nil {
		return nil, err
	}
	m := &data.MemberRecord{UserID: ownerID, WorkspaceID: w.ID, Role: data.RoleOwner, Modules: data.Modules, AgentIDs: []string{}, CreatedAt: now, UpdatedAt: now}
	if err := tx.PutMember(m); err != nil {
		return nil, err
	}
	out := w.Workspace
	out.Embeddings = out.Embeddings.Shown()
	return &out, nil
}

// ListWorkspaces implements data.WorkspaceService.
func (s *WorkspaceService) ListWorkspaces(ctx context.Context, req data.PageRequest) ([]*data.Workspace, data.Page, error) {
	p := data.PrincipalFrom(ctx)
	var list []*data.Workspace
	var page data.Page
	err := s.store.View(ctx, func(tx Tx) error {
		records, pg, err := tx.WorkspacePage(p.UserID, req)
		if err != nil {
			return err
		}
		page = pg
		list = make([]*data.Workspace, 0, len(records))
		for _, w := range records {
			pub, err := s.publicWorkspace(w)
			if err != nil {
				return err
			}
			list = append(list, pub)
		}
		return nil
	})
	return list, page, err
}

// ListAllWorkspaces lists every workspace, oldest first (the CLI).
func (s *WorkspaceService) ListAllWorkspaces(ctx context.Context) ([]*data.Workspace, error) {
	var list []*data.Workspace
	err := s.store.View(ctx, func(tx Tx) error {
		records, err := tx.AllWorkspaces()
		for _, w := range records {
			pub, err := s.publicWorkspace(w)
			if err != nil {
				return err
			}
			list = append(list, pub)
		}
		return err
	})
	return list, err
}

// CreateWorkspace implements data.WorkspaceService.
func (s *WorkspaceService) CreateWorkspace(ctx context.Context, in data.WorkspaceCreate) (*data.Workspace, error) {
	if err := checkInput(ctx, validate.WorkspaceCreate(in)); err != nil {
		return nil, err
	}
	p := data.PrincipalFrom(ctx)
	var out *data.Workspace
	err := s.store.Update(ctx, func(tx Tx) error {
		var err error
		if out, err = s.insertWorkspace(tx, p.UserID, in, ""); err == nil {
			answerClaim(ctx, out, nil)
		}
		return err
	})
	return out, err
}

// Workspace implements data.WorkspaceService.
func (s *WorkspaceService) Workspace(ctx context.Context, id string) (*data.Workspace, error) {
	var out *data.Workspace
	err := s.store.View(ctx, func(tx Tx) error {
		w, err := memberWorkspace(ctx, tx, id)
		if err == nil {
			out, err = s.publicWorkspace(w)
		}
		return err
	})
	return out, err
}

// UpdateWorkspace implements data.WorkspaceService.
func (s *WorkspaceService) UpdateWorkspace(ctx context.Context, id string, in data.WorkspaceUpdate) (*data.Workspace, error) {
	if err := checkInput(ctx, validate.WorkspaceUpdate(in, s.catalog)); err != nil {
		return nil, err
	}
	var out *data.Workspace
	err := s.store.Update(ctx, func(tx Tx) error {
		w, err := memberWorkspace(ctx, tx, id)
		if err != nil {
			return err
		}
		current, err := s.publicWorkspace(w)
		if err != nil {
			return err
		}
		if err := data.CheckIfMatch(data.IfMatch(ctx), current); err != nil {
			return err
		}
		before := storedSnapshot(w)
		if in.Simulation.Set {
			if w.Simulation, err = s.mergeSimulation(w.Simulation, in.Simulation.V); err != nil {
				return err
			}
		}
		if in.Name.Set {
			w.Name = in.Name.V
		}
		if in.Description.Set {
			w.Description = in.Description.V
		}
		if in.Privacy.Set {
			w.Privacy = in.Privacy.V.Apply(w.Privacy)
		}
		reembed := false
		if in.Embeddings.Set {
			if reembed, err = s.applyEmbeddings(tx, w, in.Embeddings.V); err != nil {
				return err
			}
		}
		if unchangedSince(before, w) {
			out = current
			return errNothingToWrite // nothing changed: no write, no event, nothing to embed again (unchanged.go)
		}
		w.UpdatedAt = s.timeNow()
		if err := tx.PutWorkspace(w); err != nil {
			return err
		}
		if reembed {
			if err := s.enqueueWorkspaceEmbeds(tx, id); err != nil {
				return err
			}
		}
		if out, err = s.publicWorkspace(w); err != nil {
			return err
		}
		_, err = s.record(ctx, tx, data.EventWorkspaceUpdated, id, out)
		return err
	})
	return out, err
}

// DeleteWorkspace implements data.WorkspaceService.
func (s *WorkspaceService) DeleteWorkspace(ctx context.Context, id string) error {
	return s.store.Update(ctx, func(tx Tx) error {
		w, err := memberWorkspace(ctx, tx, id)
		if err != nil {
			return err
		}
		current, err := s.publicWorkspace(w)
		if err != nil {
			return err
		}
		if err := data.CheckIfMatch(data.IfMatch(ctx), current); err != nil {
			return err
		}
		if p := data.PrincipalFrom(ctx); p != nil {
			if err := refuseUnlessOwner(tx, p, id, "Only an owner can delete the workspace."); err != nil {
				return err
			}
		}
		if w.PersonalOf != "" {
			return data.FieldError("workspace_id", "A personal workspace cannot be deleted; it goes with its user.")
		}
		tx.OnCommit(func() { s.kbIndexes.dropWorkspace(id) })
		cut := newKeptCut()
		if err := s.deleteWorkspace(tx, id, cut); err != nil {
			return err
		}
		return cut.queue(s.base, tx)
	})
}
