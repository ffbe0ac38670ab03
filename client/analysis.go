package client

import (
	"context"
	"net/url"
	"strconv"

	"github.com/voiceapi/voiceapi/data"
)

// Analysis returns one post-call analysis field's figures over [q.From, q.To) (zero times
// take the server's defaults): counts per value, number statistics, the success rate,
// per bucket and per agent version.
func (s *AnalyticsService) Analysis(ctx context.Context, q data.AnalysisQuery, opts ...RequestOption) (*data.AnalysisFigures, error) {
	v := url.Values{"agent_id": {q.AgentID}, "field": {q.Field}}
	setTime(v, "from", q.From)
	setTime(v, "to", q.To)
	if q.Version != nil {
		v.Set("agent_version", strconv.Itoa(*q.Version))
	}
	if q.Interval != "" {
		v.Set("interval", q.Interval)
	}
	var out data.AnalysisFigures
	if err := s.c.dataOf(ctx, request{op: "analysisFigures", query: v, opts: opts}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// PricesService calls the price table routes (owners and admins).
type PricesService struct{ c *Client }

// Get returns the workspace's price table and its ETag.
func (s *PricesService) Get(ctx context.Context, opts ...RequestOption) (*data.PriceTable, string, error) {
	return getRecord[data.PriceTable](ctx, s.c, "priceTableShow", nil, opts)
}

// Set replaces the workspace's price table (IfMatch honoured).
func (s *PricesService) Set(ctx context.Context, in data.PriceTableSet, opts ...RequestOption) (*data.PriceTable, string, error) {
	return sendRecord[data.PriceTable](ctx, s.c, "priceTableSet", nil, in, opts)
}

// Analyze queues the analysis of a call by its agent's model and returns the job (202).
func (s *CallsService) Analyze(ctx context.Context, callID string, opts ...RequestOption) (*data.Job, error) {
	var out data.Job
	if err := s.c.dataOf(ctx, request{op: "callAnalyze", pathArgs: []string{callID}, opts: opts}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// BackfillAnalysis queues one job that analyzes the agent's calls of a range again.
func (s *AgentsService) BackfillAnalysis(ctx context.Context, agentID string, in data.AnalysisBackfill, opts ...RequestOption) (*data.Job, error) {
	b, err := jsonBody(in)
	if err != nil {
		return nil, err
	}
	var out data.Job
	r := request{op: "analysisBackfill", pathArgs: []string{agentID}, opts: opts, body: b, contentType: "application/json"}
	if err := s.c.dataOf(ctx, r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
