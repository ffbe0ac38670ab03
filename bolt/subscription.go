package bolt

import (
	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
)

// bucketSubscriptions holds the plan of each workspace that has one (a
// data.SubscriptionPlan as JSON); the others are on the default, unlimited plan.
var bucketSubscriptions = []byte("subscriptions")

// PutSubscriptionPlan implements service.SubscriptionTx.
func (t tx) PutSubscriptionPlan(ws string, p *data.SubscriptionPlan) error {
	return putJSON(t.b.Bucket(bucketSubscriptions), []byte(ws), p)
}

// WorkspaceExists implements service.SubscriptionTx.
func (t tx) WorkspaceExists(ws string) (bool, error) {
	return t.b.Bucket(bucketWorkspaces).Get([]byte(ws)) != nil, nil
}

// deleteWorkspaceSubscription removes a deleted workspace's plan (a cascade).
func deleteWorkspaceSubscription(tx *bbolt.Tx, ws string) error {
	return tx.Bucket(bucketSubscriptions).Delete([]byte(ws))
}
