package bolt

import "go.etcd.io/bbolt"

// Quota names: the keys of a subscription's limits (conventions §13).
const (
	quotaAgents         = "agents"
	quotaKnowledgeBases = "knowledge_bases"
	quotaNumbers        = "numbers"
	quotaWebhooks       = "webhooks"
	quotaWorkspaceUsers = "workspace_users"
)

// checkQuota refuses a create that would pass the workspace's limit for kind. It runs
// inside the create's write transaction, so concurrent creates cannot pass a limit together.
// Subscriptions (issue 5) fill limitFor; until then every workspace is unlimited.
func (db *DB) checkQuota(tx *bbolt.Tx, workspaceID, kind string) error {
	if limitFor == nil {
		return nil
	}
	return limitFor(db, tx, workspaceID, kind)
}

// limitFor is set by the subscription storage.
var limitFor func(db *DB, tx *bbolt.Tx, workspaceID, kind string) error
