package data

import "context"

// APIKey is a personal access token as the spec shows it: the secret is never in it.
type APIKey struct {
	ID         int64   `json:"id"`
	Name       string  `json:"name"`
	Token      *string `json:"token"` // always null: the token is returned once, top-level
	CreatedAt  Time    `json:"created_at"`
	ExpiresAt  *Time   `json:"expires_at"`
	LastUsedAt *Time   `json:"last_used_at"`
	// Scopes limit the key (see Scopes); null for a key with its user's full rights.
	Scopes []string `json:"scopes"`
	// AgentIDs narrow the key to some agents of its user's; [] for no narrowing.
	AgentIDs []string `json:"agent_ids"`
}

// Public returns the key as responses show it: agent_ids [] rather than null (keys made
// before agent_ids existed have none stored).
func (k APIKey) Public() *APIKey {
	if k.AgentIDs == nil {
		k.AgentIDs = []string{}
	}
	return &k
}

// APIKeyCreate is the body of POST /api/v1/api-keys.
type APIKeyCreate struct {
	Name       string  `json:"name"`
	Expiration *string `json:"expiration"` // YYYY-MM-DD, a future date
	// Scopes limit the key; absent or null for its user's full rights, or for a key made
	// by a key with scopes, that key's scopes.
	Scopes []string `json:"scopes"`
	// AgentIDs narrow the key to some of its user's agents; absent, null or [] for all, or
	// for a key made by a key with agent_ids, absent or null for that key's agents.
	AgentIDs []string `json:"agent_ids"`
}

// WorkspaceAPIKey is an API key as a workspace's owners and admins see it: with its user.
type WorkspaceAPIKey struct {
	APIKey
	UserID string `json:"user_id"`
}

// AuthService issues, checks and revokes tokens.
type AuthService interface {
	// Login checks credentials and returns a login token bound to workspaceID (the
	// personal workspace when nil). Errors: validation_failed on email, alike for every
	// failure so that nothing is enumerable; validation_failed on workspace_id for an
	// empty one, which can name no workspace.
	Login(ctx context.Context, email, password string, workspaceID *string) (*APIKey, string, error)
	// Authenticate resolves a bearer token to its principal, with the membership of the
	// token's workspace. Errors: unauthenticated.
	Authenticate(ctx context.Context, token string) (*Principal, error)
	// Logout revokes the calling token.
	Logout(ctx context.Context) error
	// CreateAPIKey makes a token for the caller in the caller's current workspace. A key
	// with scopes or agent_ids makes keys within its own: omitted ones are inherited.
	// Errors: validation_failed, forbidden (a scope or agent the calling token lacks).
	CreateAPIKey(ctx context.Context, in APIKeyCreate) (*APIKey, string, error)
	// ListAPIKeys lists the caller's own API keys, newest first.
	ListAPIKeys(ctx context.Context, p PageRequest) ([]*APIKey, Page, error)
	// DeleteAPIKey revokes one of the caller's keys. Errors: not_found, precondition_failed.
	DeleteAPIKey(ctx context.Context, id int64) error
	// ListWorkspaceAPIKeys lists the API keys of every member bound to the workspace,
	// newest first (owners and admins). Errors: not_found.
	ListWorkspaceAPIKeys(ctx context.Context, workspaceID string, p PageRequest) ([]*WorkspaceAPIKey, Page, error)
	// RevokeWorkspaceAPIKey revokes an API key bound to the workspace. Errors: not_found,
	// forbidden (an admin revoking an owner's key), precondition_failed.
	RevokeWorkspaceAPIKey(ctx context.Context, workspaceID string, id int64) error
}

// Token kinds: API keys are listed and managed; login tokens come from /auth/login.
const (
	TokenAPIKey = "api_key"
	TokenLogin  = "login"
)

// APIKeyRecord is a token as stored: its owner, the workspace it is bound to, its kind and
// only the SHA-256 of its secret.
type APIKeyRecord struct {
	APIKey
	UserID      string `json:"user_id"`
	WorkspaceID string `json:"workspace_id"`
	Kind        string `json:"kind"`
	SecretHash  []byte `json:"secret_hash"`
}

// LoginRequest is the body of POST /api/v1/auth/login.
type LoginRequest struct {
	Email    string `json:"email"`
	Password string `json:"password"`
	// WorkspaceID is the workspace the token acts in; absent or null for the personal one.
	WorkspaceID *string `json:"workspace_id"`
}

// MaxIdempotencyKey bounds the Idempotency-Key header (conventions §17).
const MaxIdempotencyKey = 255
