package data

import (
	"context"
	"encoding/json"
	"time"
)

// MaxEventStreamsPerToken bounds the live event streams one token holds open at once on
// one server process; one more is refused (429 rate_limited with Retry-After).
const MaxEventStreamsPerToken = 5

// EventStreamHeartbeat is how often, by default, an idle event stream sends a comment
// line, so that proxies keep the connection and the client knows it is alive.
const EventStreamHeartbeat = 15 * time.Second

// EventStreamer reads the durable event log for the live event stream
// (GET /api/v1/events/stream): a position to start from, then the events appended after
// a position, in the order they were appended. A position is an event id of the current
// workspace, or "" before its first event.
type EventStreamer interface {
	// StreamStart checks a stream's request and returns its first position: lastEventID
	// when it names an event of the current workspace (a resumed stream), else the
	// workspace's newest event when lastEventID is "" (a new stream starts with what
	// happens next). Errors: validation_failed (an unknown type in types, or a
	// last_event_id that names no event of the workspace).
	StreamStart(ctx context.Context, lastEventID string, types []string) (string, error)
	// StreamEvents returns, oldest first, the current workspace's events of the types
	// (all when types is empty) that the caller may see (docs/api.md, "What a caller
	// sees") among at most limit events appended after position after, and the position
	// after the last event looked at: the next call's after. Errors: validation_failed
	// (an unknown type), not_found (after no longer names an event of the workspace: the
	// workspace was deleted).
	StreamEvents(ctx context.Context, after string, types []string, limit int) ([]*Event, string, error)
}

// Envelope is the event as webhooks and the live event stream deliver it (conventions
// §11): the audit chain's links (prev_hash, hash) stay in the audit log.
func (e *Event) Envelope() ([]byte, error) {
	return json.Marshal(struct {
		ID          string          `json:"id"`
		Type        string          `json:"type"`
		CreatedAt   Time            `json:"created_at"`
		WorkspaceID string          `json:"workspace_id"`
		Actor       Actor           `json:"actor"`
		Data        json.RawMessage `json:"data"`
	}{e.ID, e.Type, e.CreatedAt, e.WorkspaceID, e.Actor, e.Data})
}
