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
