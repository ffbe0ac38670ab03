package bolt

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"time"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// Buckets of the call-start contract: the open calls of each workspace, and agents'
// rollouts.
var (
	// bucketCallsOpen holds "<ws>\x00<call id>" → an OpenCall's agent, version and start
	// for each call registered or ongoing: what a concurrency count reads, without
	// decoding a call.
	bucketCallsOpen = []byte("calls_open")
	// bucketRollouts holds agent id → its rollout (JSON).
	bucketRollouts = []byte("rollouts")
)

func init() {
	allBuckets = append(allBuckets, bucketCallsOpen, bucketRollouts)
	workspaceCascades = append(workspaceCascades, func(db *DB, tx *bbolt.Tx, ws string) error {
		if err := deleteScopePrefix(tx.Bucket(bucketCallsOpen), ws); err != nil {
			return err
		}
		return deleteWorkspaceRollouts(tx, ws)
	})
	agentDeleteHooks = append(agentDeleteHooks, func(db *DB, tx *bbolt.Tx, ws, agentID string) error {
		return tx.Bucket(bucketRollouts).Delete([]byte(agentID))
	})
}

func openCallKey(ws, id string) []byte { return indexKey(ws, id) }

// encodeOpenCall packs an open call's entry: since (Unix ms, 8 bytes), the version (4
// bytes, 0 for none) and the agent id.
func encodeOpenCall(c *data.Call) []byte {
	since := c.CreatedAt.Time
	if c.StartedAt != nil {
		since = c.StartedAt.Time
	}
	v := make([]byte, 12, 12+len(c.AgentID))
	binary.BigEndian.PutUint64(v, uint64(since.UnixMilli()))
	if c.AgentVersion != nil {
		binary.BigEndian.PutUint32(v[8:], uint32(*c.AgentVersion))
	}
	return append(v, c.AgentID...)
}

func decodeOpenCall(id string, v []byte) (service.OpenCall, error) {
	if len(v) < 12 {
		return service.OpenCall{}, fmt.Errorf("open call %s: entry of %d bytes", id, len(v))
	}
	o := service.OpenCall{ID: id, AgentID: string(v[12:]),
		Since: time.UnixMilli(int64(binary.BigEndian.Uint64(v))).UTC()}
	if n := int(binary.BigEndian.Uint32(v[8:])); n > 0 {
		o.AgentVersion = &n
	}
	return o, nil
}

// moveOpenCall keeps bucketCallsOpen in step with a call's write: old is the stored call
// (nil for a new one), next the call written (nil for a deleted one).
func moveOpenCall(tx *bbolt.Tx, old, next *data.Call) error {
	b := tx.Bucket(bucketCallsOpen)
	if next != nil && !data.CallFinal(next.Status) {
		return b.Put(openCallKey(next.WorkspaceID, next.ID), encodeOpenCall(next))
	}
	if old != nil && !data.CallFinal(old.Status) {
		return b.Delete(openCallKey(old.WorkspaceID, old.ID))
	}
	return nil
}

// OpenCalls implements service.CallStartTx.
func (t tx) OpenCalls(ws string) ([]service.OpenCall, error) {
	var out []service.OpenCall
	prefix := indexKey(ws, "")
	c := t.b.Bucket(bucketCallsOpen).Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		o, err := decodeOpenCall(string(k[len(prefix):]), v)
		if err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, nil
}

// fillOpenCalls indexes the open calls of a file written before bucketCallsOpen existed
// (the schema 4 → 5 migration): each workspace's registered and ongoing calls, found
// through their status scopes.
func fillOpenCalls(tx *bbolt.Tx) error {
	ix := callIndexOf(tx)
	calls := tx.Bucket(bucketCalls)
	return tx.Bucket(bucketWorkspaces).ForEach(func(ws, _ []byte) error {
		for _, status := range []string{data.CallRegistered, data.CallOngoing} {
			for _, id := range ix.ids(string(ws) + "/s/" + status) {
				var c data.Call
				found, err := getJSON(calls, []byte(id), &c)
				if err != nil || !found {
					return err
				}
				if err := moveOpenCall(tx, nil, &c); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// NumberByPhone implements service.NumberTx.
func (t tx) NumberByPhone(phone string) (*data.Number, error) {
	id := t.b.Bucket(bucketNumbersByPhone).Get([]byte(phone))
	if id == nil {
		return nil, nil
	}
	return t.Number(string(id))
}

// Rollout implements service.CallStartTx. The slot map is a member of the stored record
// ("slots"); a record stored before it has none, which reads as nil (no schema change).
func (t tx) Rollout(agentID string) (*data.StoredRollout, error) {
	var r data.StoredRollout
	found, err := getJSON(t.b.Bucket(bucketRollouts), []byte(agentID), &r)
	if err != nil || !found {
		return nil, err
	}
	return &r, nil
}

// PutRollout implements service.CallStartTx.
func (t tx) PutRollout(r *data.StoredRollout) error {
	return putJSON(t.b.Bucket(bucketRollouts), []byte(r.AgentID), r)
}

// DeleteRollout implements service.CallStartTx.
func (t tx) DeleteRollout(agentID string) error {
	return t.b.Bucket(bucketRollouts).Delete([]byte(agentID))
}

// deleteWorkspaceRollouts removes the rollouts of a deleted workspace's agents: rollouts
// are few (one per agent at most), so they are found by reading them.
func deleteWorkspaceRollouts(tx *bbolt.Tx, ws string) error {
	b := tx.Bucket(bucketRollouts)
	var keys [][]byte
	err := b.ForEach(func(k, v []byte) error {
		var r data.Rollout
		if err := jsonUnmarshal(v, &r); err != nil {
			return err
		}
		if r.WorkspaceID == ws {
			keys = append(keys, append([]byte(nil), k...))
		}
		return nil
	})
	if err != nil {
		return err
	}
	return deleteKeys(b, keys)
}
