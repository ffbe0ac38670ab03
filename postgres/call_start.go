package postgres

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

func init() {
	workspaceCascades = append(workspaceCascades, func(t *tx, ws string) error {
		_, err := t.exec(`DELETE FROM agent_rollouts WHERE workspace_id = $1`, ws)
		return err
	})
	agentDeleteHooks = append(agentDeleteHooks, func(t *tx, ws, agentID string) error {
		return t.DeleteRollout(agentID)
	})
}

// OpenCalls implements service.CallStartTx: the partial index calls_open holds the
// workspace's registered and ongoing calls only (migration 0014). The count is read under
// the workspace's lock (locks.go), as the call it admits is written: a start, whose
// caller's workspace is locked before its snapshot, sees every start committed before it
// and conflicts with none, so starts against a limit take turns instead of failing.
func (t *tx) OpenCalls(ws string) ([]service.OpenCall, error) {
	if err := t.lockWorkspace(ws); err != nil {
		return nil, err
	}
	rows, err := t.query(`SELECT id, agent_id, agent_version, coalesce(started_at, created_at) FROM calls
		WHERE workspace_id = $1 AND status IN ('registered', 'ongoing')`, ws)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []service.OpenCall
	for rows.Next() {
		var o service.OpenCall
		var since time.Time
		if err := rows.Scan(&o.ID, &o.AgentID, &o.AgentVersion, &since); err != nil {
			return nil, err
		}
		o.Since = since.UTC()
		out = append(out, o)
	}
	return out, rows.Err()
}

// Rollout implements service.CallStartTx: the record is body, its slot map the column
// slots (migration 0020; NULL for a rollout stored before it).
func (t *tx) Rollout(agentID string) (*data.StoredRollout, error) {
	var raw []byte
	var slots []int32
	if err := t.queryRow(`SELECT body, slots FROM agent_rollouts WHERE agent_id = $1`, agentID).Scan(&raw, &slots); err != nil {
		return nil, noRows(err)
	}
	var r data.StoredRollout
	if err := data.DecodeJSON(raw, &r.Rollout); err != nil {
		return nil, fmt.Errorf("decoding the rollout of %s: %w", agentID, err)
	}
	if slots != nil {
		r.Slots = make([]int, len(slots))
		for i, v := range slots {
			r.Slots[i] = int(v)
		}
	}
	return &r, nil
}

// PutRollout implements service.CallStartTx.
func (t *tx) PutRollout(r *data.StoredRollout) error {
	raw, err := json.Marshal(&r.Rollout)
	if err != nil {
		return err
	}
	var slots []int32 // nil: NULL, no map
	if r.Slots != nil {
		slots = make([]int32, len(r.Slots))
		for i, v := range r.Slots {
			slots[i] = int32(v)
		}
	}
	_, err = t.exec(`INSERT INTO agent_rollouts (agent_id, workspace_id, body, slots) VALUES ($1, $2, $3, $4)
		ON CONFLICT (agent_id) DO UPDATE SET body = EXCLUDED.body, slots = EXCLUDED.slots`, r.AgentID, r.WorkspaceID, raw, slots)
	return err
}

// DeleteRollout implements service.CallStartTx.
func (t *tx) DeleteRollout(agentID string) error {
	_, err := t.exec(`DELETE FROM agent_rollouts WHERE agent_id = $1`, agentID)
	return err
}
