package service

// EventWorkspaceTx is an optional capability of a Tx (bolt implements it): the workspace
// of a stored event, read without decoding the event's payload. The fan-out reads every
// recorded event once, inside the shared commit, only to find its workspace's webhooks;
// most workspaces have none, and decoding the whole payload (an agent's full record) for
// nothing was a sixth of a write's CPU, on the one core that commits run on. An engine
// without it gets Event, as before.
type EventWorkspaceTx interface {
	// EventWorkspace returns the WorkspaceID of the stored event id (what Event(id) would
	// give), "" when there is no such event (or its WorkspaceID is empty: no webhook can
	// take it either way).
	EventWorkspace(id string) (string, error)
}
