package service

import (
	"slices"
	"strings"
	"time"

	"github.com/voiceapi/voiceapi/data"
)

// WebhookTx stores webhooks (conventions §14). A webhook's deliveries belong to it.
type WebhookTx interface {
	// Webhook returns the webhook with its sealed secret, nil when there is none.
	Webhook(id string) (*data.WebhookRecord, error)
	// Webhooks returns one newest-first page of the workspace's webhooks.
	Webhooks(workspaceID string, req data.PageRequest) ([]*data.WebhookRecord, data.Page, error)
	// WorkspaceWebhooks returns every webhook of the workspace (the fan-out reads them all;
	// a workspace has at most its webhooks limit of them).
	WorkspaceWebhooks(workspaceID string) ([]*data.WebhookRecord, error)
	// PutWebhook stores w, new or changed, as given (the secret already sealed), indexed
	// under its workspace.
	PutWebhook(w *data.WebhookRecord) error
	// DeleteWebhook removes the webhook and its index entry, and cascades to its
	// deliveries, pending ones included (they leave the due index: nothing is posted to a
	// deleted webhook). Deleting an absent webhook does nothing.
	DeleteWebhook(id string) error
}

// DeliveryTx stores delivery records and the dispatcher's two queues: the outbox of
// recorded events not yet fanned out (filled by EventTx.AppendEvent), and the pending
// deliveries ordered by due time.
type DeliveryTx interface {
	// Delivery returns one delivery record, nil when there is none.
	Delivery(id string) (*data.Delivery, error)
	// Deliveries returns one newest-first page of the webhook's delivery records that f
	// keeps (DeliveryFilter.Keeps); a cursor made under another filter is refused.
	Deliveries(webhookID string, f DeliveryFilter, req data.PageRequest) ([]*data.Delivery, data.Page, error)
	// PutDelivery stores d, new or changed, indexed under its webhook, and keeps the due
	// index: a pending delivery is listed at its NextAttemptAt, any other is not (a
	// delivery that stops being pending leaves it). Storing a pending delivery wakes the
	// dispatcher once the transaction commits.
	PutDelivery(d *data.Delivery) error
	// DueDeliveries returns the ids of up to limit pending deliveries due at now, oldest
	// due first, passing over those for which skip (may be nil) reports true, and when the
	// next pending delivery not returned falls due (zero when there is none). In a write
	// transaction an engine shared by several processes passes over the deliveries that
	// a concurrent transaction is claiming (PostgreSQL: FOR UPDATE SKIP LOCKED).
	DueDeliveries(now time.Time, limit int, skip func(id string) bool) ([]string, time.Time, error)
	// Outbox returns the ids of up to limit events waiting to be fanned out, oldest first.
	Outbox(limit int) ([]string, error)
	// RemoveFromOutbox takes an event off the outbox (the event itself stays).
	RemoveFromOutbox(eventID string) error
	// PruneDeliveries deletes up to limit finished delivery records made before before,
	// oldest first, with their entries in the webhook's list, and returns how many it
	// deleted (fewer than limit: nothing older is left to delete). Finished is any status
	// but pending: succeeded, failed, and retrying (that attempt is over; its retry is a
	// record of its own). Made before is both the time its id carries (data.IDTime) and
	// its created_at before before: an engine walks the time-ordered ids up to
	// data.IDFloor(data.PrefixDelivery, before) and stops there. A pending record is
	// never deleted, however old. Events, the outbox and the audit chain are untouched.
	PruneDeliveries(before time.Time, limit int) (int, error)
}

// EventReadTx reads stored events: the audit log, replay and the chain verification.
type EventReadTx interface {
	// Event returns one event, nil when there is none.
	Event(id string) (*data.Event, error)
	// EventPage returns one newest-first page of the workspace's events that f keeps.
	EventPage(workspaceID string, f EventFilter, req data.PageRequest) ([]*data.Event, data.Page, error)
	// EventsNewestFirst calls fn with the workspace's events, newest first, until fn
	// returns false or an error (which EventsNewestFirst returns).
	EventsNewestFirst(workspaceID string, fn func(e *data.Event) (bool, error)) error
	// EventsBetween is EventsNewestFirst for the events created in [from, to) alone (a
	// zero bound is none): it seeks to them rather than read every newer event, a clock
	// that stepped back allowed for (an event's time is not in chain order).
	EventsBetween(workspaceID string, from, to time.Time, fn func(e *data.Event) (bool, error)) error
	// ChainWorkspaces returns, sorted, every workspace with an audit chain: a chain head,
	// or events still indexed under it.
	ChainWorkspaces() ([]string, error)
	// ChainEvents calls fn with each event id indexed under the workspace, oldest first,
	// and the stored event: nil with a nil readErr when the index names an event that is
	// not stored, nil with readErr when the stored bytes cannot be read as an event. It
	// reports what is stored and judges nothing: the verification is the caller's.
	ChainEvents(workspaceID string, fn func(id string, e *data.Event, readErr error) error) error
}

// DeliveryFilter selects the deliveries of a page by their event's type: the part of a
// webhook's log its caller may read (readableDeliveries). The zero filter keeps all.
type DeliveryFilter struct {
	// Types, when not nil, are the event types kept, without repeats: a page walks each
	// one's deliveries and no other's, so the others neither cost nor shape it. An
	// empty, non-nil list keeps none.
	Types []string
}

// Keeps reports whether f keeps a delivery of eventType: the one test both engines and
// a retry apply.
func (f DeliveryFilter) Keeps(eventType string) bool {
	return f.Types == nil || slices.Contains(f.Types, eventType)
}

// Key names f in cursors: "" for the zero filter.
func (f DeliveryFilter) Key() string {
	if f.Types == nil {
		return ""
	}
	return "types:" + strings.Join(f.Types, ",")
}

// EventFilter selects the events of a page. Storage walks the workspace's events newest
// first and keeps those Keep accepts.
type EventFilter struct {
	// Key names the filter: a cursor made under one key is refused under another, rather
	// than silently reinterpreted. "" for no filter.
	Key string
	// Keep reports whether an event belongs in the page; nil keeps every event.
	Keep func(e *data.Event) bool
	// MaxScan bounds the events one page looks at (0: no bound): a filter that matches
	// nothing in a long log still answers promptly, with a cursor that resumes past what
	// was looked at.
	MaxScan int
	// Type and Actor, when not "", are an event's type and its actor's user id that Keep
	// requires: storage may walk only the events of that type or actor (an index of
	// each) instead of looking at the others. Keep still decides.
	Type, Actor string
	// Scopes, when not nil, are the only (agent, type) pairs whose events (by their
	// data.Event.AgentID, and Kind where a pair names one) Keep may accept: storage walks those pairs' events merged in
	// chain order and never reads or counts another's, so the events of agents or types
	// a caller may not see neither cost its pages nor shape them. They take the place of Type's
	// and Actor's walks (Keep still decides those). An empty, non-nil list lists nothing.
	Scopes []EventScope
	// From and To, when not zero, bound the created_at Keep requires to [From, To):
	// storage seeks to the part of the chain that can hold such events and looks at no
	// other (EventsBetween), so a window long past costs and shapes pages as one of
	// today does. Keep still decides.
	From, To time.Time
}

// EventScope is one (agent, type) pair of EventFilter.Scopes; Agent "" is the events
// about no agent. AnyAgent makes it the type's events whatever their agent (Agent
// unused): a caller who sees every agent but not every type walks its types alone. Kind
// is the pair's events' kind (data.Event.Kind), "" for the events without one: a caller
// who reads some job kinds walks only their job.failed events. A scope of any agent
// without a kind is every event of its type, whatever its kind.
type EventScope struct {
	Agent, Type, Kind string
	AnyAgent          bool
}
