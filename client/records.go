package client

import (
	"context"
	"iter"
	"net/http"
	"net/url"
	"time"

	"github.com/voiceapi/voiceapi/data"
)

// NumbersService calls the phone number routes.
type NumbersService struct{ c *Client }

func numberQuery(f data.NumberFilter) url.Values {
	q := url.Values{}
	if f.AgentID != "" {
		q.Set("agent_id", f.AgentID)
	}
	if f.Q != "" {
		q.Set("q", f.Q)
	}
	return q
}

// List returns one page of numbers, newest first.
func (s *NumbersService) List(ctx context.Context, f data.NumberFilter, p data.PageRequest, opts ...RequestOption) ([]*data.Number, data.Page, error) {
	res, err := s.c.do(ctx, request{op: "numberList", query: pageQuery(numberQuery(f), p), opts: opts})
	if err != nil {
		return nil, data.Page{}, err
	}
	return list[data.Number](res)
}

// All iterates over every number the filter selects.
func (s *NumbersService) All(ctx context.Context, f data.NumberFilter, opts ...RequestOption) iter.Seq2[*data.Number, error] {
	return all(ctx, s.c, func(ctx context.Context, p data.PageRequest) ([]*data.Number, data.Page, error) {
		return s.List(ctx, f, p, opts...)
	})
}

// Create registers a number.
func (s *NumbersService) Create(ctx context.Context, in data.NumberCreate, opts ...RequestOption) (*data.Number, string, error) {
	return sendRecord[data.Number](ctx, s.c, "numberCreate", nil, in, opts)
}

// Get returns a number.
func (s *NumbersService) Get(ctx context.Context, id string, opts ...RequestOption) (*data.Number, string, error) {
	return getRecord[data.Number](ctx, s.c, "numberShow", []string{id}, opts)
}

// Update changes the set fields; a set agent id of nil unbinds.
func (s *NumbersService) Update(ctx context.Context, id string, in data.NumberUpdate, opts ...RequestOption) (*data.Number, string, error) {
	return sendRecord[data.Number](ctx, s.c, "numberUpdate", []string{id}, in, opts)
}

// Delete removes a number.
func (s *NumbersService) Delete(ctx context.Context, id string, opts ...RequestOption) error {
	return s.c.noContent(ctx, "numberDelete", []string{id}, nil, opts)
}

// CallsService calls the call history routes.
type CallsService struct{ c *Client }

func callQuery(f data.CallFilter) url.Values {
	q := url.Values{}
	set := func(k, v string) {
		if v != "" {
			q.Set(k, v)
		}
	}
	set("agent_id", f.AgentID)
	set("number_id", f.NumberID)
	set("direction", f.Direction)
	set("status", f.Status)
	setTime(q, "from", f.From)
	setTime(q, "to", f.To)
	return q
}

func setTime(q url.Values, k string, t time.Time) {
	if !t.IsZero() {
		q.Set(k, t.UTC().Format(time.RFC3339Nano))
	}
}

// List returns one page of calls, newest first.
func (s *CallsService) List(ctx context.Context, f data.CallFilter, p data.PageRequest, opts ...RequestOption) ([]*data.Call, data.Page, error) {
	res, err := s.c.do(ctx, request{op: "callList", query: pageQuery(callQuery(f), p), opts: opts})
	if err != nil {
		return nil, data.Page{}, err
	}
	return list[data.Call](res)
}

// All iterates over every call the filter selects.
func (s *CallsService) All(ctx context.Context, f data.CallFilter, opts ...RequestOption) iter.Seq2[*data.Call, error] {
	return all(ctx, s.c, func(ctx context.Context, p data.PageRequest) ([]*data.Call, data.Page, error) {
		return s.List(ctx, f, p, opts...)
	})
}

// Register stores a new call (the voice runtime).
func (s *CallsService) Register(ctx context.Context, in data.CallCreate, opts ...RequestOption) (*data.Call, string, error) {
	return sendRecord[data.Call](ctx, s.c, "callRegister", nil, in, opts)
}

// Get returns a call.
func (s *CallsService) Get(ctx context.Context, id string, opts ...RequestOption) (*data.Call, string, error) {
	return getRecord[data.Call](ctx, s.c, "callShow", []string{id}, opts)
}

// Update moves a call forward (the set fields) and returns it with its ETag; nil and ""
// for a key that may change calls but not read them (calls:runtime), which the server
// answers with 204.
func (s *CallsService) Update(ctx context.Context, id string, in data.CallUpdate, opts ...RequestOption) (*data.Call, string, error) {
	b, err := jsonBody(in)
	if err != nil {
		return nil, "", err
	}
	res, err := s.c.do(ctx, request{op: "callUpdate", pathArgs: []string{id}, opts: opts, body: b, contentType: "application/json"})
	if err != nil {
		return nil, "", err
	}
	if res.status == http.StatusNoContent {
		return nil, "", nil // a key that may change calls but not read them (calls:runtime)
	}
	return record[data.Call](res)
}

// Delete removes a call.
func (s *CallsService) Delete(ctx context.Context, id string, opts ...RequestOption) error {
	return s.c.noContent(ctx, "callDelete", []string{id}, nil, opts)
}

// AnalyticsService calls the analytics routes.
type AnalyticsService struct{ c *Client }

// Calls returns call totals, a series by hour or day and the disconnection reasons over
// [q.From, q.To) (zero times take the server's defaults).
func (s *AnalyticsService) Calls(ctx context.Context, q data.CallAnalyticsQuery, opts ...RequestOption) (*data.CallAnalytics, error) {
	v := url.Values{}
	setTime(v, "from", q.From)
	setTime(v, "to", q.To)
	if q.AgentID != "" {
		v.Set("agent_id", q.AgentID)
	}
	if q.Interval != "" {
		v.Set("interval", q.Interval)
	}
	var out data.CallAnalytics
	if err := s.c.dataOf(ctx, request{op: "callAnalytics", query: v, opts: opts}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// SubscriptionService calls the subscription route.
type SubscriptionService struct{ c *Client }

// Get returns the workspace's plan, limits and usage.
func (s *SubscriptionService) Get(ctx context.Context, opts ...RequestOption) (*data.Subscription, string, error) {
	return getRecord[data.Subscription](ctx, s.c, "subscriptionShow", nil, opts)
}

// AuditService calls the audit log route.
type AuditService struct{ c *Client }

func auditQuery(f data.AuditFilter) url.Values {
	q := url.Values{}
	if f.Type != "" {
		q.Set("type", f.Type)
	}
	if f.Actor != "" {
		q.Set("actor", f.Actor)
	}
	setTime(q, "from", f.From.Time)
	setTime(q, "to", f.To.Time)
	return q
}

// List returns one page of the workspace's events, newest first.
func (s *AuditService) List(ctx context.Context, f data.AuditFilter, p data.PageRequest, opts ...RequestOption) ([]*data.Event, data.Page, error) {
	res, err := s.c.do(ctx, request{op: "auditLog", query: pageQuery(auditQuery(f), p), opts: opts})
	if err != nil {
		return nil, data.Page{}, err
	}
	return list[data.Event](res)
}

// All iterates over every event the filter selects.
func (s *AuditService) All(ctx context.Context, f data.AuditFilter, opts ...RequestOption) iter.Seq2[*data.Event, error] {
	return all(ctx, s.c, func(ctx context.Context, p data.PageRequest) ([]*data.Event, data.Page, error) {
		return s.List(ctx, f, p, opts...)
	})
}

// Head returns the newest link of the workspace's audit chain, to record elsewhere: a
// later chain that does not lead to it was rewritten.
func (s *AuditService) Head(ctx context.Context, opts ...RequestOption) (*data.AuditHead, error) {
	var out data.AuditHead
	if err := s.c.dataOf(ctx, request{op: "auditHead", opts: opts}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Verify recomputes the workspace's audit chain on the server and names every fault.
func (s *AuditService) Verify(ctx context.Context, opts ...RequestOption) (*data.AuditVerification, error) {
	var out data.AuditVerification
	if err := s.c.dataOf(ctx, request{op: "auditVerify", opts: opts}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
