package bolt

import (
	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
)

// appendEvent stores e, its index entry and its workspace's new chain head, queues it for
// delivery and wakes the dispatcher after the commit.
func (db *DB) appendEvent(tx *bbolt.Tx, e *data.Event) error {
	if err := putJSON(tx.Bucket(bucketEvents), []byte(e.ID), e); err != nil {
		return err
	}
	if err := indexPut(tx.Bucket(bucketEventsByWS), e.WorkspaceID, e.ID); err != nil {
		return err
	}
	if err := tx.Bucket(bucketEventHeads).Put([]byte(e.WorkspaceID), []byte(e.Hash)); err != nil {
		return err
	}
	if err := tx.Bucket(bucketOutbox).Put([]byte(e.ID), nil); err != nil {
		return err
	}
	tx.OnCommit(db.fireEventHook)
	return nil
}

func (db *DB) fireEventHook() {
	db.hookMu.RLock()
	fn := db.eventHook
	db.hookMu.RUnlock()
	if fn != nil {
		fn()
	}
}

// deleteWorkspaceEvents removes a deleted workspace's events, chain head and queued
// deliveries.
func deleteWorkspaceEvents(tx *bbolt.Tx, workspaceID string) error {
	idx := tx.Bucket(bucketEventsByWS)
	for _, id := range scopeIDs(idx, workspaceID) {
		if err := tx.Bucket(bucketEvents).Delete([]byte(id)); err != nil {
			return err
		}
		if err := tx.Bucket(bucketOutbox).Delete([]byte(id)); err != nil {
			return err
		}
		if err := indexDelete(idx, workspaceID, id); err != nil {
			return err
		}
	}
	return tx.Bucket(bucketEventHeads).Delete([]byte(workspaceID))
}
