package bolt

import (
	"fmt"

	"github.com/voiceapi/voiceapi/data"
)

// Every stored form of an event, written and read in one place. Written from schema 4:
// the binary form (events_binary.go) when it holds the event exactly, else the forms of
// before. Read: all of them, those of schema 1 to 3 too (JSON, deflated JSON with or
// without the dictionary, and the references markEventRef and markCallRef with their
// JSON envelopes).

// nullPayload is what an event without a payload reads back as: JSON's null, as
// encoding/json gives a json.RawMessage for it.
var nullPayload = []byte("null")

// storedEvent is an event as stored: e (its payload when it holds it) and, for a
// reference, the kind (markEventRef or markCallRef, whatever the form) and its target.
type storedEvent struct {
	e      data.Event
	ref    byte
	target string
}

// storeEvent is the stored form of e holding its own payload.
func storeEvent(e *data.Event) []byte {
	payload := e.Data
	if len(payload) == 0 {
		payload = nullPayload // AppendJSON writes null
	}
	stored := encodeValue(payload)
	if out, ok := appendBinaryEvent(make([]byte, 0, 160+len(stored)), markEventBinary, e); ok {
		return append(out, stored...)
	}
	return encodeValue(e.AppendJSON(make([]byte, 0, len(e.Data)+512), true))
}

// storeRef is the stored form of e referencing target: an event holding its payload
// (kind markEventRef) or a call whose stored bytes it is (markCallRef).
func storeRef(kind byte, target string, e *data.Event) []byte {
	mark, prefix := byte(markEventRefBinary), data.PrefixEvent
	if kind == markCallRef {
		mark, prefix = markCallRefBinary, data.PrefixCall
	}
	if raw, ok := idRaw(prefix, target); ok {
		if out, ok := appendBinaryEvent(make([]byte, 0, 160), mark, e); ok {
			return append(out, raw[:]...)
		}
	}
	return encodeRef(kind, target, e)
}

// parseEvent reads the stored value v of event id, whichever its form. A reference's
// payload is not read (its e.Data is nil or null).
func parseEvent(id string, v []byte) (storedEvent, error) {
	var s storedEvent
	switch {
	case isBinaryEvent(v):
		e, rest, err := decodeBinaryEvent(id, v)
		if err != nil {
			return s, fmt.Errorf("event %s: %w", id, err)
		}
		s.e = e
		switch v[0] {
		case markEventBinary:
			if len(rest) == 0 {
				return s, fmt.Errorf("event %s: %w", id, errBinaryEvent)
			}
			payload, err := decodeValue(rest)
			if err != nil {
				return s, fmt.Errorf("decoding event %s: %w", id, err)
			}
			if !deflated(rest) {
				payload = append([]byte(nil), payload...) // rest is the file's memory
			}
			s.e.Data = payload
		case markEventRefBinary, markCallRefBinary:
			if len(rest) != 16 {
				return s, fmt.Errorf("event %s: %w", id, errBinaryEvent)
			}
			s.ref, s.target = markEventRef, idText(data.PrefixEvent, rest)
			if v[0] == markCallRefBinary {
				s.ref, s.target = markCallRef, idText(data.PrefixCall, rest)
			}
		}
	case len(v) > 0 && (v[0] == markEventRef || v[0] == markCallRef):
		holder, env, err := splitEventRef(v)
		if err != nil {
			return s, fmt.Errorf("event %s: %w", id, err)
		}
		if err := jsonUnmarshal(env, &s.e); err != nil {
			return s, fmt.Errorf("decoding event %s: %w", id, err)
		}
		s.ref, s.target = v[0], holder
	default:
		if err := jsonUnmarshal(v, &s.e); err != nil {
			return s, fmt.Errorf("decoding event %s: %w", id, err)
		}
	}
	return s, nil
}

// StoredEventJSON returns the JSON (data.Event.AppendJSON) of the event id as stored in
// the events bucket, whatever its form, for whoever reads the file without the store
// (tests, forensics). A reference's payload is in another record: it reads as null here;
// read events through the store's Event for it.
func StoredEventJSON(id string, v []byte) ([]byte, error) {
	s, err := parseEvent(id, v)
	if err != nil {
		return nil, err
	}
	return s.e.AppendJSON(nil, true), nil
}
