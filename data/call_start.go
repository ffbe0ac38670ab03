package data

import (
	"context"
	"time"
)

// Error codes of the call-start contract (conventions §23).
const (
	// ENOTPUBLISHED is a call routed to an agent with no published version: 409.
	ENOTPUBLISHED = "not_published"
	// ECONCURRENCY is a call start refused because the workspace's concurrent_calls or the
	// agent's max_concurrent_calls is reached: 429 with Retry-After.
	ECONCURRENCY = "concurrency_limit"
)

// ConcurrencyRetryAfter is the Retry-After of a 429 concurrency_limit: a runtime asks
// again once a call may have ended (docs/runtime.md).
const ConcurrencyRetryAfter = 5 * time.Second

// AbandonGrace is how long past its max_call_duration_ms a call left open keeps counting
// toward concurrency; then it is marked failed, reason DisconnectionAbandoned.
const AbandonGrace = 5 * time.Minute

// DisconnectionAbandoned is the disconnection_reason of a call voiceapi ended because its
// runtime left it open past max_call_duration_ms plus AbandonGrace.
const DisconnectionAbandoned = "abandoned"

// CallStart is the body of POST /api/v1/calls/start: a voice runtime asks what a call
// runs (conventions §23, docs/runtime.md).
//
// Inbound, to_number is the workspace's number that was dialed (its inbound agent
// answers) and from_number the caller. Outbound, to_number is the number called;
// agent_id names the agent, or else from_number names the workspace's number that calls
// (its outbound agent).
type CallStart struct {
	Direction  string         `json:"direction"`
	ToNumber   *string        `json:"to_number"`
	FromNumber *string        `json:"from_number"`
	AgentID    *string        `json:"agent_id"`
	Variables  map[string]any `json:"variables"`
	Metadata   map[string]any `json:"metadata"`
}

// CallStartAnswer is the data of a 201 to POST /api/v1/calls/start: the registered call,
// the configuration to run and the variant the rollout chose.
type CallStartAnswer struct {
	Call    *Call        `json:"call"`
	Agent   *RunConfig   `json:"agent"`
	Variant *CallVariant `json:"variant"`
}

// RunConfig is the agent configuration a runtime runs for one call: the chosen published
// version with every {{variable}} substituted and llm_config.api_key in clear. It exists
// only in the call-start answer: it is never stored, logged or sent in an event.
type RunConfig struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Version int    `json:"version"`
	AgentConfig
	// Variables are the values the configuration was filled with: the agent's
	// default_variables, the number's variables, the call's, and the built-ins.
	Variables map[string]any `json:"variables"`
	// Knowledge is how the runtime retrieves from the version's knowledge bases; nil when
	// it has none.
	Knowledge *KnowledgeRoute `json:"knowledge"`
}

// KnowledgeRoute is a request the runtime sends with its own token to retrieve knowledge
// for a user turn: Method and Path, with Body's members plus "query".
type KnowledgeRoute struct {
	Method string         `json:"method"`
	Path   string         `json:"path"`
	Body   map[string]any `json:"body"`
}

// CallVariant is which published version runs the call and why: the agent's live
// version (Rollout false, Weight 100), or the rollout's variant with its weight.
type CallVariant struct {
	Version int  `json:"version"`
	Weight  int  `json:"weight"`
	Rollout bool `json:"rollout"`
}

// CallStartService decides what a call runs (conventions §23).
type CallStartService interface {
	// StartCall routes the call, checks quota and concurrency, registers it and returns
	// the configuration to run, all in one transaction. Errors: validation_failed (the
	// body), not_found (an unknown number, an agent of another workspace or outside the
	// caller's agent_ids), conflict (a number with no agent for the direction),
	// not_published, missing_variables, quota_exceeded (call_minutes_per_month),
	// concurrency_limit, forbidden (a caller who may not read agents).
	StartCall(ctx context.Context, in CallStart) (*CallStartAnswer, error)
}
