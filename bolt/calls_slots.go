package bolt

import (
	"bytes"
	"fmt"
	"strconv"

	"github.com/voiceapi/voiceapi/data"
)

// Posting numbers (schema 4). A posting names its call by a docID: the millisecond the
// call's id carries and a slot that tells apart the calls of one workspace created in
// the same millisecond (0 for the first, and for nearly every call). Postings delta-code
// it in one or two bytes, where the call id's 80 random bits took about fifteen (1.5 KB
// of the 3.8 KB a seeded call cost). The slot is kept in the value of the call's entry
// in its workspace scope (calls_entries.go), after the attributes ("\x00" and the slot in
// decimal, absent for 0), so a docID is resolved to its call by a seek to that
// millisecond among the workspace's entries, and a call's docID read from its entry.
//
// A slot never changes while the call exists; a new call takes one more than the
// greatest slot of its millisecond. Ids made by this process grow in the order calls are
// stored, so calls of one millisecond usually have their slots in id order; postings do
// not rely on it (a block keeps a millisecond's entries in id order, see
// calls_postings.go).
type docID struct {
	ms   uint64
	slot uint32
}

// maxSlot bounds the calls of one workspace in one millisecond (a slot is a uvarint in
// a posting; the bound keeps a docID small and a millisecond's walk short).
const maxSlot = 1 << 20

// idMS returns the millisecond of a well-formed call id.
func idMS(id string) (uint64, bool) {
	ms, ok := idMillis(data.PrefixCall, id)
	return uint64(ms), ok
}

// prefixMS reads the millisecond from the first characters of s, which must be those of
// a call id (s may go on with anything: a walk's bounds are made from ids).
func prefixMS(s string) (uint64, bool) {
	n := len(data.PrefixCall) + 10
	if len(s) < n || s[:len(data.PrefixCall)] != data.PrefixCall || s[len(data.PrefixCall)] > '7' {
		return 0, false
	}
	var ms uint64
	for i := len(data.PrefixCall); i < n; i++ {
		d := crockfordValues[s[i]]
		if d == 0xFF {
			return 0, false
		}
		ms = ms<<5 | uint64(d)
	}
	return ms, true
}

// msPrefix is the text every call id of millisecond ms starts with.
func msPrefix(ms uint64) string {
	var out [10]byte
	for i := 9; i >= 0; i-- {
		out[i] = crockfordDigits[ms&31]
		ms >>= 5
	}
	return data.PrefixCall + string(out[:])
}

// entrySlot reads the slot from a workspace scope entry's value (0 when absent, as in
// entries written before schema 4).
func entrySlot(v []byte) uint32 {
	zeros := 0
	for i, c := range v {
		if c != 0 {
			continue
		}
		if zeros++; zeros == 4 {
			n, err := strconv.ParseUint(string(v[i+1:]), 10, 32)
			if err != nil {
				return 0
			}
			return uint32(n)
		}
	}
	return 0
}

// withSlot is a workspace scope entry's value: the attributes, then the slot unless 0.
func withSlot(attrs []byte, slot uint32) []byte {
	if slot == 0 {
		return attrs
	}
	return strconv.AppendUint(append(attrs, 0), uint64(slot), 10)
}

// msEntries calls fn with each entry of workspace ws's scope whose call was created in
// millisecond ms, in id order, until fn returns false. An id's first 6 bytes are its
// millisecond, so they are one key range.
func msEntries(ix callIndex, ws string, ms uint64, fn func(id string, v []byte) bool) {
	p, ok := ix.prefix(ws)
	if !ok {
		return
	}
	at := append(append([]byte(nil), p...), byte(ms>>40), byte(ms>>32), byte(ms>>24), byte(ms>>16), byte(ms>>8), byte(ms))
	c := ix.entries.Cursor()
	for k, v := c.Seek(at); k != nil && bytes.HasPrefix(k, at) && len(k) == len(p)+16; k, v = c.Next() {
		if !fn(entryID(p, k), v) {
			return
		}
	}
}

// newSlot returns the slot for a call of ws not yet in its scope, created in ms.
func newSlot(ix callIndex, ws string, ms uint64) (uint32, error) {
	var slot uint32
	n := 0
	msEntries(ix, ws, ms, func(_ string, v []byte) bool {
		n++
		slot = max(slot, entrySlot(v)+1)
		return true
	})
	if slot >= maxSlot {
		return 0, fmt.Errorf("workspace %s has %d calls in one millisecond, the most it may have", ws, n)
	}
	return slot, nil
}

// postedCall is a call as its postings name it.
type postedCall struct {
	ws, id string
	doc    docID
	// newest: no call of ws created in the same millisecond has a greater id, so the
	// call's entries go after every entry of its millisecond (ids made by this process
	// grow as calls are stored: the usual case).
	newest bool
}

// postedCallOf returns call id of ws as its postings name it, false when the call is not
// in ws's scope or its id is not well formed.
func postedCallOf(ix callIndex, ws, id string) (postedCall, bool) {
	ms, _ := idMS(id)
	k, ok := ix.keyOf(ws, id)
	if !ok {
		return postedCall{}, false
	}
	c := ix.entries.Cursor()
	at, v := c.Seek(k) // the entry (its slot), then the one after it
	if !bytes.Equal(at, k) {
		return postedCall{}, false
	}
	pc := postedCall{ws: ws, id: id, doc: docID{ms, entrySlot(v)}, newest: true}
	// The key ends with the id's 6 bytes of millisecond and 10 of randomness.
	if next, _ := c.Next(); next != nil && len(next) == len(k) && bytes.HasPrefix(next, k[:len(k)-10]) {
		pc.newest = false // a call of the same millisecond sorts after it
	}
	return pc, true
}

// docOf returns the docID of call id of ws, false when the call is not in ws's scope or
// its id is not well formed.
func docOf(ix callIndex, ws, id string) (docID, bool) {
	ms, ok := idMS(id)
	if !ok {
		return docID{}, false
	}
	v := ix.get(ws, id)
	if v == nil {
		return docID{}, false
	}
	return docID{ms, entrySlot(v)}, true
}

// msGroup is the calls of one workspace created in one millisecond, in id order, with
// their slots and entry values: what resolves a posting of that millisecond.
type msGroup struct {
	ms     uint64
	loaded bool
	slots  []uint32
	ids    []string
	values [][]byte
}

// load reads ws's calls of millisecond ms into g (one seek), unless g holds them.
func (g *msGroup) load(ix callIndex, ws string, ms uint64) {
	if g.loaded && g.ms == ms {
		return
	}
	g.ms, g.loaded = ms, true
	g.slots, g.ids, g.values = g.slots[:0], g.ids[:0], g.values[:0]
	msEntries(ix, ws, ms, func(id string, v []byte) bool {
		g.slots, g.ids, g.values = append(g.slots, entrySlot(v)), append(g.ids, id), append(g.values, v)
		return true
	})
}

// find returns the call of g with slot.
func (g *msGroup) find(slot uint32) (id string, value []byte, ok bool) {
	for i, s := range g.slots {
		if s == slot {
			return g.ids[i], g.values[i], true
		}
	}
	return "", nil, false
}

// resolve returns the call of ws that d names with its scope entry's value, false when
// there is none.
func resolve(ix callIndex, ws string, d docID) (id string, value []byte, ok bool) {
	var g msGroup
	g.load(ix, ws, d.ms)
	return g.find(d.slot)
}
