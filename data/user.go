package data

import "context"

// User is an account. Passwords never leave storage.
type User struct {
	ID                  string `json:"id"`
	Name                string `json:"name"`
	Email               string `json:"email"`
	IsAdmin             bool   `json:"is_admin"`
	PersonalWorkspaceID string `json:"personal_workspace_id"`
	// CurrentWorkspaceID is the workspace of the token that asked (GET /api/v1/user).
	CurrentWorkspaceID string `json:"current_workspace_id,omitempty"`
	CreatedAt          Time   `json:"created_at"`
	UpdatedAt          Time   `json:"updated_at"`
}

// UserCreate is the body of POST /api/v1/users and of `voiceapi user create`.
type UserCreate struct {
	Name     string `json:"name"`
	Email    string `json:"email"`
	Password string `json:"password"`
	IsAdmin  bool   `json:"is_admin"`
}

// UserUpdate is the body of PUT /api/v1/user: a new password needs the current one.
type UserUpdate struct {
	Name            Opt[string] `json:"name"`
	Email           Opt[string] `json:"email"`
	Password        Opt[string] `json:"password"`
	CurrentPassword Opt[string] `json:"current_password"`
}

// UserService manages accounts.
type UserService interface {
	// Me returns the caller. Errors: unauthenticated.
	Me(ctx context.Context) (*User, error)
	// UpdateMe changes the caller's profile. Errors: validation_failed (also a wrong
	// current_password), conflict (email taken).
	UpdateMe(ctx context.Context, u UserUpdate) (*User, error)
	// ListUsers lists every account, newest first (instance admins).
	ListUsers(ctx context.Context, p PageRequest) ([]*User, Page, error)
	// CreateUser makes an account and its personal workspace, which the user owns.
	// Errors: validation_failed, conflict (email taken).
	CreateUser(ctx context.Context, in UserCreate) (*User, error)
	// User returns one account. Errors: not_found.
	User(ctx context.Context, id string) (*User, error)
	// DeleteUser removes an account, its tokens, its memberships and its personal
	// workspace. Errors: not_found, validation_failed (the caller's own account, the
	// instance's last administrator, the last owner of another workspace).
	DeleteUser(ctx context.Context, id string) error
	// CountUsers returns how many accounts exist (first-run bootstrap).
	CountUsers(ctx context.Context) (int, error)
}

// DeletesOwnAccount tells whether p, deleting the account userID, would delete its own:
// an instance administrator may not (another administrator may), so that no slip leaves
// an instance without the account that runs it. The service refuses it (OwnAccountKept);
// the console offers no such delete.
func DeletesOwnAccount(p *Principal, userID string) bool { return p != nil && p.UserID == userID }

// OwnAccountKept is the refusal of what DeletesOwnAccount tells.
const OwnAccountKept = "You cannot delete your own account; another instance administrator can."

// UserRecord is an account as stored: the user and the bcrypt hash of its password.
type UserRecord struct {
	User
	PasswordHash []byte `json:"password_hash"`
}
