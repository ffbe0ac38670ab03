package service

import (
	"time"

	"github.com/voiceapi/voiceapi/data"
)

// OpenCall is what counting a workspace's open calls needs of one call (registered or
// ongoing): its agent, the version it runs, and when it began (started_at, else
// created_at), from which the service judges it abandoned.
type OpenCall struct {
	ID           string
	AgentID      string
	AgentVersion *int
	Since        time.Time
}

// CallStartTx is the storage of the call-start contract (conventions §23).
type CallStartTx interface {
	// OpenCalls returns the workspace's calls whose status is registered or ongoing, from
	// an index storage keeps with the calls (InsertCall, PutCall, DeleteCall), so its
	// cost follows the open calls, not the workspace's history.
	OpenCalls(workspaceID string) ([]OpenCall, error)
	// Rollout returns the agent's rollout with its slot map (nil when stored without
	// one), nil when none stands.
	Rollout(agentID string) (*data.StoredRollout, error)
	// PutRollout stores the agent's rollout with its slot map, replacing the one it had.
	// An agent's delete and a workspace's delete remove their rollouts (a cascade).
	PutRollout(r *data.StoredRollout) error
	// DeleteRollout removes the agent's rollout; none is no error.
	DeleteRollout(agentID string) error
}
