package bolt

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/pagecursor"
)

// Call indexes live in one bucket with one scope per filter value: "<ws>" (every call),
// "<ws>/a/<agent>", "<ws>/n/<number>", "<ws>/d/<direction>", "<ws>/s/<status>"; entries
// are keyed by a scope's number and the call id's bytes (calls_entries.go). Each call's
// "<ws>" entry holds its filterable attributes (and its slot, calls_slots.go), so that
// the filters a scope does not answer are checked on the index alone, without decoding
// the call; the other scopes' entries are empty and a walk over them reads the
// attributes from the "<ws>" entry. A count per scope lets a list walk the most selective
// scope its filters name. Ids are time-ordered and their time part is created_at, so
// from/to become a seek to a synthetic id.
var (
	bucketCalls           = []byte("calls")
	bucketCallScopeCounts = []byte("call_scope_counts") // scope → uint64 entries
)

// callAttrs are what the list filters look at.
type callAttrs struct {
	agent, number, direction, status string
}

func attrsOf(c *data.Call) callAttrs {
	a := callAttrs{agent: c.AgentID, direction: c.Direction, status: c.Status}
	if c.NumberID != nil {
		a.number = *c.NumberID
	}
	return a
}

func (a callAttrs) encode() []byte {
	return []byte(a.agent + "\x00" + a.number + "\x00" + a.direction + "\x00" + a.status)
}

func decodeAttrs(v []byte) callAttrs {
	parts := strings.SplitN(string(v), "\x00", 5) // a fifth part is the slot (calls_slots.go)
	for len(parts) < 4 {
		parts = append(parts, "")
	}
	return callAttrs{parts[0], parts[1], parts[2], parts[3]}
}

func callAgentScope(ws, agent string) string { return ws + "/a/" + agent }

// scopes returns every index scope a call with these attributes belongs to.
func (a callAttrs) scopes(ws string) []string {
	s := []string{ws, callAgentScope(ws, a.agent), ws + "/d/" + a.direction, ws + "/s/" + a.status}
	if a.number != "" {
		s = append(s, ws+"/n/"+a.number)
	}
	return s
}

// moveCallIndexes rewrites a call's index entries from old's attributes (nil for a new
// call) to next's (nil for a deleted call), keeping the scope counts exact.
func moveCallIndexes(tx *bbolt.Tx, ws, id string, old, next *callAttrs) error {
	ix := callIndexOf(tx)
	ix.entries.FillPercent = appendFill
	keep := map[string]bool{}
	if next != nil {
		for _, s := range next.scopes(ws) {
			keep[s] = true
		}
	}
	had := map[string]bool{}
	if old != nil {
		for _, s := range old.scopes(ws) {
			had[s] = true
			if keep[s] {
				continue
			}
			if err := ix.delete(s, id); err != nil {
				return err
			}
			if err := addScopeCount(tx, s, -1); err != nil {
				return err
			}
		}
	}
	if next == nil {
		return nil
	}
	slot, err := entrySlotFor(ix, ws, id)
	if err != nil {
		return err
	}
	v := withSlot(next.encode(), slot)
	for s := range keep {
		var val []byte
		if s == ws {
			val = v
		}
		if err := ix.put(s, id, val); err != nil {
			return err
		}
		if !had[s] {
			if err := addScopeCount(tx, s, 1); err != nil {
				return err
			}
		}
	}
	return nil
}

// entrySlotFor returns the slot of call id in ws's scope: the one its entry holds when it
// has one (an update, or a call stored again under its id), a new one otherwise.
func entrySlotFor(ix callIndex, ws, id string) (uint32, error) {
	if v := ix.get(ws, id); v != nil {
		return entrySlot(v), nil
	}
	ms, ok := idMS(id)
	if !ok {
		return 0, fmt.Errorf("%q is not a well-formed call id", id)
	}
	return newSlot(ix, ws, ms)
}

func addScopeCount(tx *bbolt.Tx, scope string, delta int64) error {
	b := tx.Bucket(bucketCallScopeCounts)
	n := int64(scopeCountOf(b, scope)) + delta
	if n <= 0 {
		return b.Delete([]byte(scope))
	}
	var buf [8]byte
	binary.BigEndian.PutUint64(buf[:], uint64(n))
	return b.Put([]byte(scope), buf[:])
}

func scopeCountOf(b *bbolt.Bucket, scope string) uint64 {
	v := b.Get([]byte(scope))
	if len(v) != 8 {
		return 0
	}
	return binary.BigEndian.Uint64(v)
}

// callQuery is one list request resolved against the indexes.
type callQuery struct {
	scopes  []string // walked together, newest first (several for a caller limited to some agents)
	match   func(callAttrs) bool
	implied bool   // every entry of scopes matches: match need not be asked
	lo, hi  string // id bounds: lo inclusive, hi exclusive; "" is unbounded
	binding string // what a cursor is bound to
	ws      string // the workspace, whose scope holds each call's attributes
	// extra is one more test of an id (a search's other terms). blocks says the scopes
	// are term posting blocks (bucketCallPostingDocs), whose cursor offers each call's
	// index entry as its value.
	blocks bool
	extra  func(id string) bool
}

// ok reports whether the entry of id with attributes a is listed.
func (q *callQuery) ok(id string, a callAttrs) bool {
	return (q.implied || q.match(a)) && (q.extra == nil || q.extra(id))
}

// maxCallScan bounds the index entries one page may examine. A page that reaches it ends
// early with a next_cursor, so a rare filter combination costs bounded time per request.
var maxCallScan = 20000

// entryCursor walks one scope in id order: an index scope's keys (indexCursor) or a
// term's posting blocks (blockCursor). Each move returns the id it lands on, false past
// the scope's ends.
type entryCursor interface {
	last() (string, bool)
	before(id string) (string, bool) // the greatest id less than id
	atOrAfter(id string) (string, bool)
	next() (string, bool)
	prev() (string, bool)
	value() []byte // the entry's value: the call's attributes, or nil when read elsewhere
}

// indexCursor is an entryCursor over one scope's entries in bucketCallEntries, keyed by
// the scope's prefix and a call id's 16 bytes.
type indexCursor struct {
	c      *bbolt.Cursor
	prefix []byte
	k, v   []byte
}

func (ic *indexCursor) at(k, v []byte) (string, bool) {
	if k == nil || !bytes.HasPrefix(k, ic.prefix) || len(k) != len(ic.prefix)+16 {
		ic.k, ic.v = nil, nil
		return "", false
	}
	ic.k, ic.v = k, v
	return entryID(ic.prefix, k), true
}

func (ic *indexCursor) last() (string, bool) {
	k, _ := seekLastWithPrefix(ic.c, ic.prefix)
	if k == nil {
		return ic.at(nil, nil)
	}
	return ic.at(ic.c.Seek(k)) // re-read to obtain the value
}

func (ic *indexCursor) before(id string) (string, bool) {
	k, _ := seekBefore(ic.c, boundKey(ic.prefix, id))
	if k == nil {
		return ic.at(nil, nil)
	}
	return ic.at(ic.c.Seek(k))
}

func (ic *indexCursor) atOrAfter(id string) (string, bool) {
	return ic.at(ic.c.Seek(boundKey(ic.prefix, id)))
}

func (ic *indexCursor) next() (string, bool) { return ic.at(ic.c.Next()) }
func (ic *indexCursor) prev() (string, bool) { return ic.at(ic.c.Prev()) }
func (ic *indexCursor) value() []byte        { return ic.v }

// stream is one scope's cursor and the id it is on.
type stream struct {
	c  entryCursor
	id string
}

// walk visits the entries of q's scopes strictly beyond from ("" = from the newest or the
// oldest end), newest first when desc, merging the scopes by id. fn returns false to stop.
// walk returns how many entries it examined and the last id examined.
func (q *callQuery) walk(tx *bbolt.Tx, desc bool, from string, limit int, fn func(id string, a callAttrs) bool) (int, string) {
	ix := callIndexOf(tx)
	streams := make([]*stream, 0, len(q.scopes))
	for _, scope := range q.scopes {
		var c entryCursor
		if q.blocks {
			c = newBlockCursor(tx.Bucket(bucketCallPostingDocs), ix, q.ws, scope)
		} else if ic := ix.cursor(scope); ic != nil {
			c = ic
		} else {
			continue // no call was ever in scope
		}
		var id string
		var ok bool
		if desc {
			bound := from
			if q.hi != "" && (bound == "" || q.hi < bound) {
				bound = q.hi
			}
			if bound == "" {
				id, ok = c.last()
			} else {
				id, ok = c.before(bound)
			}
		} else {
			start, exclusive := from, true
			if q.lo != "" && (start == "" || start < q.lo) {
				start, exclusive = q.lo, false
			}
			id, ok = c.atOrAfter(start)
			if exclusive && ok && id == start {
				id, ok = c.next()
			}
		}
		if ok {
			streams = append(streams, &stream{c: c, id: id})
		}
	}
	n, last := 0, ""
	for len(streams) > 0 && n < limit {
		best := 0
		for i := 1; i < len(streams); i++ {
			if (desc && streams[i].id > streams[best].id) || (!desc && streams[i].id < streams[best].id) {
				best = i
			}
		}
		s := streams[best]
		id := s.id
		if desc && q.lo != "" && id < q.lo || !desc && q.hi != "" && id >= q.hi {
			break // every other stream is further out of range
		}
		n++
		last = id
		var a callAttrs
		if q.implied {
			// Every entry of the scopes matches: no attributes to read.
		} else if v := s.c.value(); len(v) > 0 {
			a = decodeAttrs(v)
		} else {
			a = decodeAttrs(ix.get(q.ws, id))
		}
		if !fn(id, a) {
			break
		}
		var ok bool
		if desc {
			s.id, ok = s.c.prev()
		} else {
			s.id, ok = s.c.next()
		}
		if !ok {
			streams = append(streams[:best], streams[best+1:]...)
		}
	}
	return n, last
}

// page returns one newest-first page of q with the cursor semantics of conventions §4. A
// page examines at most maxCallScan entries; one that reaches the bound before filling
// ends there, and its cursor continues the walk from the last entry examined.
func (q *callQuery) page(db *DB, tx *bbolt.Tx, req data.PageRequest) ([]string, data.Page, error) {
	perPage := req.PerPage
	if perPage == 0 {
		perPage = DefaultPerPage
	}
	meta := data.Page{PerPage: perPage}
	dir, from := byte(older), ""
	if req.Cursor != "" {
		d, id, ok := db.decodeCursor(req.Cursor, q.binding)
		if !ok {
			return nil, meta, errBadCursor()
		}
		dir, from = d, id
	}
	desc := dir == older
	var ids []string
	more := false
	scanned, last := q.walk(tx, desc, from, maxCallScan, func(id string, a callAttrs) bool {
		if !q.ok(id, a) {
			return true
		}
		if len(ids) == perPage {
			more = true
			return false
		}
		ids = append(ids, id)
		return true
	})
	truncated := scanned == maxCallScan && !more
	if !desc {
		for i, j := 0, len(ids)-1; i < j; i, j = i+1, j-1 {
			ids[i], ids[j] = ids[j], ids[i]
		}
	}
	// Beyond the page in its own direction: more, or the walk stopped at the scan bound.
	ahead := func(edge string) *string {
		if truncated {
			return db.encodeCursor(dir, q.binding, last)
		}
		if more {
			return db.encodeCursor(dir, q.binding, edge)
		}
		return nil
	}
	// Behind the page: is there a matching entry on the other side of its first record?
	// A probe that reaches the scan bound cannot tell, so it offers the cursor.
	behind := func(edge string, d byte) *string {
		found := false
		n, _ := q.walk(tx, d == older, edge, maxCallScan, func(id string, a callAttrs) bool {
			found = q.ok(id, a)
			return !found
		})
		if found || n == maxCallScan {
			return db.encodeCursor(d, q.binding, edge)
		}
		return nil
	}
	if desc {
		if len(ids) > 0 {
			meta.NextCursor = ahead(ids[len(ids)-1])
		} else if truncated {
			meta.NextCursor = ahead("")
		}
		if from != "" {
			edge := from
			if len(ids) > 0 {
				edge = ids[0]
			}
			meta.PrevCursor = behind(edge, newer)
		}
	} else {
		if len(ids) > 0 {
			meta.PrevCursor = ahead(ids[0])
			meta.NextCursor = behind(ids[len(ids)-1], older)
		} else {
			meta.PrevCursor = ahead("")
			meta.NextCursor = behind(from, older)
		}
	}
	return ids, meta, nil
}

// newCallQuery resolves a filter: it picks the scope with the fewest entries among those
// the filters name (or the agents the list is restricted to), and checks the rest of the
// filters on each entry. agentIDs not nil restricts the list to those agents.
func newCallQuery(tx *bbolt.Tx, ws string, agentIDs []string, f data.CallFilter) *callQuery {
	counts := tx.Bucket(bucketCallScopeCounts)
	q := &callQuery{scopes: []string{ws}, ws: ws}
	best := scopeCountOf(counts, ws)
	consider := func(scopes ...string) {
		var n uint64
		for _, s := range scopes {
			n += scopeCountOf(counts, s)
		}
		if n < best || len(q.scopes) == 1 && q.scopes[0] == ws {
			q.scopes, best = scopes, n
		}
	}
	limited := agentIDs != nil
	if f.AgentID != "" {
		consider(callAgentScope(ws, f.AgentID))
	} else if limited {
		scopes := make([]string, len(agentIDs))
		for i, a := range agentIDs {
			scopes[i] = callAgentScope(ws, a)
		}
		consider(scopes...)
	}
	if f.NumberID != "" {
		consider(ws + "/n/" + f.NumberID)
	}
	if f.Direction != "" {
		consider(ws + "/d/" + f.Direction)
	}
	if f.Status != "" {
		consider(ws + "/s/" + f.Status)
	}
	if f.AgentID != "" && limited && !slices.Contains(agentIDs, f.AgentID) {
		q.scopes = nil // an agent outside the restriction has no calls to list
	}
	q.match = func(a callAttrs) bool {
		return (f.AgentID == "" || a.agent == f.AgentID) &&
			(!limited || slices.Contains(agentIDs, a.agent)) &&
			(f.NumberID == "" || a.number == f.NumberID) &&
			(f.Direction == "" || a.direction == f.Direction) &&
			(f.Status == "" || a.status == f.Status)
	}
	if f.NumberID == "" && f.Direction == "" && f.Status == "" {
		// The scopes answer the agent filter and the restriction themselves (an agent's
		// scope, the allowed agents' scopes, or none): a walk need not read attributes.
		q.implied = true
	}
	if !f.From.IsZero() {
		q.lo = data.IDBound(data.PrefixCall, f.From)
	}
	if !f.To.IsZero() {
		q.hi = data.IDBound(data.PrefixCall, f.To)
	}
	q.binding = pagecursor.BindAgents(strings.Join([]string{"calls", ws, f.AgentID, f.NumberID, f.Direction, f.Status,
		strconv.FormatInt(unixMilliOrZero(f.From), 10), strconv.FormatInt(unixMilliOrZero(f.To), 10)}, "\x00"), agentIDs)
	return q
}

func unixMilliOrZero(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}
