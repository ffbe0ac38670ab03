package bolt

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
)

// The calls' list index (schema 4). Each scope (calls_index.go) has a number, given once
// and never reused (bucketCallScopes: scope → uvarint), and an entry is keyed by the
// scope's number and the call id's 16 bytes: 18 bytes, where "<ws>/a/<agent>\x00<call
// id>" took 94 (schema 3's bucketCallsIndex: 466 bytes of file a seeded call in four
// entries, about 200 now). A uvarint is prefix-free, so a scope's entries are one key range,
// ordered by id; the first 6 bytes of an id are its millisecond, so a millisecond's calls
// are one range too (calls_slots.go).
var (
	bucketCallScopes  = []byte("call_scopes")
	bucketCallEntries = []byte("call_entries")
	bucketCallsIndex  = []byte("calls_index") // schema 3: "<scope>\x00<call id>"
)

// callIndex reads and writes the entries of one transaction.
type callIndex struct {
	entries, scopes *bbolt.Bucket
}

func callIndexOf(tx *bbolt.Tx) callIndex {
	return callIndex{entries: tx.Bucket(bucketCallEntries), scopes: tx.Bucket(bucketCallScopes)}
}

// prefix returns the key prefix of scope's entries, false when no call was ever in it.
func (ix callIndex) prefix(scope string) ([]byte, bool) {
	v := ix.scopes.Get([]byte(scope))
	if len(v) == 0 {
		return nil, false
	}
	return append([]byte(nil), v...), true
}

// ensure returns the key prefix of scope's entries, numbering the scope if it has none.
func (ix callIndex) ensure(scope string) ([]byte, error) {
	if p, ok := ix.prefix(scope); ok {
		return p, nil
	}
	n, err := ix.scopes.NextSequence()
	if err != nil {
		return nil, err
	}
	p := binary.AppendUvarint(nil, n)
	return p, ix.scopes.Put([]byte(scope), p)
}

// entryKey is the key of call id in the scope whose prefix is p.
func entryKey(p []byte, id string) ([]byte, error) {
	raw, ok := idRaw(data.PrefixCall, id)
	if !ok {
		return nil, fmt.Errorf("%q is not a well-formed call id: calls are indexed by their ids' 16 bytes", id)
	}
	return append(append(make([]byte, 0, len(p)+16), p...), raw[:]...), nil
}

// boundKey is the key a walk of the scope whose prefix is p seeks to for a bound made
// from a call id: the id itself, a synthetic one (data.IDBound), or an id followed by more
// bytes (sorting after it). A string that does not start like a call id sorts before or
// after every one of them.
func boundKey(p []byte, bound string) []byte {
	n := len(data.PrefixCall) + 26
	if len(bound) >= n {
		if raw, ok := idRaw(data.PrefixCall, bound[:n]); ok {
			return append(append(append(make([]byte, 0, len(p)+16+len(bound)-n), p...), raw[:]...), bound[n:]...)
		}
	}
	if bound < data.PrefixCall+"0" {
		return append([]byte(nil), p...)
	}
	return append(append([]byte(nil), p...), bytes.Repeat([]byte{0xFF}, 17)...)
}

// entryID is the call id of an entry key of the scope whose prefix is p.
func entryID(p, k []byte) string { return idText(data.PrefixCall, k[len(p):len(p)+16]) }

// keyOf returns call id's key in scope, false when no call was ever in scope or id is
// not a call id (either way there is no such entry).
func (ix callIndex) keyOf(scope, id string) ([]byte, bool) {
	p, ok := ix.prefix(scope)
	if !ok {
		return nil, false
	}
	k, err := entryKey(p, id)
	return k, err == nil
}

// get returns the value of call id's entry in scope (nil: none).
func (ix callIndex) get(scope, id string) []byte {
	if k, ok := ix.keyOf(scope, id); ok {
		return ix.entries.Get(k)
	}
	return nil
}

func (ix callIndex) put(scope, id string, v []byte) error {
	p, err := ix.ensure(scope)
	if err != nil {
		return err
	}
	k, err := entryKey(p, id)
	if err != nil {
		return err
	}
	return ix.entries.Put(k, v)
}

func (ix callIndex) delete(scope, id string) error {
	if k, ok := ix.keyOf(scope, id); ok {
		return ix.entries.Delete(k)
	}
	return nil
}

// cursor returns a cursor over scope's entries (nil: the scope never had one).
func (ix callIndex) cursor(scope string) *indexCursor {
	p, ok := ix.prefix(scope)
	if !ok {
		return nil
	}
	return &indexCursor{c: ix.entries.Cursor(), prefix: p}
}

// ids returns every call id in scope, oldest first.
func (ix callIndex) ids(scope string) []string {
	var ids []string
	if c := ix.cursor(scope); c != nil {
		for id, ok := c.atOrAfter(""); ok; id, ok = c.next() {
			ids = append(ids, id)
		}
	}
	return ids
}

// dropWorkspace deletes every entry and scope number of workspace ws (its scopes are
// "<ws>" and "<ws>/…"). Keys are collected first: deleting under a moving cursor can
// skip entries.
func (ix callIndex) dropWorkspace(ws string) error {
	var scopes [][]byte
	c := ix.scopes.Cursor()
	for k, _ := c.Seek([]byte(ws)); k != nil && bytes.HasPrefix(k, []byte(ws)); k, _ = c.Next() {
		if len(k) == len(ws) || k[len(ws)] == '/' {
			scopes = append(scopes, append([]byte(nil), k...))
		}
	}
	for _, scope := range scopes {
		p, _ := ix.prefix(string(scope))
		if err := deletePrefix(ix.entries, p); err != nil {
			return err
		}
	}
	return deleteKeys(ix.scopes, scopes)
}
