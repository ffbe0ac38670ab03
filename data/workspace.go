package data

import "context"

// Workspace groups a team's agents, knowledge, numbers, calls and webhooks.
type Workspace struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
	// Privacy is the workspace's retention and redaction (docs/calls.md).
	Privacy WorkspacePrivacy `json:"privacy"`
	// Embeddings is the workspace's embedding provider for knowledge bases
	// (docs/knowledge-bases.md); its api_key is masked.
	Embeddings WorkspaceEmbeddings `json:"embeddings"`
	// Simulation is the model of agent tests' simulated callers and judges (conventions
	// §22); nil: each agent's own model.
	Simulation *SimulationModel `json:"simulation"`
	CreatedAt  Time             `json:"created_at"`
	UpdatedAt  Time             `json:"updated_at"`
}

// WorkspaceCreate is the body of POST /api/v1/workspaces.
type WorkspaceCreate struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

// WorkspaceUpdate is the body of PUT /api/v1/workspaces/{workspace_id}.
type WorkspaceUpdate struct {
	Name        Opt[string]                   `json:"name"`
	Description Opt[string]                   `json:"description"`
	Privacy     Opt[WorkspacePrivacyPatch]    `json:"privacy"`
	Embeddings  Opt[WorkspaceEmbeddingsPatch] `json:"embeddings"`
	// Simulation replaces the simulation setting whole; null returns to each agent's own
	// model. An api_key sent back masked keeps the stored key.
	Simulation Opt[*SimulationModel] `json:"simulation"`
}

// WorkspaceService manages workspaces.
type WorkspaceService interface {
	// ListWorkspaces lists the caller's workspaces, newest first.
	ListWorkspaces(ctx context.Context, p PageRequest) ([]*Workspace, Page, error)
	// CreateWorkspace makes a workspace owned by the caller. Errors: validation_failed.
	CreateWorkspace(ctx context.Context, in WorkspaceCreate) (*Workspace, error)
	// Workspace returns the workspace the request acts in. Errors: not_found.
	Workspace(ctx context.Context, id string) (*Workspace, error)
	// UpdateWorkspace changes name, description, privacy or the simulation setting
	// (owners and admins). Errors: not_found,
	// validation_failed, precondition_failed.
	UpdateWorkspace(ctx context.Context, id string, in WorkspaceUpdate) (*Workspace, error)
	// DeleteWorkspace removes the workspace and every record in it. Errors: not_found,
	// validation_failed (a personal workspace), precondition_failed.
	DeleteWorkspace(ctx context.Context, id string) error
}

// WorkspaceUser is a member of a workspace as the spec shows it.
type WorkspaceUser struct {
	ID       string   `json:"id"`
	Name     string   `json:"name"`
	Email    string   `json:"email"`
	Role     *string  `json:"role"`
	IsOwner  bool     `json:"is_owner"`
	Modules  []string `json:"modules"`
	AgentIDs []string `json:"agent_ids"`
}

// WorkspaceUserAdd is the body of POST /api/v1/workspaces/{workspace_id}/users. The user
// is named by id or by email, one of the two.
type WorkspaceUserAdd struct {
	ID       string        `json:"id"`
	Email    string        `json:"email"`
	Role     string        `json:"role"`
	Modules  Opt[[]string] `json:"modules"`   // optional, not nullable: all five when absent
	AgentIDs Opt[[]string] `json:"agent_ids"` // optional, not nullable: [] when absent
}

// WorkspaceUserUpdate is the body of PUT /api/v1/workspaces/{workspace_id}/users/{user_id}.
type WorkspaceUserUpdate struct {
	Role     Opt[string]   `json:"role"`
	Modules  Opt[[]string] `json:"modules"`
	AgentIDs Opt[[]string] `json:"agent_ids"`
}

// Membership is what authorization needs of a member.
type Membership struct {
	Role     string
	Modules  []string
	AgentIDs []string
	// Revision is the membership's stored revision, read with it: the principal acting
	// in this workspace carries it for its writes' re-check (Principal.Access).
	Revision uint64
}

// WorkspaceUserService manages the members of a workspace.
type WorkspaceUserService interface {
	// ListWorkspaceUsers lists members, newest first. Errors: not_found.
	ListWorkspaceUsers(ctx context.Context, workspaceID string, p PageRequest) ([]*WorkspaceUser, Page, error)
	// AddWorkspaceUser adds a member, named by id or by email. Errors: validation_failed
	// (unknown user or agent), conflict (already a member), forbidden (an admin granting
	// owner).
	AddWorkspaceUser(ctx context.Context, workspaceID string, in WorkspaceUserAdd) (*WorkspaceUser, error)
	// WorkspaceUser returns one member. Errors: not_found.
	WorkspaceUser(ctx context.Context, workspaceID, userID string) (*WorkspaceUser, error)
	// UpdateWorkspaceUser changes role, modules or agent_ids. Errors: not_found,
	// validation_failed (demoting the last owner), forbidden, precondition_failed.
	UpdateWorkspaceUser(ctx context.Context, workspaceID, userID string, in WorkspaceUserUpdate) (*WorkspaceUser, error)
	// RemoveWorkspaceUser removes a member. Errors: not_found, validation_failed (the
	// last owner), forbidden, precondition_failed.
	RemoveWorkspaceUser(ctx context.Context, workspaceID, userID string) error
	// Membership returns userID's membership of workspaceID. Errors: not_found.
	Membership(ctx context.Context, workspaceID, userID string) (*Membership, error)
}

// WorkspaceRecord is a workspace as stored; PersonalOf names the user whose personal
// workspace it is.
type WorkspaceRecord struct {
	Workspace
	PersonalOf string `json:"personal_of,omitempty"`
	// EmbeddingsKey is the embedding provider's api_key, sealed; Embeddings.APIKey holds
	// its mask.
	EmbeddingsKey string `json:"embeddings_key,omitempty"`
}

// MemberRecord is a membership as stored.
type MemberRecord struct {
	UserID      string   `json:"user_id"`
	WorkspaceID string   `json:"workspace_id"`
	Role        string   `json:"role"`
	Modules     []string `json:"modules"`
	AgentIDs    []string `json:"agent_ids"`
	CreatedAt   Time     `json:"created_at"`
	UpdatedAt   Time     `json:"updated_at"`
}
