package client

import (
	"context"
	"iter"
	"net/url"
	"time"

	"github.com/voiceapi/voiceapi/data"
)

// AgentTestsService calls the routes of agents' tests (conventions §22).
type AgentTestsService struct{ c *Client }

// List returns one page of the agent's tests, newest first.
func (s *AgentTestsService) List(ctx context.Context, agentID string, p data.PageRequest, opts ...RequestOption) ([]*data.AgentTest, data.Page, error) {
	res, err := s.c.do(ctx, request{op: "agentTestList", pathArgs: []string{agentID}, query: pageQuery(nil, p), opts: opts})
	if err != nil {
		return nil, data.Page{}, err
	}
	return list[data.AgentTest](res)
}

// All iterates over every test of the agent.
func (s *AgentTestsService) All(ctx context.Context, agentID string, opts ...RequestOption) iter.Seq2[*data.AgentTest, error] {
	return all(ctx, s.c, func(ctx context.Context, p data.PageRequest) ([]*data.AgentTest, data.Page, error) {
		return s.List(ctx, agentID, p, opts...)
	})
}

// Create adds a test to the agent.
func (s *AgentTestsService) Create(ctx context.Context, agentID string, in data.AgentTestCreate, opts ...RequestOption) (*data.AgentTest, string, error) {
	return sendRecord[data.AgentTest](ctx, s.c, "agentTestCreate", []string{agentID}, testBody(in), opts)
}

// FromCall makes a scripted test of one of the agent's calls: its caller turns, and
// tool_called for each tool it used.
func (s *AgentTestsService) FromCall(ctx context.Context, agentID, callID string, opts ...RequestOption) (*data.AgentTest, string, error) {
	return sendRecord[data.AgentTest](ctx, s.c, "agentTestFromCall", []string{agentID, callID}, nil, opts)
}

// Get returns a test and its ETag.
func (s *AgentTestsService) Get(ctx context.Context, agentID, id string, opts ...RequestOption) (*data.AgentTest, string, error) {
	return getRecord[data.AgentTest](ctx, s.c, "agentTestShow", []string{agentID, id}, opts)
}

// Update replaces the members in gives (a body of data.AgentTestUpdate's members, such as
// one built from a test by TestBody).
func (s *AgentTestsService) Update(ctx context.Context, agentID, id string, in map[string]any, opts ...RequestOption) (*data.AgentTest, string, error) {
	return sendRecord[data.AgentTest](ctx, s.c, "agentTestUpdate", []string{agentID, id}, in, opts)
}

// Delete removes a test.
func (s *AgentTestsService) Delete(ctx context.Context, agentID, id string, opts ...RequestOption) error {
	return s.c.noContent(ctx, "agentTestDelete", []string{agentID, id}, nil, opts)
}

// testBody is a create's body: max_turns and repeat only when given.
func testBody(in data.AgentTestCreate) map[string]any {
	b := TestBody(data.AgentTest{Name: in.Name, User: in.User, Variables: in.Variables, Mocks: in.Mocks,
		Criteria: in.Criteria, RequiredForPublish: in.RequiredForPublish})
	delete(b, "max_turns")
	delete(b, "repeat")
	if in.MaxTurns.Set {
		b["max_turns"] = in.MaxTurns.V
	}
	if in.Repeat.Set {
		b["repeat"] = in.Repeat.V
	}
	return b
}

// TestBody is the body that writes every writable member of t (for a create or an
// update).
func TestBody(t data.AgentTest) map[string]any {
	t = t.Normalized()
	return map[string]any{"name": t.Name, "user": t.User, "variables": t.Variables, "max_turns": t.MaxTurns,
		"mocks": t.Mocks, "criteria": t.Criteria, "required_for_publish": t.RequiredForPublish, "repeat": t.Repeat}
}

// TestRunsService calls the routes of test runs and the publish gate (conventions §22).
type TestRunsService struct{ c *Client }

// Start queues a run of the agent's tests (in.TestIDs, or all) on its draft or a version;
// the run comes back queued.
func (s *TestRunsService) Start(ctx context.Context, agentID string, in data.TestRunCreate, opts ...RequestOption) (*data.TestRun, error) {
	body := map[string]any{"version": in.Version}
	if in.TestIDs.Set {
		body["test_ids"] = in.TestIDs.V
	}
	r, _, err := sendRecord[data.TestRun](ctx, s.c, "testRunCreate", []string{agentID}, body, opts)
	return r, err
}

// List returns one page of the agent's runs, newest first, without results, those in
// f.Status only when given.
func (s *TestRunsService) List(ctx context.Context, agentID string, f data.TestRunFilter, p data.PageRequest, opts ...RequestOption) ([]*data.TestRun, data.Page, error) {
	q := url.Values{}
	if f.Status != "" {
		q.Set("status", f.Status)
	}
	res, err := s.c.do(ctx, request{op: "testRunList", pathArgs: []string{agentID}, query: pageQuery(q, p), opts: opts})
	if err != nil {
		return nil, data.Page{}, err
	}
	return list[data.TestRun](res)
}

// Get returns a run with its results.
func (s *TestRunsService) Get(ctx context.Context, agentID, id string, opts ...RequestOption) (*data.TestRun, error) {
	r, _, err := getRecord[data.TestRun](ctx, s.c, "testRunShow", []string{agentID, id}, opts)
	return r, err
}

// Wait reads the run every poll until it has ended (passed, failed or error) or ctx ends,
// and returns it with its results.
func (s *TestRunsService) Wait(ctx context.Context, agentID, id string, poll time.Duration, opts ...RequestOption) (*data.TestRun, error) {
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		r, err := s.Get(ctx, agentID, id, opts...)
		if err != nil || data.TestRunFinished(r.Status) {
			return r, err
		}
		select {
		case <-ctx.Done():
			return r, ctx.Err()
		case <-t.C:
		}
	}
}

// PublishGate says whether the agent's draft may be published now.
func (s *TestRunsService) PublishGate(ctx context.Context, agentID string, opts ...RequestOption) (*data.PublishGate, error) {
	var g data.PublishGate
	err := s.c.dataOf(ctx, request{op: "publishGate", pathArgs: []string{agentID}, opts: opts}, &g)
	return &g, err
}
