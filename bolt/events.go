package bolt

import (
	"context"
	"encoding/json"
	"fmt"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// recordEvent writes an event in the caller's transaction (the outbox of conventions §11):
// a change and its event commit together or not at all. It extends the workspace's hash
// chain and queues the event for webhook delivery.
func (db *DB) recordEvent(ctx context.Context, tx *bbolt.Tx, typ, workspaceID string, payload any) (*data.Event, error) {
	// A payload already encoded (outside the write transaction, see UpdateAgent) is
	// taken as is: the transaction is the part writers do one at a time.
	raw, ok := payload.(json.RawMessage)
	if !ok {
		var err error
		if raw, err = json.Marshal(payload); err != nil {
			return nil, fmt.Errorf("encoding %s event: %w", typ, err)
		}
	}
	e := &data.Event{
		ID:          db.ids.New(data.PrefixEvent),
		Type:        typ,
		CreatedAt:   db.timeNow(),
		WorkspaceID: workspaceID,
		Actor:       actorFrom(ctx),
		Data:        raw,
	}
	e.PrevHash = string(tx.Bucket(bucketEventHeads).Get([]byte(workspaceID)))
	e.Hash = service.ChainHash(db.chainKey, e)
	return e, db.appendEvent(tx, e)
}

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

func actorFrom(ctx context.Context) data.Actor {
	if p := data.PrincipalFrom(ctx); p != nil {
		return data.Actor{Type: "user", UserID: p.UserID, TokenID: p.TokenID}
	}
	return data.Actor{Type: "system"}
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
