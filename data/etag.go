package data

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
)

// ETagOf returns the strong ETag of a record's JSON representation: the same bytes the
// server writes as "data", so storage can compare an If-Match inside its transaction.
func ETagOf(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return ETagOfBytes(b)
}

// ETagOfBytes returns the strong ETag of an encoded representation.
func ETagOfBytes(b []byte) string {
	sum := sha256.Sum256(b)
	return `"` + hex.EncodeToString(sum[:12]) + `"`
}

// CheckIfMatch returns precondition_failed when ctx carries an If-Match that names neither
// "*" nor current's ETag. Storage calls it inside the write transaction.
func CheckIfMatch(ifMatch string, current any) error {
	if ifMatch == "" {
		return nil
	}
	etag := ETagOf(current)
	for _, candidate := range strings.Split(ifMatch, ",") {
		candidate = strings.TrimSpace(candidate)
		if candidate == "*" || candidate == etag {
			return nil
		}
	}
	return Errorf(EPRECONDITION, "The record has changed since you read it (If-Match does not name its current ETag %s).", etag)
}
