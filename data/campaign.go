package data

import (
	"context"
	"encoding/json"
	"time"
)

// Id prefixes of campaigns and their recipients (conventions §3, §25).
const (
	PrefixCampaign  = "cmp_"
	PrefixRecipient = "rcp_"
)

// Campaign statuses. A campaign is scheduled until its start_at, running while it has
// recipients to dial, paused by a user (or by itself: PauseReason), completed once every recipient is final, and
// canceled by a user (or by its agent's delete). Completed and canceled are final.
const (
	CampaignScheduled = "scheduled"
	CampaignRunning   = "running"
	CampaignPaused    = "paused"
	CampaignCompleted = "completed"
	CampaignCanceled  = "canceled"
)

// Why a campaign paused itself (Campaign.PauseReason): a lasting condition under which
// no recipient can be dialed, found by a dial-task claim (or the campaign's start). The
// campaign is paused, with campaign.paused (actor system), instead of running on
// silently; its user resumes it once the condition is fixed. A transient condition (a
// concurrency limit, a recipient out of its window) never pauses it.
const (
	// PauseCallMinutesUsedUp: the subscription's call minutes of the month are used up.
	PauseCallMinutesUsedUp = "call_minutes_used_up"
	// PauseAgentNotPublished: the campaign's agent has no published version.
	PauseAgentNotPublished = "agent_not_published"
	// PauseAgentUnavailable: the campaign's agent is no longer the workspace's.
	PauseAgentUnavailable = "agent_unavailable"
)

// CampaignPauseReasons lists every pause reason.
var CampaignPauseReasons = []string{PauseCallMinutesUsedUp, PauseAgentNotPublished, PauseAgentUnavailable}

// CampaignPauseHelp says, for each pause reason, what stops the campaign and what fixes
// it: the refused resume's message and the console's campaign page both show it.
var CampaignPauseHelp = map[string]string{
	PauseCallMinutesUsedUp: "The workspace's call minutes of the month are used up (its subscription's call_minutes_per_month): raise the limit, or resume the campaign when the next month starts.",
	PauseAgentNotPublished: "The campaign's agent has no published version: publish it, then resume the campaign.",
	PauseAgentUnavailable:  "The campaign's agent is no longer this workspace's: the campaign cannot dial again; cancel it.",
}

// CampaignFinal reports whether a campaign in status s will dial no more.
func CampaignFinal(s string) bool { return s == CampaignCompleted || s == CampaignCanceled }

// Recipient states. A recipient is pending until a dial task leases it, in_progress
// while its attempt's call runs, and then completed (with an outcome), pending again
// (a retry after the backoff), exhausted (a retried outcome with no attempt left) or
// suppressed (its number joined the suppression list). A canceled campaign's pending
// recipients read canceled.
const (
	RecipientPending    = "pending"
	RecipientInProgress = "in_progress"
	RecipientCompleted  = "completed"
	RecipientSuppressed = "suppressed"
	RecipientExhausted  = "exhausted"
	RecipientCanceled   = "canceled"
)

// RecipientStates lists every state of a recipient, in the order of its life: the
// values a recipient list may filter on.
var RecipientStates = []string{RecipientPending, RecipientInProgress, RecipientCompleted,
	RecipientSuppressed, RecipientExhausted, RecipientCanceled}

// Outcomes of an attempt, from its call's end (OutcomeOf). Every outcome but answered
// may be retried (CampaignRetry.On).
const (
	OutcomeAnswered  = "answered"
	OutcomeNoAnswer  = "no_answer"
	OutcomeBusy      = "busy"
	OutcomeVoicemail = "voicemail"
	OutcomeFailed    = "failed"
	// OutcomeLeaseExpired is an attempt whose call the runtime never reported started
	// within the lease: voiceapi holds it undialed, so it gives the attempt back.
	OutcomeLeaseExpired = "lease_expired"
)

// RetryOutcomes are the outcomes a campaign may retry.
var RetryOutcomes = []string{OutcomeNoAnswer, OutcomeBusy, OutcomeVoicemail, OutcomeFailed}

// Outcomes are the outcomes a completed recipient may have.
var Outcomes = []string{OutcomeAnswered, OutcomeNoAnswer, OutcomeBusy, OutcomeVoicemail, OutcomeFailed}

// Disconnection reasons that decide an outcome (docs/campaigns.md, "Outcomes").
const (
	DisconnectionNoAnswer        = "no_answer"
	DisconnectionBusy            = "busy"
	DisconnectionVoicemail       = "voicemail"
	DisconnectionMachineDetected = "machine_detected"
	// DisconnectionDialLeaseExpired ends the call of a dial task whose lease ended
	// while the call was still registered.
	DisconnectionDialLeaseExpired = "dial_lease_expired"
)

// OutcomeOf is what a call's end means to its campaign: no_answer, busy and voicemail
// by their disconnection reasons (whatever the status), failed for any other failed
// call, answered for any other ended one.
func OutcomeOf(status string, reason *string) string {
	r := ""
	if reason != nil {
		r = *reason
	}
	switch r {
	case DisconnectionNoAnswer:
		return OutcomeNoAnswer
	case DisconnectionBusy:
		return OutcomeBusy
	case DisconnectionVoicemail, DisconnectionMachineDetected:
		return OutcomeVoicemail
	}
	if status == CallFailed {
		return OutcomeFailed
	}
	return OutcomeAnswered
}

// Weekdays as a window names them, Monday first.
var Weekdays = []string{"mon", "tue", "wed", "thu", "fri", "sat", "sun"}

// CampaignWindow is when recipients may be called, in each recipient's time zone: the
// days named, from start (inclusive) to end (exclusive), "HH:MM" on a 24-hour clock.
type CampaignWindow struct {
	Days  []string `json:"days"`
	Start string   `json:"start"`
	End   string   `json:"end"`
}

// CampaignRetry says which outcomes are tried again, how often, and after how long.
type CampaignRetry struct {
	// On is required: [] is a choice too (no outcome retried), so an absent list must not
	// read as it when the default retries no_answer and busy.
	On             []string `json:"on" strict:"required"`
	MaxAttempts    int      `json:"max_attempts"`
	BackoffMinutes int      `json:"backoff_minutes"`
}

// CampaignCounts are a campaign's recipients by state; completed ones by outcome.
// Suppressed counts the numbers skipped at import as well as those suppressed since.
type CampaignCounts struct {
	Total      int64            `json:"total"`
	Pending    int64            `json:"pending"`
	InProgress int64            `json:"in_progress"`
	Completed  map[string]int64 `json:"completed"`
	Suppressed int64            `json:"suppressed"`
	Exhausted  int64            `json:"exhausted"`
	Canceled   int64            `json:"canceled"`
}

// MarshalJSON writes completed as {} until a recipient completes, never null: a client
// reads counts.completed[outcome] as it reads every other count, without a null check.
func (c CampaignCounts) MarshalJSON() ([]byte, error) {
	type plain CampaignCounts
	if c.Completed == nil {
		c.Completed = map[string]int64{}
	}
	return json.Marshal(plain(c))
}

// Add moves n recipients into state (outcome for completed ones); a negative n moves
// them out.
func (c *CampaignCounts) Add(state, outcome string, n int64) {
	switch state {
	case RecipientPending:
		c.Pending += n
	case RecipientInProgress:
		c.InProgress += n
	case RecipientCompleted:
		if c.Completed == nil {
			c.Completed = map[string]int64{}
		}
		c.Completed[outcome] += n
		if c.Completed[outcome] == 0 {
			delete(c.Completed, outcome)
		}
	case RecipientSuppressed:
		c.Suppressed += n
	case RecipientExhausted:
		c.Exhausted += n
	case RecipientCanceled:
		c.Canceled += n
	}
}

// Open is how many recipients may still be dialed or are being dialed.
func (c *CampaignCounts) Open() int64 { return c.Pending + c.InProgress }

// KeptWeight is what a campaign counts toward its workspace's bound on kept recipients
// (docs/campaigns.md, "Deleting a campaign"): its recipients, and at least 1, so that
// campaigns whose every number was suppressed are bounded too.
func (c *Campaign) KeptWeight() int64 { return max(c.Counts.Total, 1) }

// CampaignFinished tells whether c is done with for good: final, and with no recipient
// in progress (a canceled campaign stays open to claims while its leases are out).
func CampaignFinished(c *Campaign) bool { return CampaignFinal(c.Status) && c.Counts.InProgress == 0 }

// CampaignImport is what a create made of the recipients it was given.
type CampaignImport struct {
	// Rows is how many recipients (JSON items or CSV data lines) were given.
	Rows int64 `json:"rows"`
	// Duplicates is how many rows named a number an earlier row named (merged into it).
	Duplicates int64 `json:"duplicates"`
	// Suppressed is how many numbers were on the suppression list (skipped).
	Suppressed int64 `json:"suppressed"`
}

// Campaign is an outbound batch (conventions §25): the agent that calls, the number it
// calls from, when and how often, and where its recipients stand.
type Campaign struct {
	ID            string         `json:"id"`
	WorkspaceID   string         `json:"workspace_id"`
	Name          string         `json:"name"`
	AgentID       string         `json:"agent_id"`
	NumberID      string         `json:"number_id"`
	FromNumber    string         `json:"from_number"`
	Timezone      string         `json:"timezone"`
	Window        CampaignWindow `json:"window"`
	MaxConcurrent int            `json:"max_concurrent"`
	Retry         CampaignRetry  `json:"retry"`
	StartAt       Time           `json:"start_at"`
	Status        string         `json:"status"`
	// PauseReason says why the campaign paused itself (CampaignPauseReasons); null when
	// it is not paused, or a user paused it.
	PauseReason *string        `json:"pause_reason"`
	Counts      CampaignCounts `json:"counts"`
	Import      CampaignImport `json:"import"`
	CreatedAt   Time           `json:"created_at"`
	UpdatedAt   Time           `json:"updated_at"`
	StartedAt   *Time          `json:"started_at"`
	FinishedAt  *Time          `json:"finished_at"`
	// LastClaimAt is when a dial-task claim last leased one of its recipients; claims
	// serve the campaign served longest ago first. Storage only.
	LastClaimAt *Time `json:"-"`
}

// RecipientAttempt is one dial of a recipient: its call and how it ended.
type RecipientAttempt struct {
	// Attempt counts the recipient's dials; an attempt given back (lease_expired) is
	// dialed again under the same number.
	Attempt   int     `json:"attempt"`
	CallID    *string `json:"call_id"`
	ClaimedAt Time    `json:"claimed_at"`
	EndedAt   *Time   `json:"ended_at"`
	// Status and DisconnectionReason are the call's at its end.
	Status              *string `json:"status"`
	DisconnectionReason *string `json:"disconnection_reason"`
	Outcome             *string `json:"outcome"`
	// Error says why an attempt ended before any call was made (the start refused it).
	Error *string `json:"error"`
}

// Recipient is one number a campaign calls, with its variables and attempts.
type Recipient struct {
	ID          string         `json:"id"`
	CampaignID  string         `json:"campaign_id"`
	WorkspaceID string         `json:"workspace_id"`
	PhoneNumber string         `json:"phone_number"`
	Timezone    string         `json:"timezone"`
	Variables   map[string]any `json:"variables"`
	State       string         `json:"state"`
	// Outcome is the last attempt's outcome once the recipient is final.
	Outcome *string `json:"outcome"`
	// AttemptCount is how many attempts counted toward max_attempts.
	AttemptCount int                `json:"attempt_count"`
	Attempts     []RecipientAttempt `json:"attempts"`
	// NextAt is when a pending recipient is next due (its window's opening, a retry's
	// backoff); null otherwise.
	NextAt *Time `json:"next_at"`
	// LeaseUntil is when an in-progress recipient's dial task returns unless its call
	// reports.
	LeaseUntil *Time `json:"lease_until"`
	// CallID is the in-progress attempt's call.
	CallID *string `json:"call_id"`
	// Line is the recipient's CSV line, or its index in the JSON list (the first row
	// given when rows merged).
	Line      int  `json:"line"`
	CreatedAt Time `json:"created_at"`
	UpdatedAt Time `json:"updated_at"`
}

// RecipientInput is one recipient as given: a JSON item, or a CSV line (Line set).
type RecipientInput struct {
	PhoneNumber string         `json:"phone_number"`
	Timezone    *string        `json:"timezone"`
	Variables   map[string]any `json:"variables"`
	// Line is the CSV line the row came from; 0 for a JSON item.
	Line int `json:"-"`
}

// CampaignCreate is the body of POST /api/v1/campaigns (JSON), or its multipart form's
// fields with the recipients from a CSV file (FromCSV set).
type CampaignCreate struct {
	Name          string           `json:"name"`
	AgentID       string           `json:"agent_id"`
	NumberID      string           `json:"number_id"`
	Timezone      *string          `json:"timezone"`
	Window        *CampaignWindow  `json:"window"`
	MaxConcurrent *int             `json:"max_concurrent"`
	Retry         *CampaignRetry   `json:"retry"`
	StartAt       *Time            `json:"start_at"`
	Recipients    []RecipientInput `json:"recipients"`
	// FromCSV says the recipients came from a CSV upload: errors name their lines.
	FromCSV bool `json:"-"`
}

// CampaignFilter narrows a campaign list.
type CampaignFilter struct {
	AgentID string
	Status  string
}

// RecipientFilter is the filter of a campaign's recipient list (GET
// /api/v1/campaigns/{campaign_id}/recipients?state=), named as the recipient's member.
type RecipientFilter struct {
	// State is one of RecipientStates, as the list shows it; "" lists every recipient.
	State string
}

// DialClaim is the body of POST /api/v1/dial-tasks/claim.
type DialClaim struct {
	// Max bounds the tasks leased (1 to validate.MaxDialClaim).
	Max int `json:"max"`
	// LeaseSeconds is how long a task stays with the claimer before its call must be
	// reported started; validate's default when 0.
	LeaseSeconds *int `json:"lease_seconds"`
}

// DialTask is one leased attempt: the recipient to dial and the call-start answer of
// conventions §23 for its call, registered in the claim's transaction.
type DialTask struct {
	CampaignID  string       `json:"campaign_id"`
	RecipientID string       `json:"recipient_id"`
	Attempt     int          `json:"attempt"`
	ToNumber    string       `json:"to_number"`
	FromNumber  string       `json:"from_number"`
	LeaseUntil  Time         `json:"lease_until"`
	Call        *Call        `json:"call"`
	Agent       *RunConfig   `json:"agent"`
	Variant     *CallVariant `json:"variant"`
}

// DialClaimAnswer is the data of a claim: the tasks leased, and when the next one of the
// campaigns the claim looked at falls due (null when none is waiting for a time).
type DialClaimAnswer struct {
	Tasks     []*DialTask `json:"tasks"`
	NextDueAt *Time       `json:"next_due_at"`
}

// Campaign events (conventions §25).
const (
	EventCampaignCreated   = "campaign.created"
	EventCampaignStarted   = "campaign.started"
	EventCampaignPaused    = "campaign.paused"
	EventCampaignResumed   = "campaign.resumed"
	EventCampaignCanceled  = "campaign.canceled"
	EventCampaignCompleted = "campaign.completed"
	EventCampaignDeleted   = "campaign.deleted"
)

// CampaignService manages campaigns. A campaign belongs to its agent: a caller sees it
// and acts on it only if it may see the agent, and needs the call_history module (read
// to see, write to change).
type CampaignService interface {
	// CreateCampaign stores a campaign and its recipients. Errors: validation_failed
	// (naming recipients.N.field, or recipients.line_N.field for a CSV), not_found
	// never (a missing agent or number is a 422 on its field), not_published (422 on
	// agent_id).
	CreateCampaign(ctx context.Context, in CampaignCreate) (*Campaign, error)
	// Campaigns lists the workspace's campaigns the caller may see, newest first.
	Campaigns(ctx context.Context, f CampaignFilter, req PageRequest) ([]*Campaign, Page, error)
	// Campaign returns one. Errors: not_found.
	Campaign(ctx context.Context, id string) (*Campaign, error)
	// Recipients lists a campaign's recipients with their attempts, newest first, those
	// in f.State only when given. Errors: not_found, validation_failed (state,
	// per_page, cursor).
	Recipients(ctx context.Context, campaignID string, f RecipientFilter, req PageRequest) ([]*Recipient, Page, error)
	// PauseCampaign, ResumeCampaign and CancelCampaign move a campaign. Errors:
	// not_found, conflict (a move its status does not allow).
	PauseCampaign(ctx context.Context, id string) (*Campaign, error)
	ResumeCampaign(ctx context.Context, id string) (*Campaign, error)
	CancelCampaign(ctx context.Context, id string) (*Campaign, error)
	// DeleteCampaign deletes a finished campaign (completed, or canceled with no call in
	// progress) with its recipients. Errors: not_found, conflict (not finished).
	DeleteCampaign(ctx context.Context, id string) error
	// ClaimDialTasks leases due tasks with a call-start answer each. Errors:
	// validation_failed, forbidden (a caller who may not read agents), quota_exceeded
	// (call minutes).
	ClaimDialTasks(ctx context.Context, in DialClaim) (*DialClaimAnswer, error)
}

// DefaultDialLease is a dial task's lease when the claim names none.
const DefaultDialLease = 60 * time.Second
