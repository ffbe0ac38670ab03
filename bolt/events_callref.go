package bolt

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
)

// Call events that reference the stored call (schema 3). A call's events carry the call
// as it was when each was recorded, and most of them (call.registered, call.ended of a
// call registered finished) record exactly the call as stored: such an event is stored as
// markCallRef, the call's id and the event without its payload (from schema 4,
// markCallRefBinary and the binary form: events_binary.go), and reads the call's
// stored JSON back as its payload. bucketCallEventRefs lists, per call, the events that
// reference it; before the call's stored bytes change or go (PutCall, DeleteCall, a
// retention sweep, a move to another workspace), each of them is written whole with the
// call's bytes of then (materializeCallRefs), so an event never changes after it is
// recorded. A workspace's deletion deletes its events in the same transaction, so there
// the lists are only dropped.
const markCallRef = 0x04

var bucketCallEventRefs = []byte("call_event_refs") // call id → its referencing events' ids

// payloadCallID returns the id of the call a payload encodes, read from its first member
// (data.Call's JSON begins with its id); "" for anything else.
func payloadCallID(payload []byte) string {
	const head = `{"id":"` + data.PrefixCall
	if !bytes.HasPrefix(payload, []byte(head)) {
		return ""
	}
	end := bytes.IndexByte(payload[len(`{"id":"`):], '"')
	if end < 0 {
		return ""
	}
	id := string(payload[len(`{"id":"`) : len(`{"id":"`)+end])
	if !data.ValidID(data.PrefixCall, id) {
		return ""
	}
	return id
}

// callRefFor returns the id of the stored call whose JSON is byte for byte e's payload,
// "" when there is none.
func callRefFor(tx *bbolt.Tx, e *data.Event) (string, error) {
	if len(e.Data) < minRefPayload {
		return "", nil
	}
	id := payloadCallID(e.Data)
	if id == "" {
		return "", nil
	}
	stored := tx.Bucket(bucketCalls).Get([]byte(id))
	if stored == nil {
		return "", nil
	}
	plain, err := decodeValue(stored)
	if err != nil {
		return "", err
	}
	if !bytes.Equal(plain, e.Data) {
		return "", nil
	}
	return id, nil
}

// putCallRef stores e as a reference to call id and lists it under the call.
func putCallRef(tx *bbolt.Tx, events *bbolt.Bucket, id string, e *data.Event) error {
	if err := events.Put([]byte(e.ID), storeRef(markCallRef, id, e)); err != nil {
		return err
	}
	refs := tx.Bucket(bucketCallEventRefs)
	refs.FillPercent = appendFill // keyed by call id: new calls' lists land at the end
	list, err := appendRefList(refs.Get([]byte(id)), e.ID)
	if err != nil {
		return fmt.Errorf("call %s: %w", id, err)
	}
	return refs.Put([]byte(id), list)
}

// encodeRef is the schema 3 stored form of e referencing target's bytes: mark, target's
// id, and e without its payload (storeRef writes it when the binary form cannot hold e).
func encodeRef(mark byte, target string, e *data.Event) []byte {
	env := *e
	env.Data = nil
	out := []byte{mark}
	out = binary.AppendUvarint(out, uint64(len(target)))
	out = append(out, target...)
	return append(out, encodeValue(env.AppendJSON(nil, true))...)
}

// materializeCallRefs writes every event referencing call id whole, with the call's
// stored bytes of now, and drops the call's list. Call it before the call's stored bytes
// change or are deleted.
func materializeCallRefs(tx *bbolt.Tx, id string) error {
	refs := tx.Bucket(bucketCallEventRefs)
	list := refs.Get([]byte(id))
	if list == nil {
		return nil
	}
	stored := tx.Bucket(bucketCalls).Get([]byte(id))
	if stored == nil {
		return fmt.Errorf("call %s has referencing events but is not stored", id)
	}
	payload, err := decodeValue(stored)
	if err != nil {
		return err
	}
	payload = append([]byte(nil), payload...)
	ids, err := parseRefList(list)
	if err != nil {
		return fmt.Errorf("call %s: %w", id, err)
	}
	events := tx.Bucket(bucketEvents)
	for _, eid := range ids {
		v := events.Get([]byte(eid))
		if len(v) == 0 || v[0] != markCallRef && v[0] != markCallRefBinary {
			continue // relinked whole, or gone with its workspace
		}
		s, err := parseEvent(eid, v)
		if err != nil {
			return err
		}
		s.e.Data = payload
		if err := events.Put([]byte(eid), storeEvent(&s.e)); err != nil {
			return err
		}
	}
	return refs.Delete([]byte(id))
}
