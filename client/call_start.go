package client

import (
	"context"

	"github.com/voiceapi/voiceapi/data"
)

// Start asks what a call runs (POST /api/v1/calls/start, docs/runtime.md): the call
// registered, the configuration with every variable filled in and its llm_config.api_key
// in clear (keep it in memory for the call only), and the variant chosen. The route
// honours Idempotency-Key (WithIdempotencyKey): a retry after a timeout gets the first
// answer and registers nothing twice.
func (s *CallsService) Start(ctx context.Context, in data.CallStart, opts ...RequestOption) (*data.CallStartAnswer, error) {
	var out data.CallStartAnswer
	b, err := jsonBody(in)
	if err != nil {
		return nil, err
	}
	err = s.c.dataOf(ctx, request{op: "callStart", body: b, contentType: "application/json", opts: opts}, &out)
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// Rollout returns the agent's rollout with each variant's figures; a not_found error
// when none stands.
func (s *AgentsService) Rollout(ctx context.Context, agentID string, opts ...RequestOption) (*data.Rollout, string, error) {
	return getRecord[data.Rollout](ctx, s.c, "rolloutShow", []string{agentID}, opts)
}

// SetRollout starts or changes the agent's rollout.
func (s *AgentsService) SetRollout(ctx context.Context, agentID string, in data.RolloutSet, opts ...RequestOption) (*data.Rollout, string, error) {
	return sendRecord[data.Rollout](ctx, s.c, "rolloutSet", []string{agentID}, in, opts)
}

// EndRollout ends the agent's rollout: its published version is live again.
func (s *AgentsService) EndRollout(ctx context.Context, agentID string, opts ...RequestOption) error {
	return s.c.noContent(ctx, "rolloutEnd", []string{agentID}, nil, opts)
}
