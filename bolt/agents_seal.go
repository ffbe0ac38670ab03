package bolt

import (
	"bytes"

	"go.etcd.io/bbolt"
)

// bucketAgentsToSeal lists ("<ws>\x00<agent>") the agents whose credential headers the
// upgrade's job (service/agent_seal_upgrade.go) has yet to seal: every agent stored when
// the file was upgraded to schema 16, and every agent a move copied.
var bucketAgentsToSeal = []byte("agents_to_seal")

func init() { allBuckets = append(allBuckets, bucketAgentsToSeal) }

// AgentsToSeal implements service.AgentTx (schema 16's list).
func (t tx) AgentsToSeal(ws string, limit int) ([]string, error) {
	prefix := indexKey(ws, "")
	var ids []string
	c := t.b.Bucket(bucketAgentsToSeal).Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix) && len(ids) < limit; k, _ = c.Next() {
		ids = append(ids, string(k[len(prefix):]))
	}
	return ids, nil
}

// AgentSealed implements service.AgentTx.
func (t tx) AgentSealed(ws, id string) error {
	return indexDelete(t.b.Bucket(bucketAgentsToSeal), ws, id)
}

// ListAgentToSeal implements service.AgentTx.
func (t tx) ListAgentToSeal(ws, id string) error {
	return indexPut(t.b.Bucket(bucketAgentsToSeal), ws, id)
}

// listAgentsToSeal lists every stored agent for the upgrade's job (the schema 15 → 16
// migration): a header stored in the clear may be in any row or version, and telling
// which is the job's to do, not storage's. Only the index is read.
func listAgentsToSeal(tx *bbolt.Tx) error {
	toSeal := tx.Bucket(bucketAgentsToSeal)
	return tx.Bucket(bucketAgentsByWS).ForEach(func(k, _ []byte) error {
		return toSeal.Put(k, nil) // the same "<ws>\x00<agent>" key
	})
}
