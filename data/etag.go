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

// CheckIfMatch returns precondition_failed unless the If-Match field value ifMatch holds
// for current: "*" alone, or a list of entity-tags one of which is current's ETag under
// strong comparison (RFC 9110 §13.1.1: a weak tag never matches). A value that is neither
// (a "*" inside a list, an unquoted or unterminated tag) holds for no record: the client
// asked for a condition, so the write does not proceed. "" is no condition. Storage calls
// it inside the write transaction.
func CheckIfMatch(ifMatch string, current any) error {
	if ifMatch == "" {
		return nil
	}
	etag := ETagOf(current)
	if ifMatchHolds(ifMatch, etag) {
		return nil
	}
	return Errorf(EPRECONDITION, "The record has changed since you read it (If-Match does not name its current ETag %s).", etag)
}

// ifMatchHolds reads field by RFC 9110's grammar: If-Match = "*" / #entity-tag, with
// optional white space (space, tab) around elements and empty elements allowed.
func ifMatchHolds(field, etag string) bool {
	field = strings.Trim(field, " \t")
	if field == "*" {
		return true
	}
	found := false
	for i := 0; i < len(field); {
		switch field[i] {
		case ' ', '\t', ',':
			i++
			continue
		}
		tag, n := entityTag(field[i:])
		if n == 0 {
			return false
		}
		found = found || tag == etag
		i += n
		for i < len(field) && (field[i] == ' ' || field[i] == '\t') {
			i++
		}
		if i < len(field) && field[i] != ',' {
			return false
		}
	}
	return found
}

// entityTag reads the entity-tag that s starts with: its opaque tag (quotes included)
// for a strong one, "" for a weak one, and its length; 0 when s starts with none.
func entityTag(s string) (strong string, n int) {
	weak := strings.HasPrefix(s, "W/")
	if weak {
		n = 2
	}
	if n >= len(s) || s[n] != '"' {
		return "", 0
	}
	for i := n + 1; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"':
			if weak {
				return "", i + 1
			}
			return s[n : i+1], i + 1
		case c == 0x21 || c >= 0x23 && c <= 0x7E || c >= 0x80: // etagc
		default:
			return "", 0
		}
	}
	return "", 0
}
