package bolt

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"sync"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
)

// Events that reference rather than copy (schema 3). A write that records several events
// about one record records the same payload in each (a call registered finished:
// call.registered and call.ended, each a copy of the call). An event whose payload is
// byte for byte the payload of the workspace's previous event is stored as a reference to
// the event that holds it: markEventRef, the holder's id, and the event without its
// payload ("data":null), deflated (from schema 4, markEventRefBinary and the event in
// the binary form when it holds it: events_binary.go). Reading it puts the holder's
// payload back, so every reader (the event API, SSE, webhooks, export, the audit chain)
// gets the same bytes as from a copy. The holder is another event of the same workspace,
// never itself a reference, and events are never rewritten but by a rekey (which keeps
// their payloads) and never deleted but with their whole workspace: what a reference
// points to cannot change or go away before it does. Records (a call, an agent) are not referenced: they change
// and are deleted (retention) while their events must not.
const (
	markEventRef = 0x03
	// minRefPayload: below it a reference saves too little to pay for the lookup.
	minRefPayload = 128
)

// refCache remembers, per workspace, the last event appended and the event holding its
// payload. It is a hint checked against the file: it is used only while the workspace's
// newest stored event is the one it names (an event of a transaction rolled back is never
// the newest, its id being unique), and the payloads are compared by length and SHA-256.
type refCache struct {
	mu   sync.Mutex
	byWS map[string]refEntry
}

type refEntry struct {
	last, holder string
	size         int
	sum          [32]byte
}

// holderFor returns the event of e's workspace that holds a payload equal to e's and is
// the workspace's newest event or the one that newest event references; "" when none.
// byWS is read before e's own index entry is written.
func (rc *refCache) holderFor(byWS *bbolt.Bucket, e *data.Event) (string, [32]byte) {
	var sum [32]byte
	if len(e.Data) < minRefPayload {
		return "", sum
	}
	sum = sha256.Sum256(e.Data)
	rc.mu.Lock()
	entry, ok := rc.byWS[e.WorkspaceID]
	rc.mu.Unlock()
	if !ok || entry.size != len(e.Data) || entry.sum != sum {
		return "", sum
	}
	prefix := indexKey(e.WorkspaceID, "")
	k, _ := seekLastWithPrefix(byWS.Cursor(), prefix)
	if k == nil || !bytes.HasPrefix(k, prefix) || string(k[len(prefix):]) != entry.last {
		return "", sum
	}
	return entry.holder, sum
}

// remember records e as its workspace's newest event, its payload held by holder ("" for
// e itself).
func (rc *refCache) remember(e *data.Event, holder string, sum [32]byte) {
	if len(e.Data) < minRefPayload {
		return
	}
	if holder == "" {
		holder = e.ID
	}
	rc.mu.Lock()
	if rc.byWS == nil {
		rc.byWS = map[string]refEntry{}
	}
	rc.byWS[e.WorkspaceID] = refEntry{last: e.ID, holder: holder, size: len(e.Data), sum: sum}
	rc.mu.Unlock()
}

// forget drops what rc knows of ws: its newest event holds no payload of its own.
func (rc *refCache) forget(ws string) {
	rc.mu.Lock()
	delete(rc.byWS, ws)
	rc.mu.Unlock()
}

// encodeEventRef is the stored form of e referencing holder's payload.
func encodeEventRef(holder string, e *data.Event) []byte { return storeRef(markEventRef, holder, e) }

// splitEventRef returns the holder and the stored envelope of a reference.
func splitEventRef(v []byte) (string, []byte, error) {
	n, size := binary.Uvarint(v[1:])
	if size <= 0 || uint64(len(v)-1-size) < n {
		return "", nil, fmt.Errorf("an event reference is malformed")
	}
	at := 1 + size
	return string(v[at : at+int(n)]), v[at+int(n):], nil
}

// readEvent returns the stored event id, its payload read from its holder or its call
// when it is a reference; nil when there is none.
func readEvent(tx *bbolt.Tx, id string) (*data.Event, error) {
	events := tx.Bucket(bucketEvents)
	v := events.Get([]byte(id))
	if v == nil {
		return nil, nil
	}
	s, err := parseEvent(id, v)
	if err != nil {
		return nil, err
	}
	switch s.ref {
	case markCallRef:
		stored := tx.Bucket(bucketCalls).Get([]byte(s.target))
		if stored == nil {
			return nil, fmt.Errorf("event %s references call %s, which is not stored", id, s.target)
		}
		plain, err := decodeValue(stored)
		if err != nil {
			return nil, err
		}
		s.e.Data = append([]byte(nil), plain...)
	case markEventRef:
		hv := events.Get([]byte(s.target))
		if len(hv) == 0 {
			return nil, fmt.Errorf("event %s references %s, which holds no payload", id, s.target)
		}
		h, err := parseEvent(s.target, hv)
		if err != nil {
			return nil, err
		}
		if h.ref != 0 {
			return nil, fmt.Errorf("event %s references %s, which holds no payload", id, s.target)
		}
		s.e.Data = h.e.Data
	}
	return &s.e, nil
}

// relinkEvent sets an event's chain links, keeping its stored form (a reference stays one;
// the binary form is written when it can hold the new links).
func relinkEvent(events *bbolt.Bucket, id, prevHash, hash string) error {
	v := events.Get([]byte(id))
	if v == nil {
		return nil
	}
	s, err := parseEvent(id, v)
	if err != nil {
		return err
	}
	s.e.PrevHash, s.e.Hash = prevHash, hash
	if s.ref != 0 {
		return events.Put([]byte(id), storeRef(s.ref, s.target, &s.e))
	}
	return events.Put([]byte(id), storeEvent(&s.e))
}
