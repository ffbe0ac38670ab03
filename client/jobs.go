package client

import (
	"context"
	"iter"
	"net/url"

	"github.com/voiceapi/voiceapi/data"
)

// JobsService reads durable background jobs (docs/jobs.md).
type JobsService struct{ c *Client }

// Get returns a job of the current workspace (its status, attempt, progress, last error
// and times) and its ETag; a job whose kind's module the caller lacks is not found.
func (s *JobsService) Get(ctx context.Context, id string, opts ...RequestOption) (*data.Job, string, error) {
	return getRecord[data.Job](ctx, s.c, "jobShow", []string{id}, opts)
}

// List returns one page of the jobs the filter selects among those the caller may read,
// newest first.
func (s *JobsService) List(ctx context.Context, f data.JobFilter, p data.PageRequest, opts ...RequestOption) ([]*data.Job, data.Page, error) {
	res, err := s.c.do(ctx, request{op: "jobList", query: pageQuery(jobQuery(f), p), opts: opts})
	if err != nil {
		return nil, data.Page{}, err
	}
	return list[data.Job](res)
}

// All iterates over every job the filter selects.
func (s *JobsService) All(ctx context.Context, f data.JobFilter, opts ...RequestOption) iter.Seq2[*data.Job, error] {
	return all(ctx, s.c, func(ctx context.Context, p data.PageRequest) ([]*data.Job, data.Page, error) {
		return s.List(ctx, f, p, opts...)
	})
}

func jobQuery(f data.JobFilter) url.Values {
	q := url.Values{}
	for k, v := range map[string]string{"kind": f.Kind, "status": f.Status, "agent_id": f.AgentID} {
		if v != "" {
			q.Set(k, v)
		}
	}
	setTime(q, "from", f.From)
	setTime(q, "to", f.To)
	return q
}
