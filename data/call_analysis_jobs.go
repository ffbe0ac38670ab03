package data

import "context"

// AnalysisBackfill is the body of POST /api/v1/agents/{agent_id}/analysis/backfill: the
// agent's calls created in [From, To) are analyzed again, as one job.
type AnalysisBackfill struct {
	From Time `json:"from"`
	To   Time `json:"to"`
	// AgentVersion names the version whose analysis_config the calls are analyzed with
	// (so that a field added since fills past calls); the published version when nil,
	// else the agent's current configuration. Each call's own version's model answers.
	AgentVersion *int `json:"agent_version"`
}

// AnalysisService runs post-call analysis (conventions §24, §26): the agent's model
// fills a call's analysis from its transcript, as a durable job.
type AnalysisService interface {
	// AnalyzeCall queues the analysis of one call and returns its job (the pending one
	// when the call already has one). Errors: not_found (a call the caller may not see),
	// validation_failed (the call's agent version asks analysis for nothing).
	AnalyzeCall(ctx context.Context, callID string) (*Job, error)
	// BackfillAnalysis queues one job that analyzes the agent's calls of a range, with
	// progress. Errors: not_found (the agent), validation_failed (from, to, a version the
	// agent lacks or a configuration that asks for nothing, on agent_version).
	BackfillAnalysis(ctx context.Context, agentID string, in AnalysisBackfill) (*Job, error)
}
