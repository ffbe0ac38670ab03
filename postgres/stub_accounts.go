package postgres

// Placeholders until the accounts tables are written: this file goes when they come.

import (
	"context"
	"io"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

var (
	_ = context.Background
	_ io.Reader
	_ time.Time
	_ data.Event
	_ service.EventFilter
)

func (t *tx) User(id string) (*data.UserRecord, error)           { panic("postgres: not written yet") }
func (t *tx) UserByEmail(email string) (*data.UserRecord, error) { panic("postgres: not written yet") }
func (t *tx) PutUser(u *data.UserRecord) error                   { panic("postgres: not written yet") }
func (t *tx) DeleteUser(id string) error                         { panic("postgres: not written yet") }
func (t *tx) UserPage(req data.PageRequest) ([]*data.UserRecord, data.Page, error) {
	panic("postgres: not written yet")
}
func (t *tx) CountUsers() (int, error)                           { panic("postgres: not written yet") }
func (t *tx) UserRevision(id string) (uint64, error)             { panic("postgres: not written yet") }
func (t *tx) Workspace(id string) (*data.WorkspaceRecord, error) { panic("postgres: not written yet") }
func (t *tx) PutWorkspace(w *data.WorkspaceRecord) error         { panic("postgres: not written yet") }
func (t *tx) DeleteWorkspace(id string) error                    { panic("postgres: not written yet") }
func (t *tx) WorkspacePage(userID string, req data.PageRequest) ([]*data.WorkspaceRecord, data.Page, error) {
	panic("postgres: not written yet")
}
func (t *tx) AllWorkspaces() ([]*data.WorkspaceRecord, error) { panic("postgres: not written yet") }
func (t *tx) Member(workspaceID, userID string) (*data.MemberRecord, error) {
	panic("postgres: not written yet")
}
func (t *tx) PutMember(m *data.MemberRecord) error          { panic("postgres: not written yet") }
func (t *tx) DeleteMember(workspaceID, userID string) error { panic("postgres: not written yet") }
func (t *tx) MemberPage(workspaceID string, req data.PageRequest) ([]*data.MemberRecord, data.Page, error) {
	panic("postgres: not written yet")
}
func (t *tx) Members(workspaceID string) ([]*data.MemberRecord, error) {
	panic("postgres: not written yet")
}
func (t *tx) MemberWorkspaces(userID string) ([]string, error) { panic("postgres: not written yet") }
func (t *tx) MemberRevision(workspaceID, userID string) (uint64, error) {
	panic("postgres: not written yet")
}
func (t *tx) APIKey(id int64) (*data.APIKeyRecord, error) { panic("postgres: not written yet") }
func (t *tx) InsertAPIKey(k *data.APIKeyRecord) error     { panic("postgres: not written yet") }
func (t *tx) DeleteAPIKey(id int64) error                 { panic("postgres: not written yet") }
func (t *tx) APIKeyPage(userID string, req data.PageRequest) ([]*data.APIKeyRecord, data.Page, error) {
	panic("postgres: not written yet")
}
func (t *tx) WorkspaceAPIKeyPage(workspaceID string, req data.PageRequest) ([]*data.APIKeyRecord, data.Page, error) {
	panic("postgres: not written yet")
}
func (t *tx) UserTokens(userID, kind string) ([]*data.APIKeyRecord, error) {
	panic("postgres: not written yet")
}
func (t *tx) APIKeyRevision(id int64) (uint64, error) { panic("postgres: not written yet") }
func (t *tx) AgentInWorkspace(workspaceID, agentID string) (bool, error) {
	panic("postgres: not written yet")
}
func (t *tx) IdempotentResponse(tokenID int64, key string) (*data.IdempotentResponse, error) {
	panic("postgres: not written yet")
}
func (t *tx) PutIdempotentResponse(tokenID int64, key string, r *data.IdempotentResponse) error {
	panic("postgres: not written yet")
}
func (t *tx) DeleteIdempotentResponsesBefore(before time.Time) (int, error) {
	panic("postgres: not written yet")
}
func (t *tx) PutSubscriptionPlan(workspaceID string, p *data.SubscriptionPlan) error {
	panic("postgres: not written yet")
}
func (t *tx) WorkspaceExists(workspaceID string) (bool, error) { panic("postgres: not written yet") }
func (t *tx) SubscriptionPlan(workspaceID string) (*data.SubscriptionPlan, error) {
	panic("postgres: not written yet")
}
func (t *tx) CountUpTo(kind, workspaceID string, upTo int64) (int64, error) {
	panic("postgres: not written yet")
}

type toucher struct{}

func newToucher(db *DB) *toucher { return &toucher{} }
func (tk *toucher) stop()        {}

// MarkAPIKeyUsed implements service.KeyUseRecorder.
func (db *DB) MarkAPIKeyUsed(id int64, at time.Time) {}
