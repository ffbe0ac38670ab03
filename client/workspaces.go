package client

import (
	"context"
	"fmt"
	"iter"
	"net/url"
	"strconv"

	"github.com/voiceapi/voiceapi/data"
)

// WorkspacesService calls the workspace, workspace user, export and import routes.
type WorkspacesService struct{ c *Client }

// List returns one page of the caller's workspaces.
func (s *WorkspacesService) List(ctx context.Context, p data.PageRequest, opts ...RequestOption) ([]*data.Workspace, data.Page, error) {
	res, err := s.c.do(ctx, request{op: "workspaceList", query: pageQuery(nil, p), opts: opts})
	if err != nil {
		return nil, data.Page{}, err
	}
	return list[data.Workspace](res)
}

// All iterates over every workspace of the caller.
func (s *WorkspacesService) All(ctx context.Context, opts ...RequestOption) iter.Seq2[*data.Workspace, error] {
	return all(ctx, s.c, func(ctx context.Context, p data.PageRequest) ([]*data.Workspace, data.Page, error) {
		return s.List(ctx, p, opts...)
	})
}

// Create makes a workspace that the caller owns.
func (s *WorkspacesService) Create(ctx context.Context, in data.WorkspaceCreate, opts ...RequestOption) (*data.Workspace, string, error) {
	return sendRecord[data.Workspace](ctx, s.c, "workspaceCreate", nil, in, opts)
}

// Get returns a workspace.
func (s *WorkspacesService) Get(ctx context.Context, id string, opts ...RequestOption) (*data.Workspace, string, error) {
	return getRecord[data.Workspace](ctx, s.c, "workspaceShow", []string{id}, opts)
}

// Update changes a workspace's set fields.
func (s *WorkspacesService) Update(ctx context.Context, id string, in data.WorkspaceUpdate, opts ...RequestOption) (*data.Workspace, string, error) {
	return sendRecord[data.Workspace](ctx, s.c, "workspaceUpdate", []string{id}, in, opts)
}

// Delete removes a workspace and every record in it.
func (s *WorkspacesService) Delete(ctx context.Context, id string, opts ...RequestOption) error {
	return s.c.noContent(ctx, "workspaceDelete", []string{id}, nil, opts)
}

// Export returns the workspace as one document; credentials are masked unless
// includeSecrets.
func (s *WorkspacesService) Export(ctx context.Context, id string, includeSecrets bool, opts ...RequestOption) (*data.WorkspaceExport, error) {
	q := url.Values{}
	if includeSecrets {
		q.Set("include_secrets", "true")
	}
	res, err := s.c.do(ctx, request{op: "workspaceExport", pathArgs: []string{id}, query: q, opts: opts})
	if err != nil {
		return nil, err
	}
	var doc data.WorkspaceExport
	if err := data.DecodeJSON(res.body, &doc); err != nil {
		return nil, fmt.Errorf("client: decoding the export: %w", err)
	}
	return &doc, nil
}

// Imported is what an import created, with each new webhook's signing secret.
type Imported struct {
	Result         *data.ImportResult
	WebhookSecrets []data.ImportedSecret
}

// Import creates what doc describes in the workspace, all or nothing.
func (s *WorkspacesService) Import(ctx context.Context, id string, doc *data.WorkspaceExport, opts ...RequestOption) (*Imported, error) {
	b, err := jsonBody(doc)
	if err != nil {
		return nil, err
	}
	res, err := s.c.do(ctx, request{op: "workspaceImport", pathArgs: []string{id}, body: b, contentType: "application/json", opts: opts})
	if err != nil {
		return nil, err
	}
	out := &Imported{}
	out.Result, _, err = recordWith[data.ImportResult](res, "webhook_secrets", &out.WebhookSecrets)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ListUsers returns one page of the workspace's users.
func (s *WorkspacesService) ListUsers(ctx context.Context, id string, p data.PageRequest, opts ...RequestOption) ([]*data.WorkspaceUser, data.Page, error) {
	res, err := s.c.do(ctx, request{op: "workspaceUserList", pathArgs: []string{id}, query: pageQuery(nil, p), opts: opts})
	if err != nil {
		return nil, data.Page{}, err
	}
	return list[data.WorkspaceUser](res)
}

// AllUsers iterates over every user of the workspace.
func (s *WorkspacesService) AllUsers(ctx context.Context, id string, opts ...RequestOption) iter.Seq2[*data.WorkspaceUser, error] {
	return all(ctx, s.c, func(ctx context.Context, p data.PageRequest) ([]*data.WorkspaceUser, data.Page, error) {
		return s.ListUsers(ctx, id, p, opts...)
	})
}

// AddUser adds an existing account to the workspace.
func (s *WorkspacesService) AddUser(ctx context.Context, id string, in data.WorkspaceUserAdd, opts ...RequestOption) (*data.WorkspaceUser, string, error) {
	return sendRecord[data.WorkspaceUser](ctx, s.c, "workspaceUserAdd", []string{id}, in, opts)
}

// GetUser returns one user of the workspace.
func (s *WorkspacesService) GetUser(ctx context.Context, id, userID string, opts ...RequestOption) (*data.WorkspaceUser, string, error) {
	return getRecord[data.WorkspaceUser](ctx, s.c, "workspaceUserShow", []string{id, userID}, opts)
}

// UpdateUser changes a workspace user's role, modules or agents (the set fields).
func (s *WorkspacesService) UpdateUser(ctx context.Context, id, userID string, in data.WorkspaceUserUpdate, opts ...RequestOption) (*data.WorkspaceUser, string, error) {
	return sendRecord[data.WorkspaceUser](ctx, s.c, "workspaceUserUpdate", []string{id, userID}, in, opts)
}

// RemoveUser removes a user from the workspace.
func (s *WorkspacesService) RemoveUser(ctx context.Context, id, userID string, opts ...RequestOption) error {
	return s.c.noContent(ctx, "workspaceUserRemove", []string{id, userID}, nil, opts)
}

// ListAPIKeys returns one page of the API keys bound to the workspace, every member's
// (owners and admins).
func (s *WorkspacesService) ListAPIKeys(ctx context.Context, id string, p data.PageRequest, opts ...RequestOption) ([]*data.WorkspaceAPIKey, data.Page, error) {
	res, err := s.c.do(ctx, request{op: "workspaceAPIKeyList", pathArgs: []string{id}, query: pageQuery(nil, p), opts: opts})
	if err != nil {
		return nil, data.Page{}, err
	}
	return list[data.WorkspaceAPIKey](res)
}

// AllAPIKeys iterates over every API key bound to the workspace.
func (s *WorkspacesService) AllAPIKeys(ctx context.Context, id string, opts ...RequestOption) iter.Seq2[*data.WorkspaceAPIKey, error] {
	return all(ctx, s.c, func(ctx context.Context, p data.PageRequest) ([]*data.WorkspaceAPIKey, data.Page, error) {
		return s.ListAPIKeys(ctx, id, p, opts...)
	})
}

// RevokeAPIKey revokes an API key bound to the workspace (a departing member's, say).
func (s *WorkspacesService) RevokeAPIKey(ctx context.Context, id string, keyID int64, opts ...RequestOption) error {
	return s.c.noContent(ctx, "workspaceAPIKeyRevoke", []string{id, strconv.FormatInt(keyID, 10)}, nil, opts)
}
