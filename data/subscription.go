package data

import "context"

// Limit names of a subscription (conventions §13).
const (
	LimitAgents         = "agents"
	LimitKnowledgeBases = "knowledge_bases"
	LimitNumbers        = "numbers"
	LimitWebhooks       = "webhooks"
	LimitWorkspaceUsers = "workspace_users"
	LimitCallMinutes    = "call_minutes_per_month"
	// LimitConcurrentCalls bounds the workspace's open calls (registered or ongoing) at
	// once; a call start beyond it is 429 concurrency_limit (conventions §23).
	LimitConcurrentCalls = "concurrent_calls"
	// LimitOpenConversations bounds the workspace's open conversations (active, not
	// expired); a start beyond it is 409. A plan without it leaves the server's
	// --max-open-conversations in force (docs/conversations.md#limits).
	LimitOpenConversations = "open_conversations"
)

// LimitNames lists every limit, in the order responses show them.
var LimitNames = []string{LimitAgents, LimitKnowledgeBases, LimitNumbers, LimitWebhooks, LimitWorkspaceUsers, LimitCallMinutes, LimitConcurrentCalls, LimitOpenConversations}

// DefaultPlan is the plan of a workspace nobody set one for: everything unlimited.
const DefaultPlan = "unlimited"

// Subscription is a workspace's plan, its limits (nil = unlimited; open_conversations
// the bound in force, the server's when the plan sets none) and its usage now.
type Subscription struct {
	Plan               string            `json:"plan"`
	Status             string            `json:"status"`
	Limits             map[string]*int64 `json:"limits"`
	Usage              map[string]int64  `json:"usage"`
	CurrentPeriodStart Time              `json:"current_period_start"`
	CurrentPeriodEnd   Time              `json:"current_period_end"`
}

// SubscriptionSet changes a workspace's plan (the operator's CLI). A nil limit is left as
// it is; a negative one becomes unlimited.
type SubscriptionSet struct {
	Plan   *string
	Limits map[string]int64
}

// SubscriptionService reads and sets subscriptions.
type SubscriptionService interface {
	// Subscription returns the workspace's plan with its usage counted now. Errors:
	// not_found.
	Subscription(ctx context.Context, workspaceID string) (*Subscription, error)
	// SetSubscription changes plan and limits. Errors: not_found, validation_failed.
	SetSubscription(ctx context.Context, workspaceID string, in SubscriptionSet) (*Subscription, error)
}

// SubscriptionPlan is a workspace's plan as stored: a limit absent from Limits is
// unlimited.
type SubscriptionPlan struct {
	Plan      string           `json:"plan"`
	Status    string           `json:"status"`
	Limits    map[string]int64 `json:"limits"`
	UpdatedAt Time             `json:"updated_at"`
}

// DefaultSubscriptionPlan is the plan of a workspace nobody set one for.
func DefaultSubscriptionPlan() *SubscriptionPlan {
	return &SubscriptionPlan{Plan: DefaultPlan, Status: "active", Limits: map[string]int64{}}
}
