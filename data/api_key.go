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
}

// APIKeyCreate is the body of POST /api/v1/api-keys.
type APIKeyCreate struct {
	Name       string  `json:"name"`
	Expiration *string `json:"expiration"` // YYYY-MM-DD, a future date
}

// AuthService issues, checks and revokes tokens.
type AuthService interface {
	// Login checks credentials and returns a login token bound to workspaceID (the
	// personal workspace when empty). Errors: validation_failed on email, alike for every
	// failure so that nothing is enumerable.
	Login(ctx context.Context, email, password, workspaceID string) (*APIKey, string, error)
	// Authenticate resolves a bearer token to its principal, with the membership of the
	// token's workspace. Errors: unauthenticated.
	Authenticate(ctx context.Context, token string) (*Principal, error)
	// Logout revokes the calling token.
	Logout(ctx context.Context) error
	// CreateAPIKey makes a token for the caller in the caller's current workspace.
	// Errors: validation_failed.
	CreateAPIKey(ctx context.Context, in APIKeyCreate) (*APIKey, string, error)
	// ListAPIKeys lists the caller's own API keys, newest first.
	ListAPIKeys(ctx context.Context, p PageRequest) ([]*APIKey, Page, error)
	// DeleteAPIKey revokes one of the caller's keys. Errors: not_found, precondition_failed.
	DeleteAPIKey(ctx context.Context, id int64) error
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
