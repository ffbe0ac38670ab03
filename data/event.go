package data

import "encoding/json"

// Event types (conventions §11), plus the membership and workspace changes the audit log
// needs.
const (
	EventAgentCreated           = "agent.created"
	EventAgentUpdated           = "agent.updated"
	EventAgentDeleted           = "agent.deleted"
	EventAgentPublished         = "agent.published"
	EventAgentRestored          = "agent.restored"
	EventAgentVersionDeleted    = "agent.version_deleted"
	EventKnowledgeBaseCreated   = "knowledge_base.created"
	EventKnowledgeBaseUpdated   = "knowledge_base.updated"
	EventKnowledgeBaseDeleted   = "knowledge_base.deleted"
	EventKnowledgeSourceIndexed = "knowledge_base.source_indexed"
	EventKnowledgeSourceFailed  = "knowledge_base.source_failed"
	EventNumberCreated          = "number.created"
	EventNumberUpdated          = "number.updated"
	EventNumberDeleted          = "number.deleted"
	EventCallRegistered         = "call.registered"
	EventCallStarted            = "call.started"
	EventCallEnded              = "call.ended"
	EventCallAnalyzed           = "call.analyzed"
	EventCallAnalysisFailed     = "call.analysis_failed"
	EventJobFailed              = "job.failed"
	EventWebhookTest            = "webhook.test"
	EventWorkspaceUpdated       = "workspace.updated"
	EventWorkspaceUserAdded     = "member.added"
	EventWorkspaceUserUpdated   = "member.updated"
	EventWorkspaceUserRemoved   = "member.removed"

	// Security events (conventions §20): who made keys, members, webhooks, logins.
	EventAPIKeyCreated        = "api_key.created"
	EventAPIKeyRevoked        = "api_key.revoked"
	EventWebhookCreated       = "webhook.created"
	EventWebhookUpdated       = "webhook.updated"
	EventWebhookDeleted       = "webhook.deleted"
	EventWebhookSecretRotated = "webhook.secret_rotated"
	EventUserLogin            = "user.login"
	EventUserLoginFailed      = "user.login_failed"
	EventUserPasswordChanged  = "user.password_changed"
	EventSubscriptionUpdated  = "subscription.updated"
	EventWorkspaceExported    = "workspace.exported"
	EventWorkspaceImported    = "workspace.imported"
	EventBackupDownloaded     = "backup.downloaded"
	EventPriceTableUpdated    = "price_table.updated"
)

// EventTypes lists every event type, for validating webhook subscriptions.
var EventTypes = []string{
	EventAgentCreated, EventAgentUpdated, EventAgentDeleted, EventAgentPublished, EventAgentRestored,
	EventAgentVersionDeleted,
	EventKnowledgeBaseCreated, EventKnowledgeBaseUpdated, EventKnowledgeBaseDeleted,
	EventKnowledgeSourceIndexed, EventKnowledgeSourceFailed,
	EventNumberCreated, EventNumberUpdated, EventNumberDeleted,
	EventCallRegistered, EventCallStarted, EventCallEnded, EventCallAnalyzed, EventCallAnalysisFailed,
	EventWebhookTest,
	EventWorkspaceUpdated, EventWorkspaceUserAdded, EventWorkspaceUserUpdated, EventWorkspaceUserRemoved,
	EventAPIKeyCreated, EventAPIKeyRevoked,
	EventWebhookCreated, EventWebhookUpdated, EventWebhookDeleted, EventWebhookSecretRotated,
	EventUserLogin, EventUserLoginFailed, EventUserPasswordChanged, EventSubscriptionUpdated,
	EventWorkspaceExported, EventWorkspaceImported, EventBackupDownloaded,
	EventRetentionSwept, EventPriceTableUpdated,
	EventAgentTestCreated, EventAgentTestUpdated, EventAgentTestDeleted, EventAgentPublishedUntested,
	EventTestRunQueued, EventTestRunStarted, EventTestRunProgress, EventTestRunCompleted,
	EventRolloutUpdated, EventRolloutEnded, EventRolloutRolledBack,
	EventCampaignCreated, EventCampaignStarted, EventCampaignPaused, EventCampaignResumed, EventCampaignCanceled,
	EventCampaignCompleted, EventCampaignDeleted,
	EventJobFailed,
}

// Actor is who caused an event: a user through a token, or the system.
type Actor struct {
	Type    string `json:"type"` // "user", "client" (unauthenticated, e.g. a failed login) or "system"
	UserID  string `json:"user_id,omitempty"`
	TokenID int64  `json:"token_id,omitempty"`
	// Address is the client's address (behind a trusted proxy, the one it forwarded).
	Address string `json:"address,omitempty"`
}

// Event is one change worth telling (conventions §11). Events of a workspace form a hash
// chain: Hash covers the event with PrevHash, so an edit or a gap is detectable (§17).
type Event struct {
	ID          string          `json:"id"`
	Type        string          `json:"type"`
	CreatedAt   Time            `json:"created_at"`
	WorkspaceID string          `json:"workspace_id"`
	Actor       Actor           `json:"actor"`
	Data        json.RawMessage `json:"data"`
	PrevHash    string          `json:"prev_hash"`
	Hash        string          `json:"hash"`
	// AgentID is the agent the event is about ("" for none), which the service computes
	// when it records the event so that storage can list events by agent (a limited
	// caller's audit page walks only its agents'). Neither shown nor hashed: it is not
	// part of the event's content, and an event read back need not carry it.
	AgentID string `json:"-"`
	// Kind is, for an event whose type alone does not say who reads it, the kind of the
	// record it is about that does ("" for none): a job.failed's job kind, whose module's
	// readers read it. The service computes it beside AgentID so that storage lists
	// events by it too (a caller who reads some job kinds walks only theirs); neither
	// shown nor hashed.
	Kind string `json:"-"`
}
