package data

import "context"

// Rollback metrics of a rollout (conventions §23).
const (
	// MetricFailedRate is the share of a variant's finished calls that failed.
	MetricFailedRate = "failed_rate"
	// MetricSuccessRate is the share of a variant's analyzed calls whose analysis says
	// call_successful true.
	MetricSuccessRate = "success_rate"
)

// RolloutMetrics lists the rollback metrics.
var RolloutMetrics = []string{MetricFailedRate, MetricSuccessRate}

// Rollout events.
const (
	EventRolloutUpdated    = "agent.rollout_updated"
	EventRolloutEnded      = "agent.rollout_ended"
	EventRolloutRolledBack = "agent.rollout_rolled_back"
)

// Rollout splits an agent's calls between published versions by weight (conventions §23).
// A caller gets the same variant while the rollout stands; publishing or restoring the
// agent, or DELETE, ends it.
type Rollout struct {
	AgentID     string           `json:"agent_id"`
	WorkspaceID string           `json:"workspace_id"`
	Variants    []RolloutVariant `json:"variants"`
	Rollback    *RolloutRollback `json:"rollback"`
	// StartedAt is when the rollout began: its figures count the calls created since,
	// and it salts the callers' assignment, so a new rollout shuffles them anew.
	StartedAt Time `json:"started_at"`
	UpdatedAt Time `json:"updated_at"`
}

// RolloutSlots is how many slots a rollout's callers are hashed to: weights are integer
// percents summing to 100, so each variant owns exactly its weight of them.
const RolloutSlots = 100

// StoredRollout is a rollout as storage keeps it: the record clients see, and its slot
// map, which clients never see. Slots[i] is the version slot i's callers get; a rollout
// stored before the map existed has none (nil), and reads as the variants' consecutive
// slots in list order, as they were then laid out.
type StoredRollout struct {
	Rollout
	Slots []int `json:"slots,omitempty"`
}

// RolloutVariant is one published version of a rollout, its weight, and what its calls
// created since the rollout began did.
type RolloutVariant struct {
	Version int `json:"version"`
	// Weight is required: 0 is a weight too (a variant that takes no callers).
	Weight int `json:"weight" strict:"required"`
	RolloutFigures
	// RolledBack is set when the automatic rollback took this variant's weight.
	RolledBack bool `json:"rolled_back"`
}

// RolloutFigures count one variant's calls (not web conversations) created since the
// rollout began. Calls and Failed count them when they reach a final status; Analyzed and
// Successful when their analysis carries a boolean call_successful.
type RolloutFigures struct {
	Calls      int64 `json:"calls"`
	Failed     int64 `json:"failed"`
	Analyzed   int64 `json:"analyzed"`
	Successful int64 `json:"successful"`
}

// FailedRate is Failed over Calls; ok is false without calls.
func (f RolloutFigures) FailedRate() (rate float64, ok bool) {
	if f.Calls == 0 {
		return 0, false
	}
	return float64(f.Failed) / float64(f.Calls), true
}

// SuccessRate is Successful over Analyzed; ok is false without analyzed calls.
func (f RolloutFigures) SuccessRate() (rate float64, ok bool) {
	if f.Analyzed == 0 {
		return 0, false
	}
	return float64(f.Successful) / float64(f.Analyzed), true
}

// RolloutRollback is the automatic rollback: once a variant and another have at least
// MinCalls calls measured by Metric, a variant past Threshold (a failed rate above it, a
// success rate below it) loses its weight to the best variant within it.
type RolloutRollback struct {
	Metric string `json:"metric"`
	// Threshold is required: 0 is a threshold too (any failure is past it), so an absent
	// one must not read as 0.
	Threshold float64 `json:"threshold" strict:"required"`
	MinCalls  int     `json:"min_calls"`
}

// RolloutSet is the body of PUT /api/v1/agents/{agent_id}/rollout.
type RolloutSet struct {
	Variants []RolloutVariantSet `json:"variants"`
	Rollback *RolloutRollback    `json:"rollback"`
}

// RolloutVariantSet is one variant of a RolloutSet.
type RolloutVariantSet struct {
	Version int `json:"version"`
	// Weight is required: 0 is a weight too (a variant that takes no callers).
	Weight int `json:"weight" strict:"required"`
}

// RolloutService manages agents' rollouts. Every method may return forbidden and
// not_found (an agent unknown, of another workspace or outside the caller's agent_ids).
type RolloutService interface {
	// Rollout returns the agent's rollout. Errors: not_found (also when none stands).
	Rollout(ctx context.Context, agentID string) (*Rollout, error)
	// SetRollout starts or changes the agent's rollout. A rollout that stands keeps its
	// start and its slot map, moved as little as the new weights allow (a caller changes
	// version only when theirs shrank or left), and the figures of the versions it keeps.
	// Errors: validation_failed.
	SetRollout(ctx context.Context, agentID string, in RolloutSet) (*Rollout, error)
	// EndRollout ends the agent's rollout: its published_version is live again. Errors:
	// not_found (also when none stands).
	EndRollout(ctx context.Context, agentID string) error
}
