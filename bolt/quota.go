package bolt

import (
	"bytes"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
)

// Quota names: the keys of a subscription's limits (conventions §13).
const (
	quotaAgents         = data.LimitAgents
	quotaKnowledgeBases = data.LimitKnowledgeBases
	quotaNumbers        = data.LimitNumbers
	quotaWebhooks       = data.LimitWebhooks
	quotaWorkspaceUsers = data.LimitWorkspaceUsers
)

// quotaCounters count the records of one kind in a workspace, stopping once they reach
// upTo (a limit check needs no more; upTo < 0 counts everything). Each resource registers
// its counter here, one line each, preferably over its workspace index.
var quotaCounters = map[string]func(tx *bbolt.Tx, workspaceID string, upTo int64) int64{
	quotaNumbers: func(tx *bbolt.Tx, ws string, upTo int64) int64 {
		return scopeCountUpTo(tx.Bucket(bucketNumbersByWS), ws, upTo)
	},
	quotaWorkspaceUsers: func(tx *bbolt.Tx, ws string, upTo int64) int64 {
		return scopeCountUpTo(tx.Bucket(bucketMembers), ws, upTo)
	},
	quotaAgents: func(tx *bbolt.Tx, ws string, upTo int64) int64 {
		return scopeCountUpTo(tx.Bucket(bucketAgentsByWS), ws, upTo)
	},
	quotaWebhooks: func(tx *bbolt.Tx, ws string, upTo int64) int64 {
		return scopeCountUpTo(tx.Bucket(bucketWebhooksByWS), ws, upTo)
	},
	quotaKnowledgeBases: func(tx *bbolt.Tx, ws string, upTo int64) int64 {
		return scopeCountUpTo(tx.Bucket(bucketKBByWS), ws, upTo)
	},
}

// scopeCountUpTo counts the ids in scope, stopping at upTo when upTo >= 0.
func scopeCountUpTo(b *bbolt.Bucket, scope string, upTo int64) int64 {
	prefix := indexKey(scope, "")
	var n int64
	c := b.Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix) && (upTo < 0 || n < upTo); k, _ = c.Next() {
		n++
	}
	return n
}
