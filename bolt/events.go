package bolt

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
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
	heads := tx.Bucket(bucketEventHeads)
	e.PrevHash = string(heads.Get([]byte(workspaceID)))
	e.Hash = EventHash(e)
	if err := putJSON(tx.Bucket(bucketEvents), []byte(e.ID), e); err != nil {
		return nil, err
	}
	if err := indexPut(tx.Bucket(bucketEventsByWS), workspaceID, e.ID); err != nil {
		return nil, err
	}
	if err := heads.Put([]byte(workspaceID), []byte(e.Hash)); err != nil {
		return nil, err
	}
	if err := tx.Bucket(bucketOutbox).Put([]byte(e.ID), nil); err != nil {
		return nil, err
	}
	tx.OnCommit(db.fireEventHook)
	return e, nil
}

func (db *DB) fireEventHook() {
	db.hookMu.RLock()
	fn := db.eventHook
	db.hookMu.RUnlock()
	if fn != nil {
		fn()
	}
}

// EventHash is the hash of an event's content and its predecessor's hash: the link of the
// audit chain (conventions §17). Hash itself is left out.
func EventHash(e *data.Event) string {
	h := sha256.New()
	body, _ := json.Marshal(struct {
		ID          string          `json:"id"`
		Type        string          `json:"type"`
		CreatedAt   data.Time       `json:"created_at"`
		WorkspaceID string          `json:"workspace_id"`
		Actor       data.Actor      `json:"actor"`
		Data        json.RawMessage `json:"data"`
		PrevHash    string          `json:"prev_hash"`
	}{e.ID, e.Type, e.CreatedAt, e.WorkspaceID, e.Actor, e.Data, e.PrevHash})
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
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
