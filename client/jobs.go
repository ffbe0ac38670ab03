package client

import (
	"context"

	"github.com/voiceapi/voiceapi/data"
)

// JobsService reads durable background jobs (docs/jobs.md).
type JobsService struct{ c *Client }

// Get returns a job of the current workspace (its status, attempt, progress, last error
// and times) and its ETag; a job whose kind's module the caller lacks is not found.
func (s *JobsService) Get(ctx context.Context, id string, opts ...RequestOption) (*data.Job, string, error) {
	return getRecord[data.Job](ctx, s.c, "jobShow", []string{id}, opts)
}
