package service

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/voiceapi/voiceapi/data"
)

// record builds an event of typ about payload in the caller's transaction, links it to
// the workspace's audit chain and stores it with the change (conventions §11, §17): a
// change and its event commit together or not at all. A payload already encoded
// (json.RawMessage) is taken as is, so a write encodes its record once.
func (b *base) record(ctx context.Context, tx Tx, typ, workspaceID string, payload any) (*data.Event, error) {
	raw, ok := payload.(json.RawMessage)
	if !ok {
		var err error
		if raw, err = json.Marshal(payload); err != nil {
			return nil, fmt.Errorf("encoding %s event: %w", typ, err)
		}
	}
	prev, err := tx.EventHead(workspaceID)
	if err != nil {
		return nil, err
	}
	e := &data.Event{
		ID:          b.ids.New(data.PrefixEvent),
		Type:        typ,
		CreatedAt:   b.timeNow(),
		WorkspaceID: workspaceID,
		Actor:       actorFrom(ctx),
		Data:        raw,
		PrevHash:    prev,
	}
	e.Hash = EventHash(e)
	return e, tx.AppendEvent(e)
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

// actorFrom is who an event is attributed to: the caller, or the system (CLI, background
// work).
func actorFrom(ctx context.Context) data.Actor {
	if p := data.PrincipalFrom(ctx); p != nil {
		return data.Actor{Type: "user", UserID: p.UserID, TokenID: p.TokenID}
	}
	return data.Actor{Type: "system"}
}
