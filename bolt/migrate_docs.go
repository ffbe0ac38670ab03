package bolt

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"log/slog"
	"strings"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/fulltext"
)

// migrateBatch is how many postings (or calls, or slots) one transaction of migrateDocs
// moves: a file of a million calls holds tens of millions of postings, too many dirty
// pages for one transaction.
var migrateBatch = 200_000

// migrateDocs moves a schema 2 or 3 file's call index and search index to schema 4 before
// init runs:
//
//  1. the file is marked version 4 first, so that an older binary refuses it from the
//     first batch on (it would miss what was moved);
//  2. the call index's entries move from bucketCallsIndex ("<scope>\x00<call id>") to
//     bucketCallEntries (calls_entries.go), a batch a transaction;
//  3. each call that shares its workspace and millisecond with an earlier one gets its
//     slot (calls_slots.go), by id order;
//  4. the postings of bucketCallPostings (schema 2) and bucketCallPostingBlocks (schema 3)
//     move into bucketCallPostingDocs, a batch a transaction;
//  5. calls that were never indexed (stored before the search index existed: they have
//     no term list) are indexed, each then given an empty term list as a mark;
//  6. the old buckets and the term lists are dropped.
//
// Each batch deletes what it moved, so a start that stops halfway resumes where it was,
// and step 3 gives the same result when run again; the old buckets' presence says the
// move is not finished. A file whose schema is newer than this code's is left alone
// (init refuses it).
func migrateDocs(bdb *bbolt.DB, log *slog.Logger) error {
	pending, err := needsDocMove(bdb)
	if err != nil || !pending {
		return err
	}
	log.Info("moving the call indexes to schema 4 (a one-time step; a large file takes minutes)")
	steps := []func(*bbolt.DB) (bool, error){markVersion4, moveCallIndex, assignSlots, movePostingsToDocs, indexUnindexedCalls(), dropOldIndex}
	for _, step := range steps {
		for {
			more, err := step(bdb)
			if err != nil {
				return fmt.Errorf("migrating schema 3 → 4 (call indexes): %w", err)
			}
			if !more {
				break
			}
		}
	}
	log.Info("the call indexes are on schema 4")
	return nil
}

// oldIndexBuckets are the buckets of schema 2 and 3 that schema 4 replaces.
var oldIndexBuckets = [][]byte{bucketCallsIndex, bucketCallPostings, bucketCallPostingBlocks, bucketCallTerms}

// needsDocMove reports whether the file holds indexes of schema 2 or 3 to move.
func needsDocMove(bdb *bbolt.DB) (bool, error) {
	pending := false
	err := bdb.View(func(tx *bbolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		if meta == nil {
			return nil // a new file
		}
		if v := meta.Get([]byte("schema_version")); len(v) == 8 && binary.BigEndian.Uint64(v) > schemaVersion {
			return nil
		}
		for _, name := range oldIndexBuckets {
			if tx.Bucket(name) != nil {
				pending = true
			}
		}
		return nil
	})
	return pending, err
}

func markVersion4(bdb *bbolt.DB) (bool, error) {
	return false, bdb.Update(func(tx *bbolt.Tx) error {
		for _, name := range [][]byte{bucketCallScopes, bucketCallEntries, bucketCallPostingDocs} {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return err
			}
		}
		// 4, not schemaVersion: the migrations after 4 run in init, as on any version-4 file.
		var ver [8]byte
		binary.BigEndian.PutUint64(ver[:], 4)
		return tx.Bucket(bucketMeta).Put([]byte("schema_version"), ver[:])
	})
}

// moveCallIndex moves one batch of schema 3's call index entries and reports whether
// there may be more. Only a workspace scope's entry keeps its value (the attributes; schema
// 2 wrote a copy into every entry).
func moveCallIndex(bdb *bbolt.DB) (bool, error) {
	more := false
	err := bdb.Update(func(tx *bbolt.Tx) error {
		old := tx.Bucket(bucketCallsIndex)
		if old == nil {
			return nil
		}
		ix := callIndexOf(tx)
		ix.entries.FillPercent = appendFill
		var done [][]byte
		c := old.Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if len(done) == migrateBatch {
				more = true
				break
			}
			i := bytes.LastIndexByte(k, 0)
			if i < 0 {
				return fmt.Errorf("a call index key %q is malformed", k)
			}
			scope := string(k[:i])
			if strings.IndexByte(scope, '/') >= 0 {
				v = nil
			}
			if err := ix.put(scope, string(k[i+1:]), v); err != nil {
				return err
			}
			done = append(done, append([]byte(nil), k...))
		}
		return deleteKeys(old, done)
	})
	return more, err
}

// assignSlots gives each call the slot of its place among its workspace's calls of the
// same millisecond, in id order, writing only the entries whose slot differs.
func assignSlots(bdb *bbolt.DB) (bool, error) {
	type write struct{ key, value []byte }
	var writes []write
	err := bdb.View(func(tx *bbolt.Tx) error {
		ix := callIndexOf(tx)
		return ix.scopes.ForEach(func(scope, p []byte) error {
			if bytes.IndexByte(scope, '/') >= 0 {
				return nil // another scope than a workspace's
			}
			var group []byte // the scope's prefix and the last entry's millisecond
			var place uint32
			c := ix.entries.Cursor()
			for k, v := c.Seek(p); k != nil && bytes.HasPrefix(k, p); k, v = c.Next() {
				if n := len(p) + 6; bytes.Equal(k[:n], group) {
					place++
				} else {
					group, place = append(group[:0], k[:n]...), 0
				}
				if entrySlot(v) != place {
					writes = append(writes, write{append([]byte(nil), k...), withSlot(decodeAttrs(v).encode(), place)})
				}
			}
			return nil
		})
	})
	for len(writes) > 0 && err == nil {
		n := min(len(writes), migrateBatch)
		err = bdb.Update(func(tx *bbolt.Tx) error {
			entries := tx.Bucket(bucketCallEntries)
			for _, w := range writes[:n] {
				if err := entries.Put(w.key, w.value); err != nil {
					return err
				}
			}
			return nil
		})
		writes = writes[n:]
	}
	return false, err
}

// movePostingsToDocs moves one batch of old postings and reports whether there may be
// more.
func movePostingsToDocs(bdb *bbolt.DB) (bool, error) {
	more := false
	err := bdb.Update(func(tx *bbolt.Tx) error {
		moved := 0
		for _, name := range [][]byte{bucketCallPostings, bucketCallPostingBlocks} {
			old := tx.Bucket(name)
			if old == nil {
				continue
			}
			oneAKey := bytes.Equal(name, bucketCallPostings)
			var done [][]byte
			c := old.Cursor()
			for k, v := c.First(); k != nil && moved < migrateBatch; k, v = c.Next() {
				scope, list, err := oldPostings(k, v, oneAKey)
				if err != nil {
					return err
				}
				for _, p := range list {
					if err := moveOldPosting(tx, scope, p); err != nil {
						return err
					}
				}
				moved += len(list)
				done = append(done, append([]byte(nil), k...))
			}
			if err := deleteKeys(old, done); err != nil {
				return err
			}
			if moved >= migrateBatch {
				more = true
				return nil
			}
		}
		return nil
	})
	return more, err
}

// oldPostings reads an old posting key and value: one posting a key (schema 2) or a
// block (schema 3, keyed by its scope and its first entry's id).
func oldPostings(k, v []byte, oneAKey bool) (string, []oldPosting, error) {
	i := bytes.LastIndexByte(k, 0)
	if i < 0 || oneAKey && len(v) != 1 {
		return "", nil, fmt.Errorf("an old posting %q is malformed", k)
	}
	if oneAKey {
		return string(k[:i]), []oldPosting{{string(k[i+1:]), v[0]}}, nil
	}
	list, err := decodeOldBlock(v)
	if err != nil {
		return "", nil, fmt.Errorf("block %q: %w", k, err)
	}
	if len(list) > 0 && len(k) > len(list[0].id) {
		return string(k[:len(k)-len(list[0].id)-1]), list, nil
	}
	return string(k[:i]), list, nil
}

// moveOldPosting writes an old posting of scope as a posting of its call's docID. One
// whose call is no longer indexed leaves its term's count.
func moveOldPosting(tx *bbolt.Tx, scope string, p oldPosting) error {
	ws, _, ok := strings.Cut(scope, "/t/")
	if !ok {
		return fmt.Errorf("an old posting's scope %q is malformed", scope)
	}
	ix := callIndexOf(tx)
	pc, ok := postedCallOf(ix, ws, p.id)
	if !ok {
		return addScopeCount(tx, scope, -1)
	}
	b := tx.Bucket(bucketCallPostingDocs)
	b.FillPercent = appendFill // a term's postings arrive in id order, term after term
	_, err := putPosting(b, ix, scope, pc, p.tf)
	return err
}

// indexUnindexedCalls returns a step that indexes one batch of the calls without a term
// list (stored before the search index existed) and reports whether there may be more.
// Each indexed call gets a term list as a mark, so a start that stops halfway skips it.
func indexUnindexedCalls() func(*bbolt.DB) (bool, error) {
	var after []byte // the last call of the batch before
	return func(bdb *bbolt.DB) (bool, error) {
		more := false
		err := bdb.Update(func(tx *bbolt.Tx) error {
			marks := tx.Bucket(bucketCallTerms)
			if marks == nil {
				return nil
			}
			var todo []*data.Call
			c := tx.Bucket(bucketCalls).Cursor()
			k, v := c.First()
			if after != nil {
				if k, v = c.Seek(after); bytes.Equal(k, after) {
					k, v = c.Next()
				}
			}
			for ; k != nil; k, v = c.Next() {
				if marks.Get(k) != nil {
					continue
				}
				if len(todo) == max(1, migrateBatch/50) { // about 50 postings a call
					more = true
					break
				}
				var call data.Call
				if err := jsonUnmarshal(v, &call); err != nil {
					return fmt.Errorf("decoding call %s: %w", k, err)
				}
				todo = append(todo, &call)
			}
			ix := callIndexOf(tx)
			for _, call := range todo {
				// A call the list index does not hold (an id without a time) cannot be
				// posted: it stays unsearchable, as it was, rather than stop the start.
				if _, ok := docOf(ix, call.WorkspaceID, call.ID); ok {
					if err := setCallTerms(tx, call.WorkspaceID, call.ID, nil, fulltext.CallTerms(call)); err != nil {
						return err
					}
				}
				if err := marks.Put([]byte(call.ID), []byte{0}); err != nil {
					return err
				}
			}
			if len(todo) > 0 {
				after = []byte(todo[len(todo)-1].ID)
			}
			return nil
		})
		return more, err
	}
}

func dropOldIndex(bdb *bbolt.DB) (bool, error) {
	return false, bdb.Update(func(tx *bbolt.Tx) error {
		for _, name := range oldIndexBuckets {
			if tx.Bucket(name) == nil {
				continue
			}
			if err := tx.DeleteBucket(name); err != nil {
				return err
			}
		}
		return nil
	})
}

// oldPosting is a posting of schema 2 or 3: the call by its id.
type oldPosting struct {
	id string
	tf byte
}

// decodeOldBlock reads a schema 3 block: 0x01, then each entry as <shared
// uvarint><suffix length uvarint><suffix><tf byte>, the entry's key front-coded against
// the one before; a key is 0x00 and the 16 bytes of a call id, or 0x01 and an id's text.
func decodeOldBlock(v []byte) ([]oldPosting, error) {
	if len(v) == 0 || v[0] != 0x01 {
		return nil, errBadBlock
	}
	v = v[1:]
	var list []oldPosting
	var key []byte
	for len(v) > 0 {
		shared, n := binary.Uvarint(v)
		if n <= 0 || shared > uint64(len(key)) {
			return nil, errBadBlock
		}
		v = v[n:]
		size, n := binary.Uvarint(v)
		if n <= 0 || uint64(len(v)-n) < size+1 {
			return nil, errBadBlock
		}
		v = v[n:]
		key = append(key[:shared], v[:size]...)
		var id string
		switch {
		case len(key) == 17 && key[0] == 0:
			id = idText(data.PrefixCall, key[1:])
		case len(key) > 0:
			id = string(key[1:])
		}
		list = append(list, oldPosting{id: id, tf: v[size]})
		v = v[size+1:]
	}
	return list, nil
}
