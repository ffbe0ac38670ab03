package client

import (
	"context"
	"io"
	"time"
)

// SetSleep replaces the wait between attempts (tests move a server clock instead).
func SetSleep(c *Client, f func(ctx context.Context, d time.Duration) error) { c.sleep = f }

// Operations returns the route table as operationId → method, path and client method.
func Operations() map[string][3]string {
	out := map[string][3]string{}
	for id, op := range operations {
		out[id] = [3]string{op.Method, op.Path, op.Func}
	}
	return out
}

// VerifyWebhookAt is VerifyWebhook at a given time.
var VerifyWebhookAt = verifyWebhookAt

// ReadEventStream reads an event stream from r, as Stream does from a response, resuming
// after lastID.
func ReadEventStream(r io.Reader, lastID string) *EventStream {
	return newEventStream(io.NopCloser(r), lastID)
}
