package service

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/seal"
)

// record builds an event of typ about payload in the caller's transaction, links it to
// the workspace's audit chain and stores it with the change (conventions §11, §17): a
// change and its event commit together or not at all. A payload already encoded
// (json.RawMessage) is taken as is, so a write encodes its record once.
func (b *base) record(ctx context.Context, tx Tx, typ, workspaceID string, payload any) (*data.Event, error) {
	return b.recordAs(tx, actorFrom(ctx), typ, workspaceID, payload)
}

// recordAs is record for an actor the context does not name (a login, which has no
// caller yet).
func (b *base) recordAs(tx Tx, actor data.Actor, typ, workspaceID string, payload any) (*data.Event, error) {
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
		Actor:       actor,
		Data:        raw,
		PrevHash:    prev,
	}
	e.Hash = b.chainHash(e)
	e.AgentID, e.Kind = EventAgent(e), EventKind(e)
	return e, tx.AppendEvent(e)
}

// chainKeyInfo names the audit chain's key among the keys derived from the secret key.
const chainKeyInfo = "voiceapi audit chain v1"

// keyedHashPrefix marks a keyed link: an HMAC of the event under the chain key. Rewriting
// a keyed chain consistently takes that key, not only write access to the database; the
// head (GET /audit-log/head) recorded elsewhere catches even someone who holds it.
const keyedHashPrefix = "k1:"

// chainHash is the keyed link of the audit chain (ChainHash under the instance's key).
func (b *base) chainHash(e *data.Event) string { return ChainHash(b.chainKey, e) }

// ChainHash is the link of the audit chain: an HMAC-SHA256 of the event's content and its
// predecessor's hash, under key (derived from the instance's secret key: ChainKey).
func ChainHash(key []byte, e *data.Event) string {
	m := hmac.New(sha256.New, key)
	m.Write(chainContent(e))
	return keyedHashPrefix + hex.EncodeToString(m.Sum(nil))
}

// ChainKey derives the audit chain's key from the instance's secret key.
func ChainKey(s *seal.Sealer) []byte { return s.DeriveKey(chainKeyInfo) }

// linkHolds reports whether e's hash is the keyed link its content gives. Unkeyed links
// (plain SHA-256, written before the chain was keyed) do not hold: accepting them would
// let anyone with write access rewrite the chain in that form (voiceapi audit rekey
// relinks an old chain once, under the key).
func (b *base) linkHolds(e *data.Event) bool {
	return strings.HasPrefix(e.Hash, keyedHashPrefix) && hmac.Equal([]byte(e.Hash), []byte(b.chainHash(e)))
}

// LegacyEventHash is the link events had before the chain was keyed: the SHA-256 of the
// event's content and its predecessor's hash. Only rekey accepts it, once.
func LegacyEventHash(e *data.Event) string {
	sum := sha256.Sum256(chainContent(e))
	return hex.EncodeToString(sum[:])
}

// chainContent is what a link covers: every member of the event but its own hash, as
// json.Marshal encodes them (data.Event.AppendJSON, which takes the payload as stored).
func chainContent(e *data.Event) []byte { return e.AppendJSON(make([]byte, 0, len(e.Data)+512), false) }

// actorFrom is who an event is attributed to: the caller, or the system (CLI, background
// work).
func actorFrom(ctx context.Context) data.Actor {
	if p := data.PrincipalFrom(ctx); p != nil {
		return data.Actor{Type: "user", UserID: p.UserID, TokenID: p.TokenID, Address: data.ClientAddress(ctx)}
	}
	if addr := data.ClientAddress(ctx); addr != "" {
		return data.Actor{Type: "client", Address: addr} // a request with no caller yet
	}
	return data.Actor{Type: "system"}
}
