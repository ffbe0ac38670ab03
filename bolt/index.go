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
const DefaultPerPage = data.DefaultPerPage

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
	// index names the list in its cursors; walked, when set, is the bucket walked
	// instead (a list moved to another index keeps its cursors).
	index, walked []byte
	scope         string
	// scopes, when not nil, are the scopes walked together as one list, merged by id
	// (each scope's keys are its ids in creation order); scope then only names the list
	// in its cursors. An empty, non-nil list lists nothing.
	scopes []string
	// lo (inclusive) and hi (exclusive) bound the ids walked; "" is unbounded. A range
	// is a seek, not a filter: ids outside it are never looked at.
	lo, hi string
	// filter is bound into the cursor with index and scope, so a cursor taken under other
	// filters is refused rather than silently reinterpreted.
	filter string
	// keep selects ids; nil keeps all.
	keep func(id string) bool
	// maxScan bounds the ids one page looks at (0: no bound). A filter that matches
	// nothing in a long scope then still answers promptly, with a cursor that resumes
	// past what was looked at.
	maxScan int
	// value, when not nil, lists only the entries holding it: the others are passed over
	// by their key and value alone, at most maxPass of them a page (0: no bound), past
	// which the page ends as maxScan ends it.
	value   []byte
	maxPass int
	// admit, when not nil, passes over the ids it refuses as value does, uncounted by
	// maxScan and never in a cursor: the records a caller may not see (another agent's)
	// must not shape its pages, as counting them would (how many lie between its own).
	admit func(id []byte) bool
}

// list returns one newest-first page of the ids spec selects.
func (db *DB) list(tx *bbolt.Tx, spec listSpec, req data.PageRequest) ([]string, data.Page, error) {
	b := tx.Bucket(spec.index)
	if spec.walked != nil {
		b = tx.Bucket(spec.walked)
	}
	binding := string(spec.index) + "\x00" + spec.scope
	if spec.filter != "" {
		binding += "\x00" + spec.filter
	}
	perPage := req.PerPage
	if perPage == 0 {
		perPage = DefaultPerPage
	}
	meta := data.Page{PerPage: perPage}

	from := listFrom{dir: older}
	if req.Cursor != "" {
		d, id, ok := db.decodeCursor(req.Cursor, binding)
		if !ok {
			return nil, meta, errBadCursor()
		}
		from = listFrom{dir: d, id: id, cursor: true}
	}

	// Walking newer, the walk goes forward from the cursor, nearest first; flipped below.
	w := spec.walk(b, from)
	var ids []string
	lastSeen := "" // the last id looked at: where the next walk in this direction resumes
	more, cut, scanned := false, false, 0
	passed, lastPassed := 0, []byte(nil) // entries without spec.value, passed over
	for key, match, ok := w.next(); ok; key, match, ok = w.next() {
		if !match {
			// They move the onward cursor only when their bound ends the page: a page's
			// cursors are those of its ids alone, whatever entries lie between.
			if passed++; spec.maxPass > 0 && passed > spec.maxPass {
				if more, cut = true, true; lastPassed != nil {
					lastSeen = string(lastPassed)
				}
				break
			}
			lastPassed = key
			continue
		}
		lastPassed = nil // past where the page's ids and lastSeen are
		id := string(key)
		if spec.maxScan > 0 && scanned == spec.maxScan {
			more, cut = true, true
			break
		}
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
	db.setBackCursor(&meta, b, spec, binding, from, ids, cut)
	return ids, meta, nil
}

// listFrom is where a page's walk starts: its direction, and, when the page has a cursor,
// the id it starts past.
type listFrom struct {
	dir    byte
	id     string
	cursor bool
}

// scopeWalk walks the ids of a list's scopes merged, strictly past where it started, in
// the direction it was started in, within the list's range.
type scopeWalk struct {
	streams []*scopeStream
	desc    bool
	lo, hi  string
	value   []byte            // listSpec.value
	admit   func([]byte) bool // listSpec.admit
}

// scopeStream is one scope's cursor and the id it is on (nil past the scope's end: the
// key's bytes, valid for the transaction, so that passing over an entry copies
// nothing), and whether that entry holds the walk's value.
type scopeStream struct {
	c      *bbolt.Cursor
	prefix []byte
	id     []byte
	match  bool
}

// walk starts a walk of spec's scopes in b: older from the cursor (from the newest id on
// a first page), or newer from it.
func (spec listSpec) walk(b *bbolt.Bucket, from listFrom) *scopeWalk {
	scopes := spec.scopes
	if scopes == nil {
		scopes = []string{spec.scope}
	}
	w := &scopeWalk{desc: from.dir == older, lo: spec.lo, hi: spec.hi, value: spec.value, admit: spec.admit}
	for _, scope := range scopes {
		s := &scopeStream{c: b.Cursor(), prefix: indexKey(scope, "")}
		var k, v []byte
		switch {
		case !w.desc:
			start, exclusive := from.id, true
			if w.lo != "" && start < w.lo {
				start, exclusive = w.lo, false
			}
			k, v = s.c.Seek(indexKey(scope, start))
			if exclusive && k != nil && bytes.Equal(k, indexKey(scope, start)) {
				k, v = s.c.Next()
			}
		case from.cursor && (w.hi == "" || from.id < w.hi):
			k, v = seekBefore(s.c, indexKey(scope, from.id))
		case w.hi != "":
			k, v = seekBefore(s.c, indexKey(scope, w.hi))
		default:
			k, v = seekLastWithPrefix(s.c, s.prefix)
		}
		w.at(s, k, v)
		w.streams = append(w.streams, s)
	}
	return w
}

// at puts s on key k holding v, or past its scope's end when k is not of the scope.
func (w *scopeWalk) at(s *scopeStream, k, v []byte) {
	if k == nil || !bytes.HasPrefix(k, s.prefix) {
		s.id = nil
		return
	}
	s.id = k[len(s.prefix):]
	s.match = (w.value == nil || bytes.Equal(v, w.value)) && (w.admit == nil || w.admit(s.id))
}

// next returns the walk's next id and whether its entry holds the walk's value, false
// at its end. An id in several scopes comes once.
func (w *scopeWalk) next() (id []byte, match, ok bool) {
	var best *scopeStream
	for _, s := range w.streams {
		if s.id == nil {
			continue
		}
		if best != nil {
			if c := bytes.Compare(s.id, best.id); w.desc && c <= 0 || !w.desc && c >= 0 {
				continue
			}
		}
		best = s
	}
	if best == nil {
		return nil, false, false
	}
	id = best.id
	if w.desc && w.lo != "" && string(id) < w.lo || !w.desc && w.hi != "" && string(id) >= w.hi {
		return nil, false, false // every other stream is further out of range
	}
	for _, s := range w.streams {
		if !bytes.Equal(s.id, id) {
			continue
		}
		match = match || s.match
		if w.desc {
			k, v := s.c.Prev()
			w.at(s, k, v)
		} else {
			k, v := s.c.Next()
			w.at(s, k, v)
		}
	}
	return id, match, true
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
func (db *DB) setBackCursor(meta *data.Page, b *bbolt.Bucket, spec listSpec, binding string, from listFrom, ids []string, cut bool) {
	switch {
	case from.dir == older && len(ids) > 0:
		if from.cursor && hasNeighbour(b, spec, ids[0], true) {
			meta.PrevCursor = db.encodeCursor(newer, binding, ids[0])
		}
	case from.dir == newer && len(ids) > 0:
		if hasNeighbour(b, spec, ids[len(ids)-1], false) {
			meta.NextCursor = db.encodeCursor(older, binding, ids[len(ids)-1])
		}
	case cut && from.dir == older && from.cursor: // a first page has nothing newer
		meta.PrevCursor = db.encodeCursor(newer, binding, from.id)
	case cut && from.dir == newer && from.id != "":
		// A walk from "" began at the oldest id: nothing is older, and pagecursor refuses
		// an older cursor without an id.
		meta.NextCursor = db.encodeCursor(older, binding, from.id)
	case from.dir == older && from.cursor:
		// Everything after the cursor was deleted: lead back to the oldest page, which a
		// "newer than the empty id" cursor reads (every id sorts after ""), when that page
		// has an id the list keeps (keep and value both, within the bounds), the walk it
		// will make: a link to a page of ids the filter passes over only is no link.
		if hasNeighbour(b, spec, "", true) {
			meta.PrevCursor = db.encodeCursor(newer, binding, "")
		}
	}
}

// seekLastWithPrefix positions c on the greatest key with prefix, and returns it and
// its value.
func seekLastWithPrefix(c *bbolt.Cursor, prefix []byte) (k, v []byte) {
	// The least key after every key with prefix: prefix with its last byte below 0xFF
	// incremented ("<scope>\x01" for "<scope>\x00"), past the bytes that cannot be.
	n := len(prefix)
	for n > 0 && prefix[n-1] == 0xFF {
		n--
	}
	if n == 0 {
		return c.Last()
	}
	end := append(append([]byte(nil), prefix[:n-1]...), prefix[n-1]+1)
	if k, _ = c.Seek(end); k == nil {
		return c.Last()
	}
	return c.Prev()
}

// seekBefore positions c on the greatest key strictly less than key, and returns it and
// its value.
func seekBefore(c *bbolt.Cursor, key []byte) (k, v []byte) {
	if k, _ = c.Seek(key); k == nil {
		if k, v = c.Last(); k != nil && bytes.Compare(k, key) >= 0 {
			return c.Prev()
		}
		return k, v
	}
	return c.Prev()
}

// hasNeighbour reports whether spec lists a kept id after (newer) or before id, as a
// page walking that way would find it: true too when the bounds would cut that page
// (one entry past them), which then ends empty with a cursor on. Not when the bounds
// are merely reached: that page would end empty with no cursor at all, a dead end.
func hasNeighbour(b *bbolt.Bucket, spec listSpec, id string, after bool) bool {
	dir := byte(older)
	if after {
		dir = newer
	}
	w := spec.walk(b, listFrom{dir: dir, id: id, cursor: true})
	n, passed := 0, 0
	for k, match, ok := w.next(); ok; k, match, ok = w.next() {
		if !match {
			if passed++; spec.maxPass > 0 && passed > spec.maxPass {
				return true
			}
			continue
		}
		if spec.keep == nil || spec.keep(string(k)) {
			return true
		}
		if n++; spec.maxScan > 0 && n > spec.maxScan {
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

// errBadCursor refuses a cursor this database did not sign for the list read, in the one
// wording every list and the server's form check use.
func errBadCursor() error { return data.FieldError("cursor", pagecursor.Refused) }
