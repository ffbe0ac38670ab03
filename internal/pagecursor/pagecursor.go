// Package pagecursor signs and reads the pagination cursors of both storage engines: a
// direction, the id of the page's edge record, and an HMAC binding them to one list, so
// that a tampered cursor, or one of another list, is refused rather than reinterpreted.
// The id is encrypted: a page that a scan bound ends carries the id of the last record
// it looked at, which may be one the caller may not see (another agent's), and a cursor
// must not name it.
package pagecursor

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"strings"
	"sync"
)

// Cursor directions.
const (
	Older = 'n' // next page: records older than the cursor's id
	Newer = 'p' // previous page: records newer than the cursor's id
)

// macLen is the bytes of the HMAC a cursor keeps: 96 bits make a forgery hopeless and
// keep cursors short.
const macLen = 12

func mac(key []byte, dir byte, scope, id string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte{dir})
	m.Write([]byte(scope))
	m.Write([]byte{0})
	m.Write([]byte(id))
	return m.Sum(nil)[:macLen]
}

// idCipher encrypts or decrypts a cursor's id, as AES-256-CTR under a key derived from
// key, with the cursor's MAC as the counter's start (a synthetic IV, as in SIV mode): the
// MAC covers the id in clear, so a cursor decrypted under the wrong MAC fails its check.
// The same position of the same list gives the same cursor, as before.
func idCipher(key, sum []byte, id []byte) []byte {
	block := idBlock(key)
	iv := make([]byte, aes.BlockSize)
	copy(iv, sum)
	out := make([]byte, len(id))
	cipher.NewCTR(block, iv).XORKeyStream(out, id)
	return out
}

// idBlocks keeps each database key's derived AES block (safe for concurrent use), so
// that a page's cursors do not derive it and expand its schedule again.
var idBlocks sync.Map // string(key) -> cipher.Block

func idBlock(key []byte) cipher.Block {
	if b, ok := idBlocks.Load(string(key)); ok {
		return b.(cipher.Block)
	}
	d := hmac.New(sha256.New, key)
	d.Write([]byte("pagecursor id encryption"))
	block, err := aes.NewCipher(d.Sum(nil))
	if err != nil {
		panic(err) // unreachable: a SHA-256 sum is a valid AES-256 key
	}
	b, _ := idBlocks.LoadOrStore(string(key), block)
	return b.(cipher.Block)
}

// Encode returns the cursor for a page in direction dir from id, in the list scope
// names, signed with key, the id encrypted.
func Encode(key []byte, dir byte, scope, id string) *string {
	sum := mac(key, dir, scope, id)
	return encode(dir, idCipher(key, sum, []byte(id)), sum)
}

// encodeClear is the form cursors had before their ids were encrypted: Decode still
// reads it, so that cursors handed out before an upgrade, and those jobs keep (an
// analysis backfill's checkpoint), read on.
func encodeClear(key []byte, dir byte, scope, id string) *string {
	return encode(dir, []byte(id), mac(key, dir, scope, id))
}

func encode(dir byte, id, sum []byte) *string {
	raw := append([]byte{dir}, id...)
	raw = append(raw, sum...)
	s := base64.RawURLEncoding.EncodeToString(raw)
	return &s
}

// Refused is what a list answers a cursor Decode does not take.
const Refused = "The cursor is malformed, was tampered with, or belongs to another list."

// Decode returns the direction and id of a cursor Encode (or, before ids were
// encrypted, encodeClear) wrote for scope with key; ok is false for anything else.
func Decode(key []byte, cursor, scope string) (dir byte, id string, ok bool) {
	dir, sealed, sum, ok := split(cursor)
	if !ok {
		return 0, "", false
	}
	if id := string(idCipher(key, sum, []byte(sealed))); hmac.Equal(sum, mac(key, dir, scope, id)) {
		return dir, id, true
	}
	if hmac.Equal(sum, mac(key, dir, scope, sealed)) { // encodeClear's form
		return dir, sealed, true
	}
	return 0, "", false
}

// WellFormed reports whether cursor has the form Encode writes (a direction, an id, a
// MAC), whatever its list and key: what can be told of it before its list is read.
func WellFormed(cursor string) bool {
	_, _, _, ok := split(cursor)
	return ok
}

func split(cursor string) (dir byte, id string, sum []byte, ok bool) {
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	// The decoder ignores line breaks and the unused low bits of the last character, so
	// several strings decode alike: accept only the one Encode wrote, as a tampered
	// cursor must be refused (found by FuzzDecode).
	if err != nil || len(raw) < 1+macLen || base64.RawURLEncoding.EncodeToString(raw) != cursor {
		return 0, "", nil, false
	}
	dir, id, sum = raw[0], string(raw[1:len(raw)-macLen]), raw[len(raw)-macLen:]
	if dir != Older && dir != Newer || id == "" && dir != Newer {
		return 0, "", nil, false
	}
	return dir, id, sum, true
}

// Agents names, in the binding of a list narrowed by the caller's agents, which agents
// those are: "*" for every agent (agentIDs nil), else their ids. Every such list binds
// them (this or BindAgents), so a cursor replayed by a caller who sees other agents is
// refused (422) rather than paging a different set.
func Agents(agentIDs []string) string {
	if agentIDs == nil {
		return "*"
	}
	return strings.Join(agentIDs, ",")
}

// BindAgents binds a list's cursors to the caller's agents, for the lists whose cursors
// of a caller who sees every agent were handed out before they were bound (campaigns,
// calls): those stay binding as they were, so that they, and the ones jobs keep (an
// analysis backfill's checkpoint), read on; a caller limited to some agents (agentIDs
// not nil, even empty) gets its agents added.
func BindAgents(binding string, agentIDs []string) string {
	if agentIDs == nil {
		return binding
	}
	return binding + "\x00" + Agents(agentIDs)
}
