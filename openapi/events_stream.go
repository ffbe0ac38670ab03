package openapi

import (
	"net/http"
	"strconv"

	"github.com/voiceapi/voiceapi/data"
)

// eventStreamMedia is the live event stream's media type (Server-Sent Events).
const eventStreamMedia = "text/event-stream"

// eventStreamExample is what a client reads: a comment on opening, then one message per
// event (id, event, data), heartbeats as comments.
const eventStreamExample = ": voiceapi event stream\n\n" +
	"id: evt_01JD6Q3V9X8Y7Z6W5V4U3T2S1R\nevent: call.ended\n" +
	`data: {"id":"evt_01JD6Q3V9X8Y7Z6W5V4U3T2S1R","type":"call.ended","created_at":"2026-11-21T10:04:05.123Z","workspace_id":"ws_01JD6Q0000000000000000000A","actor":{"type":"user","user_id":"usr_01JD6Q0000000000000000000B","token_id":7},"data":{"id":"call_01JD6Q0000000000000000000C","status":"ended"}}` +
	"\n\n: heartbeat\n\n"

func init() {
	opDocs["GET /api/v1/events/stream"] = opDoc{Tag: "Audit Log", Summary: "The workspace's events, live, as Server-Sent Events (owners and admins)",
		Description: "A text/event-stream of the current workspace's events (the audit log's, as webhooks receive them) from the moment of the request, " +
			"or after Last-Event-ID. Each message has `id:` (the event id), `event:` (its type) and `data:` (the event as a webhook delivery's body: " +
			"id, type, created_at, workspace_id, actor, data; the payload per type is in the webhooks section). " +
			"A comment line (`: heartbeat`) comes every " + strconv.Itoa(int(data.EventStreamHeartbeat.Seconds())) + " seconds (by default) when nothing else does. " +
			"Reconnect with the last id received in Last-Event-ID (or last_event_id) to miss nothing and get nothing twice; " +
			"an id that names no event of the workspace is 422 naming last_event_id. " +
			"A token holds at most " + strconv.Itoa(data.MaxEventStreamsPerToken) + " streams at once per server: one more is 429 with Retry-After. " +
			"The server drops a stream whose client reads nothing for its write timeout, and ends every stream when it shuts down: resume with Last-Event-ID. See docs/events.md.",
		Shape: shapeRaw, Media: eventStreamMedia,
		Query: []queryParam{
			{"types", "Only events of these types: comma-separated, or the parameter repeated. Every event type when absent; an unknown type is 422.",
				map[string]any{"type": "array", "items": map[string]any{"type": "string", "enum": anyStrings(data.EventTypes)}}},
			{"last_event_id", "Resume after this event, for clients that cannot send the Last-Event-ID header (the header wins when both are sent).", map[string]any{"type": "string"}},
		},
		Headers: []queryParam{{"Last-Event-ID", "Resume after this event: the id of the last message received (a browser's EventSource sends it when it reconnects).", map[string]any{"type": "string"}}},
		Errors:  []int{http.StatusUnprocessableEntity, http.StatusServiceUnavailable},
		Example: eventStreamExample,
	}
}

func anyStrings(list []string) []any {
	out := make([]any, len(list))
	for i, v := range list {
		out[i] = v
	}
	return out
}
