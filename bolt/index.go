package bolt

import (
	"bytes"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/pagecursor"
)

// Index keys are "<scope>\x00<id>": a prefix scan over one scope (a workspace, an agent of
// a workspace, a user) walks its ids in creation order, because ids are time-ordered.

func indexKey(scope, id string) []byte {
	k := make([]byte, 0, len(scope)+1+len(id))
	k = append(k, scope...)
	k = append(k, 0)
	return append(k, id...)
}

func indexPut(b *bbolt.Bucket, scope, id string) error { return b.Put(indexKey(scope, id), nil) }

func indexDelete(b *bbolt.Bucket, scope, id string) error { return b.Delete(indexKey(scope, id)) }

// scopeIDs returns every id in scope, oldest first (cascades and counts).
func scopeIDs(b *bbolt.Bucket, scope string) []string {
	prefix := indexKey(scope, "")
	var ids []string
	c := b.Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		ids = append(ids, string(k[len(prefix):]))
	}
	return ids
}

// scopeCount counts the ids in scope.
func scopeCount(b *bbolt.Bucket, scope string) int {
	prefix := indexKey(scope, "")
	n := 0
	c := b.Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		n++
	}
	return n
}

// Cursor directions.
const (
	older = pagecursor.Older
	newer = pagecursor.Newer
)

// DefaultPerPage is the page size when per_page is not given (conventions §4).
const DefaultPerPage = 15

// page returns the ids of one newest-first page of scope in the index bucket, reading
// O(per_page) keys whatever the size of the scope. The cursor is bound to the index and
// scope by an HMAC, so a tampered or foreign cursor is a 422 on "cursor".
func (db *DB) page(tx *bbolt.Tx, index []byte, scope string, req data.PageRequest) ([]string, data.Page, error) {
	return db.list(tx, listSpec{index: index, scope: scope}, req)
}

// pageWhere is page over the ids for which keep reports true. Skipped ids cost a key read
// each, so keep suits filters that pass most ids or small scopes (a user limited to some
// agents); a selective filter deserves its own index.
func (db *DB) pageWhere(tx *bbolt.Tx, index []byte, scope string, req data.PageRequest, keep func(id string) bool) ([]string, data.Page, error) {
	return db.list(tx, listSpec{index: index, scope: scope, keep: keep}, req)
}

// listSpec says which ids a list walks.
type listSpec struct {
	index []byte
	scope string
	// filter is bound into the cursor with index and scope, so a cursor taken under other
	// filters is refused rather than silently reinterpreted.
	filter string
	// keep selects ids; nil keeps all.
	keep func(id string) bool
	// maxScan bounds the ids one page looks at (0: no bound). A filter that matches
	// nothing in a long scope then still answers promptly, with a cursor that resumes
	// past what was looked at.
	maxScan int
}

// list returns one newest-first page of the ids spec selects.
func (db *DB) list(tx *bbolt.Tx, spec listSpec, req data.PageRequest) ([]string, data.Page, error) {
	b := tx.Bucket(spec.index)
	binding := string(spec.index) + "\x00" + spec.scope
	if spec.filter != "" {
		binding += "\x00" + spec.filter
	}
	perPage := req.PerPage
	if perPage == 0 {
		perPage = DefaultPerPage
	}
	meta := data.Page{PerPage: perPage}
	prefix := indexKey(spec.scope, "")

	from := listFrom{dir: older}
	if req.Cursor != "" {
		d, id, ok := db.decodeCursor(req.Cursor, binding)
		if !ok {
			return nil, meta, data.FieldError("cursor", "The cursor is malformed, was tampered with, or belongs to another list.")
		}
		from = listFrom{dir: d, key: indexKey(spec.scope, id), id: id}
	}

	c := b.Cursor()
	step := c.Prev
	if from.dir == newer { // walk forward from the cursor, nearest first; flipped below
		step = c.Next
	}
	var ids []string
	lastSeen := "" // the last id looked at: where the next walk in this direction resumes
	more, cut, scanned := false, false, 0
	for k := seekPageStart(c, from, prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = step() {
		if spec.maxScan > 0 && scanned == spec.maxScan {
			more, cut = true, true
			break
		}
		id := string(k[len(prefix):])
		if spec.keep != nil && !spec.keep(id) {
			scanned++
			lastSeen = id
			continue
		}
		if len(ids) == perPage {
			more = true
			break
		}
		scanned++
		lastSeen = id
		ids = append(ids, id)
	}
	if from.dir == newer {
		for i, j := 0, len(ids)-1; i < j; i, j = i+1, j-1 {
			ids[i], ids[j] = ids[j], ids[i]
		}
	}
	if more && lastSeen != "" {
		db.setOnwardCursor(&meta, binding, from.dir, lastSeen)
	}
	db.setBackCursor(&meta, b, spec, prefix, binding, from, ids, cut)
	return ids, meta, nil
}

// seekPageStart positions c on the first key a page's walk looks at: the one after the
// cursor's walking newer, the one before it walking older, the last of the scope on a
// first page.
func seekPageStart(c *bbolt.Cursor, from listFrom, prefix []byte) []byte {
	switch {
	case from.dir == newer:
		k, _ := c.Seek(from.key)
		if k != nil && bytes.Equal(k, from.key) {
			k, _ = c.Next()
		}
		return k
	case from.key == nil:
		return seekLastWithPrefix(c, prefix)
	default:
		return seekBefore(c, from.key)
	}
}

// listFrom is where a page's walk starts: its direction, and the index key (nil on a
// first page) and id of the cursor it starts past.
type listFrom struct {
	dir byte
	key []byte
	id  string
}

// setOnwardCursor sets the cursor in the walk's direction (dir), which resumes past the
// last id looked at.
func (db *DB) setOnwardCursor(meta *data.Page, binding string, dir byte, lastSeen string) {
	if dir == older {
		meta.NextCursor = db.encodeCursor(older, binding, lastSeen)
	} else {
		meta.PrevCursor = db.encodeCursor(newer, binding, lastSeen)
	}
}

// setBackCursor sets the cursor back, toward where the walk started: from the page's edge
// item, so that following next_cursor then prev_cursor returns the same page; from where
// the walk started when the scan bound cut it (cut) before it found any.
func (db *DB) setBackCursor(meta *data.Page, b *bbolt.Bucket, spec listSpec, prefix []byte, binding string, from listFrom, ids []string, cut bool) {
	switch {
	case from.dir == older && len(ids) > 0:
		if from.key != nil && hasNeighbour(b, prefix, indexKey(spec.scope, ids[0]), true, spec.keep, spec.maxScan) {
			meta.PrevCursor = db.encodeCursor(newer, binding, ids[0])
		}
	case from.dir == newer && len(ids) > 0:
		if hasNeighbour(b, prefix, indexKey(spec.scope, ids[len(ids)-1]), false, spec.keep, spec.maxScan) {
			meta.NextCursor = db.encodeCursor(older, binding, ids[len(ids)-1])
		}
	case cut && from.dir == older:
		meta.PrevCursor = db.encodeCursor(newer, binding, from.id)
	case cut && from.dir == newer:
		meta.NextCursor = db.encodeCursor(older, binding, from.id)
	case from.dir == older && from.key != nil:
		if k := seekLastWithPrefix(b.Cursor(), prefix); k != nil && bytes.HasPrefix(k, prefix) {
			// Everything after the cursor was deleted: lead back to the oldest page, which
			// a "newer than the empty id" cursor reads (every id sorts after "").
			meta.PrevCursor = db.encodeCursor(newer, binding, "")
		}
	}
}

// seekLastWithPrefix positions c on the greatest key with prefix.
func seekLastWithPrefix(c *bbolt.Cursor, prefix []byte) []byte {
	// The least key after every key with prefix: prefix with its last byte below 0xFF
	// incremented ("<scope>\x01" for "<scope>\x00"), past the bytes that cannot be.
	n := len(prefix)
	for n > 0 && prefix[n-1] == 0xFF {
		n--
	}
	if n == 0 {
		k, _ := c.Last()
		return k
	}
	end := append(append([]byte(nil), prefix[:n-1]...), prefix[n-1]+1)
	k, _ := c.Seek(end)
	if k == nil {
		k, _ = c.Last()
		return k
	}
	k, _ = c.Prev()
	return k
}

// seekBefore positions c on the greatest key strictly less than key.
func seekBefore(c *bbolt.Cursor, key []byte) []byte {
	k, _ := c.Seek(key)
	if k == nil {
		k, _ = c.Last()
		if k != nil && bytes.Compare(k, key) >= 0 {
			k, _ = c.Prev()
		}
		return k
	}
	k, _ = c.Prev()
	return k
}

// hasNeighbour reports whether scope holds a kept key after (newer) or before key. With a
// scan bound it answers true once the bound is reached: a cursor that may lead to an empty
// page is better than one missing.
func hasNeighbour(b *bbolt.Bucket, prefix, key []byte, after bool, keep func(string) bool, maxScan int) bool {
	c := b.Cursor()
	var k []byte
	step := c.Prev
	if after {
		step = c.Next
		k, _ = c.Seek(key)
		if k != nil && bytes.Equal(k, key) {
			k, _ = c.Next()
		}
	} else {
		k = seekBefore(c, key)
	}
	for n := 0; k != nil && bytes.HasPrefix(k, prefix); k, _ = step() {
		if keep == nil || keep(string(k[len(prefix):])) {
			return true
		}
		if n++; maxScan > 0 && n >= maxScan {
			return true
		}
	}
	return false
}

// encodeCursor signs a cursor for this database (internal/pagecursor).
func (db *DB) encodeCursor(dir byte, scope, id string) *string {
	return pagecursor.Encode(db.cursorKey, dir, scope, id)
}

// decodeCursor reads a cursor this database signed for scope.
func (db *DB) decodeCursor(cursor, scope string) (byte, string, bool) {
	return pagecursor.Decode(db.cursorKey, cursor, scope)
}
