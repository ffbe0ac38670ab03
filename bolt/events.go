package bolt

import (
	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
)

// appendOnlyFill is the page fill of buckets written only at their end.
const appendOnlyFill = 1.0

// appendEvent stores e, its index entry and its workspace's new chain head, queues it for
// delivery and wakes the dispatcher after the commit.
func (db *DB) appendEvent(tx *bbolt.Tx, e *data.Event) error {
	// Event ids are time-ordered and events are never rewritten (but by a rekey): full
	// pages, not bbolt's default half-full ones.
	events, byWS, outbox := tx.Bucket(bucketEvents), tx.Bucket(bucketEventsByWS), tx.Bucket(bucketOutbox)
	events.FillPercent, byWS.FillPercent, outbox.FillPercent = appendOnlyFill, appendOnlyFill, appendOnlyFill
	// Encoded by hand, in the binary form when it can (events_binary.go): the payload is
	// not scanned again. A payload that is the stored call references the call
	// (events_callref.go); the same payload as the workspace's previous event references
	// that event (events_ref.go).
	call, err := callRefFor(tx, e)
	if err != nil {
		return err
	}
	if call != "" {
		if err := putCallRef(tx, events, call, e); err != nil {
			return err
		}
		db.refs.forget(e.WorkspaceID)
		return db.indexEvent(tx, e)
	}
	holder, sum := db.refs.holderFor(byWS, e)
	var stored []byte
	if holder != "" {
		stored = encodeEventRef(holder, e)
	} else {
		stored = storeEvent(e)
	}
	if err := events.Put([]byte(e.ID), stored); err != nil {
		return err
	}
	db.refs.remember(e, holder, sum)
	return db.indexEvent(tx, e)
}

// indexEvent writes a stored event's index entries, its workspace's new chain head and its
// outbox entry, and wakes the dispatcher after the commit.
func (db *DB) indexEvent(tx *bbolt.Tx, e *data.Event) error {
	if err := indexPut(tx.Bucket(bucketEventsByWS), e.WorkspaceID, e.ID); err != nil {
		return err
	}
	if err := indexEventFacets(tx, e); err != nil {
		return err
	}
	if err := indexEventTime(tx, e); err != nil {
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
	if err := deleteWorkspaceEventFacets(tx, workspaceID); err != nil {
		return err
	}
	if err := deleteWorkspaceEventTimes(tx, workspaceID); err != nil {
		return err
	}
	return tx.Bucket(bucketEventHeads).Delete([]byte(workspaceID))
}
