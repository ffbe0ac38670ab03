package service

import (
	"time"

	"github.com/voiceapi/voiceapi/data"
)

// AccountTx stores users, workspaces, their members, tokens and kept idempotent responses.
type AccountTx interface {
	// User returns an account by id.
	User(id string) (*data.UserRecord, error)
	// UserByEmail returns the account with that (normalized) email.
	UserByEmail(email string) (*data.UserRecord, error)
	// PutUser stores u and keeps the email index (moving u's entry when its email changed)
	// and the index of every account. The email must be free: the service checks.
	PutUser(u *data.UserRecord) error
	// DeleteUser removes an account, its index entries, its memberships and its tokens.
	DeleteUser(id string) error
	// UserPage pages every account, newest first.
	UserPage(req data.PageRequest) ([]*data.UserRecord, data.Page, error)
	// CountUsers returns how many accounts exist.
	CountUsers() (int, error)
	// UserRevision fingerprints the stored account (0 when absent), for caches.
	UserRevision(id string) (uint64, error)

	// Workspace returns a workspace by id.
	Workspace(id string) (*data.WorkspaceRecord, error)
	// PutWorkspace stores a workspace.
	PutWorkspace(w *data.WorkspaceRecord) error
	// DeleteWorkspace removes a workspace and every record in it: each resource's
	// records, its members, the tokens bound to it, its events and its chain head. What
	// was kept under Idempotency-Keys in it or under its tokens is the service's to take
	// first (DeleteWorkspaceResponses, DeleteTokenResponses), in batches.
	DeleteWorkspace(id string) error
	// WorkspacePage pages the workspaces userID is a member of, newest first.
	WorkspacePage(userID string, req data.PageRequest) ([]*data.WorkspaceRecord, data.Page, error)
	// AllWorkspaces lists every workspace, oldest first.
	AllWorkspaces() ([]*data.WorkspaceRecord, error)

	// Member returns userID's membership of workspaceID.
	Member(workspaceID, userID string) (*data.MemberRecord, error)
	// PutMember stores a membership and its entry in the user's list of workspaces.
	PutMember(m *data.MemberRecord) error
	// DeleteMember removes a membership and the tokens of that user bound to that
	// workspace (they could only fail from then on).
	DeleteMember(workspaceID, userID string) error
	// MemberPage pages a workspace's members, newest first.
	MemberPage(workspaceID string, req data.PageRequest) ([]*data.MemberRecord, data.Page, error)
	// Members lists every member of a workspace.
	Members(workspaceID string) ([]*data.MemberRecord, error)
	// MemberWorkspaces lists the ids of the workspaces userID is a member of.
	MemberWorkspaces(userID string) ([]string, error)
	// MemberRevision fingerprints the stored membership (0 when absent), for caches.
	MemberRevision(workspaceID, userID string) (uint64, error)

	// APIKey returns a token by id.
	APIKey(id int64) (*data.APIKeyRecord, error)
	// InsertAPIKey stores k under the next token id, which it sets in k.ID, indexed by
	// its user and kind and by its workspace.
	InsertAPIKey(k *data.APIKeyRecord) error
	// PutAPIKey stores k under k.ID as given, indexed like InsertAPIKey's, and makes
	// sure InsertAPIKey's next id is greater (a moved installation keeps its token ids).
	PutAPIKey(k *data.APIKeyRecord) error
	// DeleteAPIKey removes a token and its index entries.
	DeleteAPIKey(id int64) error
	// APIKeyPage pages a user's API keys (not its login tokens), newest first.
	APIKeyPage(userID string, req data.PageRequest) ([]*data.APIKeyRecord, data.Page, error)
	// WorkspaceAPIKeyPage pages the API keys (not login tokens) bound to a workspace,
	// newest first.
	WorkspaceAPIKeyPage(workspaceID string, req data.PageRequest) ([]*data.APIKeyRecord, data.Page, error)
	// UserTokens lists a user's tokens of one kind.
	UserTokens(userID, kind string) ([]*data.APIKeyRecord, error)
	// OldestTokens returns the ids of up to limit of the user's tokens of kind, oldest
	// first, leaving out its newest keep: from the user's index, reading no token.
	OldestTokens(userID, kind string, keep, limit int) ([]int64, error)
	// APIKeyRevision fingerprints the stored token (0 when absent), for caches.
	APIKeyRevision(id int64) (uint64, error)
	// DeleteExpiredTokens deletes up to limit tokens of kind (data.TokenLogin or
	// data.TokenAPIKey) that expire at or before before, earliest expiry first, with their
	// index entries, and returns them (the service deletes what they kept with them);
	// tokens without an expiry never go.
	DeleteExpiredTokens(kind string, before time.Time, limit int) ([]*data.APIKeyRecord, error)
	// LiveAPIKeys counts userID's API keys (not login tokens) bound to workspaceID that
	// have not expired at now (no expiry, or one after now), stopping at limit. The count
	// holds for the transaction: two creates racing for the last slot do not both commit.
	LiveAPIKeys(userID, workspaceID string, now time.Time, limit int) (int, error)

	// AgentInWorkspace reports whether agentID is an agent of workspaceID.
	AgentInWorkspace(workspaceID, agentID string) (bool, error)

	// IdempotentResponse returns the response kept for (tokenID, key).
	IdempotentResponse(tokenID int64, key string) (*data.IdempotentResponse, error)
	// PutIdempotentResponse keeps r for (tokenID, key).
	PutIdempotentResponse(tokenID int64, key string, r *data.IdempotentResponse) error
	// DeleteIdempotentResponsesBefore removes up to limit of the responses kept before t,
	// oldest first, and says how many: from an index by time, so a call reads about as
	// many responses as it deletes, however many are kept.
	DeleteIdempotentResponsesBefore(t time.Time, limit int) (int, error)
	// DeleteTokenResponses deletes up to limit of the responses kept under token
	// tokenID, claims too, with their entries, and says how many: the token is gone, and
	// no one can replay them.
	DeleteTokenResponses(tokenID int64, limit int) (int, error)
	// DeleteWorkspaceResponses deletes up to limit of the responses kept for requests
	// made in workspace ws (r.WorkspaceID), claims too, under token tokenID only when it
	// is not 0 (under any token when it is), kept at or before `before` only when it is
	// not zero (a member's removal: not what the member, added again, kept since), with
	// their entries, and says how many. It walks on from `from` (nil: the start), and
	// stops once it deleted limit or passed limit over (spared, or an entry it had no
	// answer for), returning where the next call goes on: nil when the walk is over,
	// empty when it passed nothing over (the next may start anywhere). So a call reads at
	// most twice limit, and a walk what it spares once, not once a batch.
	DeleteWorkspaceResponses(ws string, tokenID int64, before time.Time, from []byte, limit int) (deleted int, next []byte, err error)
	// WorkspaceTokens returns the ids of the tokens (both kinds) bound to workspace ws.
	WorkspaceTokens(ws string) ([]int64, error)
	// DeleteConversationResponses removes the responses kept for messages to conversation
	// id (r.ConversationID), under any token, and says how many.
	DeleteConversationResponses(conversationID string) (int, error)
	// ConversationStartResponses returns the responses kept for the start of
	// conversation id (r.StartedConversationID), under any token: one, seldom more.
	ConversationStartResponses(conversationID string) ([]data.KeptResponse, error)
	// AgentResponses returns up to limit of the responses kept with an answer (status
	// not 0) for the requests that acted on agent agentID (r.AgentID: its conversations'
	// starts and messages, a call's start or registration, its tests and test runs, an
	// analysis, a backfill, a campaign's create), under any token: those its delete cuts
	// to their claims. A claim is not among them.
	AgentResponses(agentID string, limit int) ([]data.KeptResponse, error)
	// StartsToNote returns up to limit of the responses the upgrade listed for workspace
	// ws (its tokens') for the job that notes a start's answer with its conversation
	// (service/idempotency_start_upgrade.go): every answer kept with status 201 before
	// starts were noted (bbolt schema 20, PostgreSQL 0031) and naming no conversation.
	// Their bodies are sealed, so which are a start's is the job's to tell. Response is
	// nil; nothing adds to the list after.
	StartsToNote(ws string, limit int) ([]data.KeptResponse, error)
	// StartNoted takes a response off its workspace's list.
	StartNoted(ws string, tokenID int64, key string) error
	// ListStartToNote lists a response as the upgrade does (tests of the job).
	ListStartToNote(ws string, tokenID int64, key string) error
}

// KeyUseRecorder takes note of API key use; a store may write it later, in batches, as
// last_used_at is informational and a write per request would cap reads at the disk's
// pace.
type KeyUseRecorder interface {
	MarkAPIKeyUsed(id int64, at time.Time)
}
