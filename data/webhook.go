package data

import (
	"context"
	"time"
)

// WebhookAllEvents is the events filter that subscribes a webhook to every event type.
const WebhookAllEvents = "*"

// Webhook is an endpoint that hears of a workspace's events (conventions §14). Its signing
// secret is never part of it: it is returned once, top-level, on create and rotate.
type Webhook struct {
	ID          string   `json:"id"`
	WorkspaceID string   `json:"workspace_id"`
	URL         string   `json:"url"`
	Description string   `json:"description"`
	Events      []string `json:"events"`
	Enabled     bool     `json:"enabled"`
	CreatedAt   Time     `json:"created_at"`
	UpdatedAt   Time     `json:"updated_at"`
}

// Subscribes reports whether the webhook wants events of type typ. A webhook.test event
// is not covered by the filter: it goes only to the webhook it was sent to (see Matches).
func (w *Webhook) Subscribes(typ string) bool {
	for _, e := range w.Events {
		if e == WebhookAllEvents || e == typ {
			return true
		}
	}
	return false
}

// Matches reports whether event e is for webhook w: a webhook.test event only for the
// webhook named in its data (targetID), anything else by the events filter.
func (w *Webhook) Matches(e *Event, targetID string) bool {
	if e.Type == EventWebhookTest {
		return targetID == w.ID
	}
	return w.Subscribes(e.Type)
}

// WebhookCreate is the body of POST /api/v1/webhooks.
type WebhookCreate struct {
	RecordReadOnly
	URL         string   `json:"url"`
	Events      []string `json:"events"`
	Description string   `json:"description"`
	Enabled     *bool    `json:"enabled"` // true when omitted
}

// WebhookUpdate is the body of PUT /api/v1/webhooks/{webhook_id}: only the given fields change.
type WebhookUpdate struct {
	RecordReadOnly
	URL         Opt[string]   `json:"url"`
	Events      Opt[[]string] `json:"events"`
	Description Opt[string]   `json:"description"`
	Enabled     Opt[bool]     `json:"enabled"`
}

// WebhookReplay is the body of POST /api/v1/webhooks/{webhook_id}/replay: the events created in
// [From, To) are queued again for that webhook.
type WebhookReplay struct {
	From Time `json:"from"`
	To   Time `json:"to"`
}

// WebhookReplayed is the answer to a replay: how many events of the range were queued
// again.
type WebhookReplayed struct {
	Count int  `json:"count"`
	From  Time `json:"from"`
	To    Time `json:"to"`
}

// WebhookEventTypes answers GET /api/v1/webhooks/event-types: which event types the
// caller may subscribe a webhook to. A webhook sends every event of its types, of every
// agent, so a type is offered only to a caller who reads every event of it (conventions
// §6); the rest are withheld, and `["*"]` is allowed only when nothing is.
type WebhookEventTypes struct {
	// Types are the event types the caller may subscribe to, in data.EventTypes' order.
	Types []string `json:"types"`
	// Withheld are the event types a create or update naming them refuses with 403: the
	// caller's modules, agent_ids or key scopes do not read every event of each.
	Withheld []string `json:"withheld"`
}

// Delivery statuses. Each attempt is one delivery record: a failed attempt that will be
// retried is "retrying" and a new "pending" record stands for the next attempt.
const (
	DeliveryPending   = "pending"
	DeliverySucceeded = "succeeded"
	DeliveryFailed    = "failed"
	DeliveryRetrying  = "retrying"
)

// Delivery is one attempt (done or due) to post an event to a webhook.
type Delivery struct {
	ID             string  `json:"id"`
	WebhookID      string  `json:"webhook_id"`
	EventID        string  `json:"event_id"`
	EventType      string  `json:"event_type"`
	Attempt        int     `json:"attempt"`
	Status         string  `json:"status"`
	ResponseStatus *int    `json:"response_status"`
	Error          *string `json:"error"`
	NextAttemptAt  *Time   `json:"next_attempt_at"`
	CreatedAt      Time    `json:"created_at"`
}

// WebhookService manages webhooks and their deliveries. Every method acts in the
// caller's current workspace; a webhook of another workspace is not_found.
type WebhookService interface {
	// ListWebhooks lists the workspace's webhooks, newest first. Errors: validation_failed
	// (cursor).
	ListWebhooks(ctx context.Context, p PageRequest) ([]*Webhook, Page, error)
	// CreateWebhook makes a webhook and returns it with its signing secret ("whsec_…").
	// Errors: validation_failed, quota_exceeded.
	CreateWebhook(ctx context.Context, in WebhookCreate) (*Webhook, string, error)
	// Webhook returns one webhook. Errors: not_found.
	Webhook(ctx context.Context, id string) (*Webhook, error)
	// UpdateWebhook changes url, events, description or enabled. Errors: not_found,
	// validation_failed, precondition_failed.
	UpdateWebhook(ctx context.Context, id string, in WebhookUpdate) (*Webhook, error)
	// DeleteWebhook removes a webhook and its deliveries. Errors: not_found,
	// precondition_failed.
	DeleteWebhook(ctx context.Context, id string) error
	// RotateWebhookSecret replaces the signing secret and returns the new one. Errors:
	// not_found, precondition_failed.
	RotateWebhookSecret(ctx context.Context, id string) (*Webhook, string, error)
	// SendTestEvent records a webhook.test event that is delivered to this webhook only.
	// Errors: not_found.
	SendTestEvent(ctx context.Context, id string) (*Event, error)
	// ListDeliveries lists a webhook's delivery attempts, newest first. Errors: not_found,
	// validation_failed (cursor), forbidden (the page may name events the caller may not
	// read).
	ListDeliveries(ctx context.Context, webhookID string, p PageRequest) ([]*Delivery, Page, error)
	// RetryDelivery queues the delivery's event again for its webhook, due now, and returns
	// the new pending delivery. Errors: not_found, conflict (the delivery is still pending).
	RetryDelivery(ctx context.Context, webhookID, deliveryID string) (*Delivery, error)
	// ReplayEvents queues again every event created in [in.From, in.To) that the webhook
	// subscribes to and returns how many. Errors: not_found, validation_failed (the range).
	ReplayEvents(ctx context.Context, webhookID string, in WebhookReplay) (int, error)
	// EventTypes lists the event types the caller may subscribe a webhook to, and those
	// withheld from it.
	EventTypes(ctx context.Context) (*WebhookEventTypes, error)
}

// DeliveryJob is a pending delivery loaded for posting: everything the dispatcher needs,
// copied out of storage.
type DeliveryJob struct {
	DeliveryID string
	WebhookID  string
	EventID    string
	Attempt    int
	URL        string
	Secret     string // "whsec_…", in the clear: kept in memory only for the post
	Body       []byte // the §11 envelope
	// Skip, when not empty, is why the delivery must not be posted (the webhook is
	// disabled); it is recorded as a final failure.
	Skip string
}

// AttemptOutcome is the result of posting one delivery.
type AttemptOutcome struct {
	Succeeded      bool
	ResponseStatus int // 0 when no response arrived
	Error          string
	// RetryAt is when the next attempt falls due; zero means no retry (failed for good).
	RetryAt time.Time
}

// DeliveryQueue is the storage side of the webhook dispatcher: a durable outbox of events
// and a durable queue of pending deliveries, so a restart or a crash loses nothing.
type DeliveryQueue interface {
	// FanOut turns up to limit outboxed events into pending deliveries to the webhooks
	// that match them, and removes those events from the outbox in the same transaction.
	// It returns how many events it took from the outbox.
	FanOut(ctx context.Context, limit int) (int, error)
	// ClaimDueDeliveries claims up to limit pending deliveries due at now for which skip
	// is false, oldest due first, for one attempt each. On a store several processes
	// share, their next attempt moves to now+lease in the claiming transaction, so no
	// other dispatcher (another replica) sees them due while this one posts, and one that
	// dies mid-post leaves them due again once the lease ends; on a store one process
	// owns, skip is the whole claim: the dispatcher's in-flight set, and the ids recorded
	// since the claim began (its snapshot may predate their record). It also returns
	// when the next other pending delivery falls due (zero when there is none). With an
	// error it returns no jobs: a claim that did not commit holds no lease.
	ClaimDueDeliveries(ctx context.Context, now time.Time, limit int, lease time.Duration, skip func(deliveryID string) bool) ([]*DeliveryJob, time.Time, error)
	// FinishAttempt records the outcome of a pending delivery's attempt and, when
	// out.RetryAt is set, queues the next attempt. A delivery that no longer exists (its
	// webhook was deleted) is ignored.
	FinishAttempt(ctx context.Context, deliveryID string, out AttemptOutcome) error
}

// AuditFilter narrows the audit log; zero fields do not filter.
type AuditFilter struct {
	Type  string
	Actor string // a user id
	From  Time   // inclusive
	To    Time   // exclusive
}

// AuditService reads the workspace's audit log: its events with their actors and hash
// chain (conventions §17).
type AuditService interface {
	// ListAuditLog lists the current workspace's events that the caller may see
	// (docs/api.md, "What a caller sees"), newest first. Errors: validation_failed (a
	// filter or the cursor).
	ListAuditLog(ctx context.Context, f AuditFilter, p PageRequest) ([]*Event, Page, error)
	// AuditHead returns the newest link of the current workspace's chain, for an
	// operator to record outside voiceapi: a later chain that does not lead to it was
	// rewritten, even by someone holding the key.
	AuditHead(ctx context.Context) (*AuditHead, error)
	// VerifyAuditLog recomputes the current workspace's chain and names every fault.
	VerifyAuditLog(ctx context.Context) (*AuditVerification, error)
	// EventStreamer reads the same events live (GET /api/v1/events/stream).
	EventStreamer
}

// AuditVerification is the result of checking a workspace's audit chain.
type AuditVerification struct {
	WorkspaceID string         `json:"workspace_id"`
	Checked     int            `json:"checked"`
	Intact      bool           `json:"intact"`
	Problems    []ChainProblem `json:"problems"`
}

// AuditHead is the newest link of a workspace's audit chain; EventID and CreatedAt are
// empty for a workspace without events.
type AuditHead struct {
	WorkspaceID string `json:"workspace_id"`
	EventID     string `json:"event_id"`
	Hash        string `json:"hash"`
	CreatedAt   *Time  `json:"created_at"`
}

// ChainProblem is one fault found by verifying a workspace's hash chain.
type ChainProblem struct {
	WorkspaceID string `json:"workspace_id"`
	EventID     string `json:"event_id"` // "" for a fault of the chain's head
	Problem     string `json:"problem"`
}

// WebhookRecord is a webhook as storage keeps it: with its signing secret, sealed
// (conventions §9). Only the service layer opens the secret, to sign a delivery.
type WebhookRecord struct {
	Webhook
	SealedSecret string
}
