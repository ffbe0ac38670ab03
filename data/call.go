package data

import (
	"context"
	"time"
)

// Call directions and statuses (conventions §12).
const (
	DirectionInbound  = "inbound"
	DirectionOutbound = "outbound"
	DirectionWeb      = "web"

	CallRegistered = "registered"
	CallOngoing    = "ongoing"
	CallEnded      = "ended"
	CallFailed     = "failed"
)

// CallDirections lists every direction.
var CallDirections = []string{DirectionInbound, DirectionOutbound, DirectionWeb}

// CallStatuses lists every status, in the order a call moves through them.
var CallStatuses = []string{CallRegistered, CallOngoing, CallEnded, CallFailed}

// TranscriptRoles lists who may speak in a transcript.
var TranscriptRoles = []string{"agent", "user", "tool"}

// CallFinal reports whether status is final: nothing about the call's course changes after.
func CallFinal(status string) bool { return status == CallEnded || status == CallFailed }

// CallMoveAllowed reports whether status may move from one value to another: forward only,
// registered → ongoing, registered or ongoing → ended or failed. Staying put is allowed.
func CallMoveAllowed(from, to string) bool {
	if from == to {
		return true
	}
	switch from {
	case CallRegistered:
		return to == CallOngoing || to == CallEnded || to == CallFailed
	case CallOngoing:
		return to == CallEnded || to == CallFailed
	}
	return false
}

// TranscriptItem is one utterance of a call.
type TranscriptItem struct {
	Role    string `json:"role"`
	Content string `json:"content"`
	StartMS int64  `json:"start_ms"`
}

// Call is one conversation an agent held, as the voice runtime reported it.
type Call struct {
	ID                  string           `json:"id"`
	WorkspaceID         string           `json:"workspace_id"`
	AgentID             string           `json:"agent_id"`
	AgentVersion        *int             `json:"agent_version"`
	NumberID            *string          `json:"number_id"`
	Direction           string           `json:"direction"`
	FromNumber          *string          `json:"from_number"`
	ToNumber            *string          `json:"to_number"`
	Status              string           `json:"status"`
	StartedAt           *Time            `json:"started_at"`
	EndedAt             *Time            `json:"ended_at"`
	DurationMS          *int64           `json:"duration_ms"`
	DisconnectionReason *string          `json:"disconnection_reason"`
	Transcript          []TranscriptItem `json:"transcript"`
	RecordingURL        *string          `json:"recording_url"`
	Variables           map[string]any   `json:"variables"`
	Analysis            map[string]any   `json:"analysis"`
	// AnalysisSource says where analysis came from (AnalysisRuntime, AnalysisLLM); nil
	// while the call has none.
	AnalysisSource *string `json:"analysis_source"`
	// AnalyzedAt is when analysis was last set.
	AnalyzedAt *Time `json:"analyzed_at"`
	// AnalysisError is why the last post-call analysis failed; nil once one succeeds.
	AnalysisError *AnalysisError `json:"analysis_error"`
	Metadata      map[string]any `json:"metadata"`
	Usage         *CallUsage     `json:"usage"`
	// Cost prices Usage under the workspace's price table when the usage was set.
	Cost *CallCost `json:"cost"`
	// LegalHold exempts the call from retention (and from deletion) while true.
	LegalHold bool `json:"legal_hold"`
	CreatedAt Time `json:"created_at"`
	UpdatedAt Time `json:"updated_at"`
}

// CallReadOnly are the members of a call record that no body sets: analysis's own and the
// price the server computes.
type CallReadOnly struct {
	RecordReadOnly
	AnalysisSource ReadOnly `json:"analysis_source,omitzero" strict:"readonly"`
	AnalyzedAt     ReadOnly `json:"analyzed_at,omitzero" strict:"readonly"`
	AnalysisError  ReadOnly `json:"analysis_error,omitzero" strict:"readonly"`
	Cost           ReadOnly `json:"cost,omitzero" strict:"readonly"`
}

// CallCreate is the body of POST /api/v1/calls: the voice runtime registers a call.
type CallCreate struct {
	CallReadOnly
	AgentID             string           `json:"agent_id"`
	AgentVersion        *int             `json:"agent_version"`
	NumberID            *string          `json:"number_id"`
	Direction           string           `json:"direction"`
	FromNumber          *string          `json:"from_number"`
	ToNumber            *string          `json:"to_number"`
	Status              *string          `json:"status"`
	StartedAt           *Time            `json:"started_at"`
	EndedAt             *Time            `json:"ended_at"`
	DurationMS          *int64           `json:"duration_ms"`
	DisconnectionReason *string          `json:"disconnection_reason"`
	Transcript          []TranscriptItem `json:"transcript"`
	RecordingURL        *string          `json:"recording_url"`
	Variables           map[string]any   `json:"variables"`
	Analysis            map[string]any   `json:"analysis"`
	Metadata            map[string]any   `json:"metadata"`
	Usage               *CallUsageInput  `json:"usage"`
}

// CallUpdate is the body of PUT /api/v1/calls/{call_id}: every member optional, none nullable.
type CallUpdate struct {
	CallReadOnly
	// What a call is about is set when it is registered and never changes.
	AgentID             ReadOnly              `json:"agent_id,omitzero" strict:"readonly"`
	AgentVersion        ReadOnly              `json:"agent_version,omitzero" strict:"readonly"`
	NumberID            ReadOnly              `json:"number_id,omitzero" strict:"readonly"`
	Direction           ReadOnly              `json:"direction,omitzero" strict:"readonly"`
	FromNumber          ReadOnly              `json:"from_number,omitzero" strict:"readonly"`
	ToNumber            ReadOnly              `json:"to_number,omitzero" strict:"readonly"`
	Status              Opt[string]           `json:"status"`
	StartedAt           Opt[Time]             `json:"started_at"`
	EndedAt             Opt[Time]             `json:"ended_at"`
	DurationMS          Opt[int64]            `json:"duration_ms"`
	DisconnectionReason Opt[string]           `json:"disconnection_reason"`
	Transcript          Opt[[]TranscriptItem] `json:"transcript"`
	RecordingURL        Opt[string]           `json:"recording_url"`
	// A map would take null as nil (strictjson): the tag refuses it, as none of these
	// is nullable; {} empties one.
	Variables Opt[map[string]any] `json:"variables" strict:"nonnull"`
	Analysis  Opt[map[string]any] `json:"analysis" strict:"nonnull"`
	Metadata  Opt[map[string]any] `json:"metadata" strict:"nonnull"`
	// Usage replaces the runtime's usage (llm, tts, stt, telephony); null empties it.
	// Analysis's own usage stays.
	Usage     Opt[*CallUsageInput] `json:"usage"`
	LegalHold Opt[bool]            `json:"legal_hold"`
}

// CallFilter narrows a list of calls; zero fields keep everything.
type CallFilter struct {
	AgentID   string
	NumberID  string
	Direction string
	Status    string
	// From (inclusive) and To (exclusive) bound created_at; zero means unbounded.
	From, To time.Time
}

// CallService keeps the call history of the caller's workspace. Calls of agents outside
// the caller's agent_ids are not found.
type CallService interface {
	// ListCalls lists calls, newest first. Errors: validation_failed (cursor).
	ListCalls(ctx context.Context, f CallFilter, p PageRequest) ([]*Call, Page, error)
	// RegisterCall stores a new call. Errors: validation_failed (also an agent or number
	// outside the workspace), quota_exceeded (call_minutes_per_month).
	RegisterCall(ctx context.Context, in CallCreate) (*Call, error)
	// Call returns one call. Errors: not_found.
	Call(ctx context.Context, id string) (*Call, error)
	// UpdateCall moves a call forward and returns it, or nil when the caller may change
	// calls but not read them (a calls:runtime key): the answer then carries nothing the
	// caller could not read otherwise. Errors: not_found, validation_failed, conflict (a
	// status that does not move forward, or a finished call's course), precondition_failed.
	UpdateCall(ctx context.Context, id string, in CallUpdate) (*Call, error)
	// DeleteCall removes a call. Errors: not_found, precondition_failed.
	DeleteCall(ctx context.Context, id string) error
	// SearchCalls lists the calls holding every word of s (docs/calls.md, "Search"), with
	// the filters of ListCalls. Errors: validation_failed (q, sort, cursor).
	SearchCalls(ctx context.Context, f CallFilter, s CallSearch, p PageRequest) ([]*CallHit, Page, error)
	// ExportCalls calls emit with every call x selects, newest first, in bounded batches,
	// and returns the cursor resuming after what it emitted when it stopped early (nil at
	// the end). Errors: validation_failed, before any emit.
	ExportCalls(ctx context.Context, x CallExport, emit func(*Call) error) (*string, error)
}

// Analytics intervals.
const (
	IntervalHour = "hour"
	IntervalDay  = "day"
)

// CallAnalyticsQuery asks for call analytics over [From, To), optionally for one agent.
type CallAnalyticsQuery struct {
	From, To time.Time
	AgentID  string
	Interval string
	// AgentVersion keeps the calls of that version of AgentID only.
	AgentVersion *int
}

// CallTotals are the counts of calls over a range.
type CallTotals struct {
	Calls             int64 `json:"calls"`
	Ended             int64 `json:"ended"`
	Failed            int64 `json:"failed"`
	TotalDurationMS   int64 `json:"total_duration_ms"`
	AverageDurationMS int64 `json:"average_duration_ms"`
	// CostMicros sums the calls' cost in micro-units per currency ({} when none).
	CostMicros map[string]int64 `json:"cost_micros"`
}

// CallSeriesPoint is one bucket of the series.
type CallSeriesPoint struct {
	Start           Time  `json:"start"`
	Calls           int64 `json:"calls"`
	Ended           int64 `json:"ended"`
	Failed          int64 `json:"failed"`
	TotalDurationMS int64 `json:"total_duration_ms"`
	// AverageDurationMS is the bucket's total_duration_ms over its calls that have a
	// duration, as the totals' average is: a chart of it agrees with the totals.
	AverageDurationMS int64 `json:"average_duration_ms"`
	// CostMicros sums the bucket's calls' cost per currency.
	CostMicros map[string]int64 `json:"cost_micros"`
}

// CallAnalytics is the body of GET /api/v1/analytics/calls (conventions §12).
type CallAnalytics struct {
	Totals               CallTotals        `json:"totals"`
	Series               []CallSeriesPoint `json:"series"`
	DisconnectionReasons map[string]int64  `json:"disconnection_reasons"`
	// Versions are an agent's figures per agent_version (agent_id given; [] for a
	// workspace's, whose version numbers belong to different agents): each version's
	// counts and cost, and its cost per bucket; oldest version first, calls without a
	// version last.
	Versions []VersionTotals `json:"versions"`
}

// VersionTotals are the figures of one agent version's calls: the totals' counts and
// cost_micros, and Series, the version's cost in each bucket of the answer's series.
type VersionTotals struct {
	AgentVersion *int `json:"agent_version"`
	CallTotals
	Series []VersionCostPoint `json:"series"`
}

// VersionCostPoint is one bucket of a version's cost series.
type VersionCostPoint struct {
	Start      Time             `json:"start"`
	CostMicros map[string]int64 `json:"cost_micros"`
}

// AnalyticsService computes call analytics from maintained rollups.
type AnalyticsService interface {
	// CallAnalytics returns totals, a series and reasons. Errors: validation_failed.
	CallAnalytics(ctx context.Context, q CallAnalyticsQuery) (*CallAnalytics, error)
}
