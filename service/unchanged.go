package service

import (
	"bytes"
	"encoding/json"
)

// An update that changes nothing writes nothing and tells no one: no event, and the
// record keeps its updated_at and so its ETag, so that another client's If-Match still
// holds (conventions §11, §17). Agents and knowledge bases compare their fields; the
// records below are compared as storage encodes them, a copy taken before the update is
// applied, so that a slice or map the update replaced in place cannot hide a change. A
// secret given again is sealed anew and so counts as a change: the safe side.

// storedSnapshot returns the encoding of a record before an update is applied to it.
func storedSnapshot(record any) []byte {
	b, err := json.Marshal(record)
	if err != nil {
		return nil // never equal: the update is written, as it always was
	}
	return b
}

// unchangedSince reports whether record encodes as snapshot did: the update changed
// nothing.
func unchangedSince(snapshot []byte, record any) bool {
	b, err := json.Marshal(record)
	return err == nil && snapshot != nil && bytes.Equal(snapshot, b)
}
