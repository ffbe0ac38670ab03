package bolt

import (
	"bytes"
	"encoding/binary"
	"errors"
	"slices"
	"sort"

	"go.etcd.io/bbolt"
)

// Posting blocks (schema 4). A term's postings in a workspace are packed into blocks of
// bucketCallPostingDocs, keyed "<ws>/t/<term>\x00" and the millisecond of the block's
// first entry as 6 bytes big-endian. An entry names its call by docID (calls_slots.go).
//
// A block's value: blockFormat2, uvarint(the first entry's millisecond), then each entry
// as uvarint(Δms<<2 | hasSlot<<1 | tfNot1) [uvarint(slot)] [tf byte], Δms against the
// entry before (0 for the first), and last the last entry's docID in 9 bytes (6 of
// millisecond, 3 of slot), so that a newer call is appended without reading the block.
// A seeded call's 51 postings take about 100 bytes of pages this way; as call ids
// (schema 3) they took about 770 bytes of data, and as one key each (schema 2) 9 KB.
//
// Entries are in call id order: by millisecond, and within one millisecond by id (an
// entry joining a millisecond that already has one is placed by resolving their ids).
// The entries of one millisecond never span two blocks, so a block's key orders it among
// its term's blocks, and a call's entry can only be in the last block keyed at or before
// its millisecond. A walk over a term is thus in id order like an index scope's, and its
// cursors are unchanged.
var bucketCallPostingDocs = []byte("call_posting_docs")

const (
	blockFormat2 = 0x02
	// maxBlockBytes bounds a block's value (a millisecond's entries may exceed it): an
	// insert rewrites its block, and a lookup decodes it.
	maxBlockBytes = 1024
)

// posting is one call of a term's list.
type posting struct {
	doc docID
	tf  byte
}

// blockKey is the key of scope's block whose first entry is of millisecond ms.
func blockKey(scope string, ms uint64) []byte {
	k := make([]byte, 0, len(scope)+7)
	k = append(append(k, scope...), 0)
	return appendMS6(k, ms)
}

func appendEntry(dst []byte, prevMS uint64, p posting) []byte {
	head := (p.doc.ms - prevMS) << 2
	if p.doc.slot != 0 {
		head |= 2
	}
	if p.tf != 1 {
		head |= 1
	}
	dst = binary.AppendUvarint(dst, head)
	if p.doc.slot != 0 {
		dst = binary.AppendUvarint(dst, uint64(p.doc.slot))
	}
	if p.tf != 1 {
		dst = append(dst, p.tf)
	}
	return dst
}

// encodeBlock encodes a non-empty list in id order.
func encodeBlock(list []posting) []byte {
	out := make([]byte, 0, 16+2*len(list))
	out = binary.AppendUvarint(append(out, blockFormat2), list[0].doc.ms)
	prev := list[0].doc.ms
	for _, p := range list {
		out = appendEntry(out, prev, p)
		prev = p.doc.ms
	}
	return appendTrailer(out, list[len(list)-1].doc)
}

// blockTrailer is the size of the last entry's docID at a block's end.
const blockTrailer = 9

func appendTrailer(dst []byte, d docID) []byte {
	return append(appendMS6(dst, d.ms), byte(d.slot>>16), byte(d.slot>>8), byte(d.slot))
}

func readTrailer(v []byte) docID {
	t := v[len(v)-blockTrailer:]
	return docID{readMS6(t), uint32(t[6])<<16 | uint32(t[7])<<8 | uint32(t[8])}
}

func appendMS6(dst []byte, ms uint64) []byte {
	return append(dst, byte(ms>>40), byte(ms>>32), byte(ms>>24), byte(ms>>16), byte(ms>>8), byte(ms))
}

func readMS6(b []byte) uint64 {
	return uint64(b[0])<<40 | uint64(b[1])<<32 | uint64(b[2])<<24 | uint64(b[3])<<16 | uint64(b[4])<<8 | uint64(b[5])
}

var errBadBlock = errors.New("a posting block is malformed")

// blockReader reads a block's entries in order without allocating.
type blockReader struct {
	rest []byte
	ms   uint64
}

func newBlockReader(v []byte) (blockReader, error) {
	if len(v) < 1+blockTrailer || v[0] != blockFormat2 {
		return blockReader{}, errBadBlock
	}
	ms, n := binary.Uvarint(v[1 : len(v)-blockTrailer])
	if n <= 0 {
		return blockReader{}, errBadBlock
	}
	return blockReader{rest: v[1+n : len(v)-blockTrailer], ms: ms}, nil
}

// next returns the next entry; false at the end. A malformed entry is an error.
func (r *blockReader) next() (posting, bool, error) {
	if len(r.rest) == 0 {
		return posting{}, false, nil
	}
	head, n := binary.Uvarint(r.rest)
	if n <= 0 || head>>2 > 1<<48 {
		return posting{}, false, errBadBlock
	}
	r.rest = r.rest[n:]
	r.ms += head >> 2
	p := posting{doc: docID{ms: r.ms}, tf: 1}
	if head&2 != 0 {
		slot, n := binary.Uvarint(r.rest)
		if n <= 0 || slot == 0 || slot >= maxSlot {
			return posting{}, false, errBadBlock
		}
		p.doc.slot = uint32(slot)
		r.rest = r.rest[n:]
	}
	if head&1 != 0 {
		if len(r.rest) == 0 || r.rest[0] <= 1 {
			return posting{}, false, errBadBlock
		}
		p.tf = r.rest[0]
		r.rest = r.rest[1:]
	}
	return p, true, nil
}

func decodeBlock(v []byte) ([]posting, error) {
	r, err := newBlockReader(v)
	if err != nil {
		return nil, err
	}
	list := make([]posting, 0, len(v)/2)
	for {
		p, ok, err := r.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		list = append(list, p)
	}
	if len(list) == 0 || list[len(list)-1].doc != readTrailer(v) {
		return nil, errBadBlock
	}
	return list, nil
}

// blockFor positions c on the block of scope that holds millisecond ms if any block does:
// the last block keyed at or before ms, else the scope's first block. It returns nil when
// the scope has no block.
func blockFor(c *bbolt.Cursor, scope string, ms uint64) (k, v []byte) {
	prefix := indexKey(scope, "")
	// Every key "<scope>\x00<ms>" sorts before "<scope>\x00<ms>\x00".
	if k, _ = seekBefore(c, append(blockKey(scope, ms), 0)); k != nil && bytes.HasPrefix(k, prefix) {
		return c.Seek(k)
	}
	if k, v = c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix) {
		return k, v
	}
	return nil, nil
}

// msRange returns the bounds of list's entries of millisecond ms.
func msRange(list []posting, ms uint64) (lo, hi int) {
	lo = sort.Search(len(list), func(i int) bool { return list[i].doc.ms >= ms })
	hi = lo
	for hi < len(list) && list[hi].doc.ms == ms {
		hi++
	}
	return lo, hi
}

// postingTF returns d's frequency in term scope's list, 0 when it is not there.
func postingTF(b *bbolt.Bucket, scope string, d docID) byte {
	_, v := blockFor(b.Cursor(), scope, d.ms)
	if len(v) < 1+blockTrailer || readTrailer(v).ms < d.ms {
		return 0 // no block, or d is past the block's last entry
	}
	r, err := newBlockReader(v)
	if err != nil {
		return 0
	}
	for {
		p, ok, err := r.next()
		if !ok || err != nil || p.doc.ms > d.ms {
			return 0
		}
		if p.doc == d {
			return p.tf
		}
	}
}

// putPosting sets the frequency of call pc in term scope's list; tf 0 removes it. ix
// resolves the calls of a millisecond that already has an entry. It returns +1 when the
// call joined the list, -1 when it left it, 0 otherwise.
func putPosting(b *bbolt.Bucket, ix callIndex, scope string, pc postedCall, tf byte) (int, error) {
	d := pc.doc
	k, v := blockFor(b.Cursor(), scope, d.ms)
	if k == nil {
		if tf == 0 {
			return 0, nil
		}
		return 1, b.Put(blockKey(scope, d.ms), encodeBlock([]posting{{d, tf}}))
	}
	k = append([]byte(nil), k...)
	if tf != 0 {
		if done, err := appendPosting(b, scope, k, v, posting{d, tf}, pc.newest); done || err != nil {
			return 1, err
		}
	}
	list, err := decodeBlock(v)
	if err != nil {
		return 0, err
	}
	lo, hi := msRange(list, d.ms)
	at := slices.IndexFunc(list[lo:hi], func(p posting) bool { return p.doc.slot == d.slot })
	delta := 0
	switch {
	case at >= 0 && tf == 0:
		list = slices.Delete(list, lo+at, lo+at+1)
		delta = -1
	case at >= 0:
		if list[lo+at].tf == tf {
			return 0, nil
		}
		list[lo+at].tf = tf
	case tf == 0:
		return 0, nil
	default:
		// Within its millisecond the entry goes after the calls with smaller ids.
		pos := lo
		if lo < hi {
			var g msGroup
			g.load(ix, pc.ws, d.ms)
			for ; pos < hi; pos++ {
				if other, _, ok := g.find(list[pos].doc.slot); ok && other > pc.id {
					break
				}
			}
		}
		list = slices.Insert(list, pos, posting{d, tf})
		delta = 1
	}
	return delta, writeBlock(b, scope, k, list)
}

// writeBlock stores list in place of the block at oldKey: under its first entry's key,
// split at a millisecond's edge when too big.
func writeBlock(b *bbolt.Bucket, scope string, oldKey []byte, list []posting) error {
	if len(list) == 0 {
		return b.Delete(oldKey)
	}
	key := blockKey(scope, list[0].doc.ms)
	if !bytes.Equal(key, oldKey) {
		if err := b.Delete(oldKey); err != nil {
			return err
		}
	}
	enc := encodeBlock(list)
	if len(enc) <= maxBlockBytes {
		return b.Put(key, enc)
	}
	cut := msEdgeNear(list, len(list)/2)
	if cut == 0 {
		return b.Put(key, enc) // one millisecond's entries stay together
	}
	if err := b.Put(key, encodeBlock(list[:cut])); err != nil {
		return err
	}
	return b.Put(blockKey(scope, list[cut].doc.ms), encodeBlock(list[cut:]))
}

// msEdgeNear returns the index nearest i at which a new millisecond starts (0: none).
func msEdgeNear(list []posting, i int) int {
	for d := 0; d < len(list); d++ {
		for _, j := range []int{i + d, i - d} {
			if j > 0 && j < len(list) && list[j].doc.ms != list[j-1].doc.ms {
				return j
			}
		}
	}
	return 0
}

// appendPosting is putPosting's fast path for the usual case, a call newer than every
// entry of its block (calls arrive in id order): the entry is appended to the block's
// bytes, or starts a new block when the block is full. A call of the block's last
// millisecond is appended when newest says no call of that millisecond sorts after it
// (and stays in the block whatever its size: a millisecond is never split). It reports
// false, having written nothing, for any other case.
func appendPosting(b *bbolt.Bucket, scope string, k, v []byte, p posting, newest bool) (bool, error) {
	if len(v) < 1+blockTrailer || v[0] != blockFormat2 {
		return false, errBadBlock
	}
	last := readTrailer(v)
	if p.doc.ms < last.ms || p.doc.ms == last.ms && (!newest || p.doc == last) {
		return false, nil
	}
	entry := appendEntry(nil, last.ms, p)
	if p.doc.ms > last.ms && len(v)+len(entry) > maxBlockBytes {
		return true, b.Put(blockKey(scope, p.doc.ms), encodeBlock([]posting{p}))
	}
	out := make([]byte, 0, len(v)+len(entry))
	out = append(append(out, v[:len(v)-blockTrailer]...), entry...)
	return true, b.Put(k, appendTrailer(out, p.doc))
}

// blockCursor walks one term scope's postings in id order, across its blocks, resolving
// each entry to its call through the workspace's index entries (whose values it offers:
// a search reads the call's attributes from them).
type blockCursor struct {
	c      *bbolt.Cursor
	ix     callIndex
	ws     string
	scope  string
	prefix []byte
	list   []posting
	i      int
	v      []byte  // the current entry's index value
	group  msGroup // the calls of the millisecond last resolved
}

// resolve returns the call entry d names, through the millisecond's calls.
func (bc *blockCursor) resolve(d docID) (string, []byte, bool) {
	bc.group.load(bc.ix, bc.ws, d.ms)
	return bc.group.find(d.slot)
}

func newBlockCursor(b *bbolt.Bucket, ix callIndex, ws, scope string) *blockCursor {
	return &blockCursor{c: b.Cursor(), ix: ix, ws: ws, scope: scope, prefix: indexKey(scope, "")}
}

// load decodes the block at k (when it is in scope) and reports whether it holds entries.
func (bc *blockCursor) load(k, v []byte) bool {
	bc.list, bc.i = nil, 0
	if k == nil || !bytes.HasPrefix(k, bc.prefix) {
		return false
	}
	list, err := decodeBlock(v)
	if err != nil || len(list) == 0 {
		return false // a malformed block ends the walk rather than failing a read
	}
	bc.list = list
	return true
}

// settle returns the call at the current position, moving by step (+1 or -1) past
// entries that name no stored call, and across blocks.
func (bc *blockCursor) settle(step int) (string, bool) {
	for {
		switch {
		case bc.i < 0:
			if !bc.load(bc.c.Prev()) {
				return "", false
			}
			bc.i = len(bc.list) - 1
		case bc.i >= len(bc.list):
			if !bc.load(bc.c.Next()) {
				return "", false
			}
		default:
			if id, v, ok := bc.resolve(bc.list[bc.i].doc); ok {
				bc.v = v
				return id, true
			}
			bc.i += step
		}
	}
}

// seek loads the block that may hold id's millisecond and returns the position of the
// first entry at or after id in it (possibly its end).
func (bc *blockCursor) seek(id string) (int, bool) {
	ms := msOfBound(id)
	if !bc.load(blockFor(bc.c, bc.scope, ms)) {
		return 0, false
	}
	lo, hi := msRange(bc.list, ms)
	for ; lo < hi; lo++ {
		if other, _, ok := bc.resolve(bc.list[lo].doc); ok && other >= id {
			break
		}
	}
	return lo, true
}

// last positions on the scope's newest entry.
func (bc *blockCursor) last() (string, bool) {
	k, _ := seekLastWithPrefix(bc.c, bc.prefix)
	if k == nil || !bc.load(bc.c.Seek(k)) {
		return "", false
	}
	bc.i = len(bc.list) - 1
	return bc.settle(-1)
}

// before positions on the greatest entry less than id.
func (bc *blockCursor) before(id string) (string, bool) {
	at, ok := bc.seek(id)
	if !ok {
		return "", false
	}
	bc.i = at - 1
	return bc.settle(-1)
}

// atOrAfter positions on the least entry at or after id.
func (bc *blockCursor) atOrAfter(id string) (string, bool) {
	at, ok := bc.seek(id)
	if !ok {
		return "", false
	}
	bc.i = at
	return bc.settle(1)
}

func (bc *blockCursor) next() (string, bool) {
	bc.i++
	return bc.settle(1)
}

func (bc *blockCursor) prev() (string, bool) {
	bc.i--
	return bc.settle(-1)
}

// value is the current call's workspace index entry (its attributes).
func (bc *blockCursor) value() []byte { return bc.v }

// msOfBound is the millisecond a walk bound falls in: a call id's, or that of a bound
// made from one (a synthetic id, an id with a suffix); a string that does not start like a
// call id is before (0) or after every millisecond, as it sorts.
func msOfBound(id string) uint64 {
	if len(id) >= len(msPrefix(0)) {
		if ms, ok := prefixMS(id); ok {
			return ms
		}
	}
	if id < msPrefix(0) {
		return 0
	}
	return 1<<48 - 1
}
