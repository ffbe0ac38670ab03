package bolt

import (
	"context"
	"time"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

var _ service.Store = (*DB)(nil)

// tx is a bbolt transaction seen through service.Tx.
type tx struct {
	db *DB
	b  *bbolt.Tx
}

var _ service.Tx = tx{}

// View implements service.Store.
func (db *DB) View(ctx context.Context, fn func(service.Tx) error) error {
	return db.view(func(b *bbolt.Tx) error { return fn(tx{db: db, b: b}) })
}

// Update implements service.Store: writers share commits (see committer).
func (db *DB) Update(ctx context.Context, fn func(service.Tx) error) error {
	return db.update(func(b *bbolt.Tx) error { return fn(tx{db: db, b: b}) })
}

// EventHead implements service.EventTx.
func (t tx) EventHead(workspaceID string) (string, error) {
	return string(t.b.Bucket(bucketEventHeads).Get([]byte(workspaceID))), nil
}

// AppendEvent implements service.EventTx.
func (t tx) AppendEvent(e *data.Event) error { return t.db.appendEvent(t.b, e) }

// SubscriptionPlan implements service.LimitTx.
func (t tx) SubscriptionPlan(workspaceID string) (*data.SubscriptionPlan, error) {
	var p data.SubscriptionPlan
	found, err := getJSON(t.b.Bucket(bucketSubscriptions), []byte(workspaceID), &p)
	if err != nil || !found {
		return nil, err
	}
	if p.Limits == nil {
		p.Limits = map[string]int64{}
	}
	return &p, nil
}

// CountUpTo implements service.LimitTx.
func (t tx) CountUpTo(kind, workspaceID string, upTo int64) (int64, error) {
	count, ok := quotaCounters[kind]
	if !ok {
		return 0, nil // a kind whose store registered no counter yet counts none
	}
	return count(t.b, workspaceID, upTo), nil
}

// EndedCallMillisInMonth implements service.LimitTx.
func (t tx) EndedCallMillisInMonth(workspaceID string, at time.Time) (int64, error) {
	return monthMS(t.b, workspaceID, at), nil
}

// RelinkEvent implements service.EventTx.
func (t tx) RelinkEvent(id, prevHash, hash string) error {
	return relinkEvent(t.b.Bucket(bucketEvents), id, prevHash, hash)
}

// SetEventHead implements service.EventTx.
func (t tx) SetEventHead(workspaceID, hash string) error {
	return t.b.Bucket(bucketEventHeads).Put([]byte(workspaceID), []byte(hash))
}

// LocalRevisions implements service.LocalRevisionTx: AgentRevision fingerprints bytes
// of the memory map.
func (t tx) LocalRevisions() bool { return true }
