package bolt

import (
	"bytes"
	"encoding/binary"
	"errors"
	"slices"
	"strings"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
)

// Posting blocks (schema 3). A term's postings in a workspace are packed into blocks of
// bucketCallPostingBlocks, keys "<ws>/t/<term>\x00<id of the block's first call>", each
// value a run of calls in id order with their frequencies. One posting was a key of its
// own before (about 70 bytes of key, a 16-byte element header and the half-empty pages of
// keys inserted all over the bucket: 180 bytes of file a posting, 9 KB a call of the bench
// seeder); in a block it is about 15 bytes. Blocks are ordered by id like the index scopes
// they replace, whatever order calls arrive in, so a walk and its cursors are unchanged.
//
// A block's value: blockFormat1, then each entry as <shared uvarint><suffix length
// uvarint><suffix><tf byte>, where the entry's key is front-coded against the previous
// entry's (the first against nothing). An entry's key is 0x00 and the 16 bytes of a call
// id ("call_" and 26 Crockford characters, whose byte order is their text order) or 0x01
// and the id's text for any other id.
var bucketCallPostingBlocks = []byte("call_posting_blocks")

const (
	blockFormat1 = 0x01
	// maxBlockBytes bounds a block's value: a posting's insert rewrites its block, and a
	// lookup decodes it.
	maxBlockBytes = 1024
)

// idDigits are the Crockford base32 digits of ids (data.IDGen), in byte order.
const idDigits = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// posting is one call of a term's list.
type posting struct {
	id string
	tf byte
}

// postingKey is the sortable byte form of a call id inside a block.
func postingKey(id string) []byte {
	if raw, ok := callIDBytes(id); ok {
		return append([]byte{0}, raw[:]...)
	}
	return append([]byte{1}, id...)
}

func postingID(key []byte) string {
	if len(key) == 17 && key[0] == 0 {
		return data.PrefixCall + crockford16(key[1:])
	}
	if len(key) > 0 {
		return string(key[1:])
	}
	return ""
}

// callIDBytes decodes a well-formed call id's 26 characters into their 128 bits.
func callIDBytes(id string) ([16]byte, bool) {
	var raw [16]byte
	if !data.ValidID(data.PrefixCall, id) {
		return raw, false
	}
	var hi, lo uint64
	for i := len(data.PrefixCall); i < len(id); i++ {
		d := uint64(strings.IndexByte(idDigits, id[i]))
		hi = hi<<5 | lo>>59
		lo = lo<<5 | d
	}
	binary.BigEndian.PutUint64(raw[:8], hi)
	binary.BigEndian.PutUint64(raw[8:], lo)
	return raw, true
}

// crockford16 is the inverse of callIDBytes: 128 bits as 26 Crockford characters.
func crockford16(raw []byte) string {
	hi, lo := binary.BigEndian.Uint64(raw[:8]), binary.BigEndian.Uint64(raw[8:])
	var out [26]byte
	for i := 25; i >= 0; i-- {
		out[i] = idDigits[lo&31]
		lo = lo>>5 | hi<<59
		hi >>= 5
	}
	return string(out[:])
}

func encodeBlock(list []posting) []byte {
	out := make([]byte, 1, 16*len(list)+1)
	out[0] = blockFormat1
	var prev []byte
	for _, p := range list {
		k := postingKey(p.id)
		shared := 0
		for shared < len(prev) && shared < len(k) && prev[shared] == k[shared] {
			shared++
		}
		out = binary.AppendUvarint(out, uint64(shared))
		out = binary.AppendUvarint(out, uint64(len(k)-shared))
		out = append(out, k[shared:]...)
		out = append(out, p.tf)
		prev = k
	}
	return out
}

var errBadBlock = errors.New("a posting block is malformed")

func decodeBlock(v []byte) ([]posting, error) {
	if len(v) == 0 || v[0] != blockFormat1 {
		return nil, errBadBlock
	}
	v = v[1:]
	var list []posting
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
		list = append(list, posting{id: postingID(key), tf: v[size]})
		v = v[size+1:]
	}
	return list, nil
}

// blockFor positions c on the block of scope whose entries id falls among: the last block
// whose first id is at or before id, else the scope's first block. It returns nil when the
// scope has no block.
func blockFor(c *bbolt.Cursor, scope, id string) (k, v []byte) {
	prefix := indexKey(scope, "")
	// "<scope>\x00<id>\x00" sorts after the key of a block that starts with id.
	if k = seekBefore(c, append(indexKey(scope, id), 0)); k != nil && bytes.HasPrefix(k, prefix) {
		return c.Seek(k)
	}
	if k, v = c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix) {
		return k, v
	}
	return nil, nil
}

// postingTF returns id's frequency in term scope's list, 0 when it is not there.
func postingTF(b *bbolt.Bucket, scope, id string) byte {
	_, v := blockFor(b.Cursor(), scope, id)
	if v == nil {
		return 0
	}
	list, err := decodeBlock(v)
	if err != nil {
		return 0
	}
	if i, ok := slices.BinarySearchFunc(list, id, func(p posting, id string) int { return strings.Compare(p.id, id) }); ok {
		return list[i].tf
	}
	return 0
}

// putPosting sets id's frequency in scope's list (tf 0 removes it).
func putPosting(b *bbolt.Bucket, scope, id string, tf byte) error {
	k, v := blockFor(b.Cursor(), scope, id)
	if k == nil {
		if tf == 0 {
			return nil
		}
		return b.Put(indexKey(scope, id), encodeBlock([]posting{{id, tf}}))
	}
	if done, err := appendPosting(b, scope, k, v, id, tf); done || err != nil {
		return err
	}
	oldKey := append([]byte(nil), k...)
	list, err := decodeBlock(v)
	if err != nil {
		return err
	}
	i, found := slices.BinarySearchFunc(list, id, func(p posting, id string) int { return strings.Compare(p.id, id) })
	switch {
	case found && tf == 0:
		list = slices.Delete(list, i, i+1)
	case found:
		if list[i].tf == tf {
			return nil
		}
		list[i].tf = tf
	case tf == 0:
		return nil
	default:
		list = slices.Insert(list, i, posting{id, tf})
	}
	if len(list) == 0 || list[0].id != postingIDOfKey(oldKey, scope) {
		if err := b.Delete(oldKey); err != nil {
			return err
		}
	}
	if len(list) == 0 {
		return nil
	}
	enc := encodeBlock(list)
	if len(enc) <= maxBlockBytes {
		return b.Put(indexKey(scope, list[0].id), enc)
	}
	// Too big: a call appended after the block's last starts a new block (calls arrive in
	// id order, so blocks fill up); one inserted inside splits it in halves.
	cut := len(list) / 2
	if !found && i == len(list)-1 {
		cut = i
	}
	if err := b.Put(indexKey(scope, list[0].id), encodeBlock(list[:cut])); err != nil {
		return err
	}
	return b.Put(indexKey(scope, list[cut].id), encodeBlock(list[cut:]))
}

// appendPosting is putPosting's fast path for the usual case, a call newer than every
// call of its block (calls arrive in id order): the entry is appended to the block's bytes
// (or starts a new block when the block is full) without decoding the block into postings.
// It reports false, having written nothing, for any other case.
func appendPosting(b *bbolt.Bucket, scope string, k, v []byte, id string, tf byte) (bool, error) {
	if tf == 0 || len(v) == 0 || v[0] != blockFormat1 {
		return false, nil
	}
	var last []byte
	for rest := v[1:]; len(rest) > 0; {
		shared, n := binary.Uvarint(rest)
		if n <= 0 || shared > uint64(len(last)) {
			return false, errBadBlock
		}
		rest = rest[n:]
		size, n := binary.Uvarint(rest)
		if n <= 0 || uint64(len(rest)-n) < size+1 {
			return false, errBadBlock
		}
		rest = rest[n:]
		last = append(last[:shared], rest[:size]...)
		rest = rest[size+1:]
	}
	if id <= postingID(last) {
		return false, nil
	}
	key := postingKey(id)
	shared := 0
	for shared < len(last) && shared < len(key) && last[shared] == key[shared] {
		shared++
	}
	if len(v)+len(key)-shared+3 > maxBlockBytes {
		return true, b.Put(indexKey(scope, id), encodeBlock([]posting{{id, tf}}))
	}
	out := make([]byte, 0, len(v)+len(key)-shared+4)
	out = append(out, v...)
	out = binary.AppendUvarint(out, uint64(shared))
	out = binary.AppendUvarint(out, uint64(len(key)-shared))
	out = append(out, key[shared:]...)
	out = append(out, tf)
	return true, b.Put(append([]byte(nil), k...), out)
}

func postingIDOfKey(k []byte, scope string) string { return string(k[len(scope)+1:]) }

// blockCursor walks one term scope's postings in id order, across its blocks.
type blockCursor struct {
	c      *bbolt.Cursor
	prefix []byte
	list   []posting
	i      int
}

func newBlockCursor(b *bbolt.Bucket, scope string) *blockCursor {
	return &blockCursor{c: b.Cursor(), prefix: indexKey(scope, "")}
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

func (bc *blockCursor) at() (string, bool) {
	if bc.i < 0 || bc.i >= len(bc.list) {
		return "", false
	}
	return bc.list[bc.i].id, true
}

// last positions on the scope's newest entry.
func (bc *blockCursor) last() (string, bool) {
	k := seekLastWithPrefix(bc.c, bc.prefix)
	if k == nil {
		return "", false
	}
	k, v := bc.c.Seek(k)
	if !bc.load(k, v) {
		return "", false
	}
	bc.i = len(bc.list) - 1
	return bc.at()
}

// before positions on the greatest entry less than id.
func (bc *blockCursor) before(id string) (string, bool) {
	k := seekBefore(bc.c, indexKey(string(bc.prefix[:len(bc.prefix)-1]), id))
	if k == nil {
		return "", false
	}
	k, v := bc.c.Seek(k)
	if !bc.load(k, v) {
		return "", false
	}
	// The block starts before id, so one of its entries is less than id.
	bc.i, _ = slices.BinarySearchFunc(bc.list, id, func(p posting, id string) int { return strings.Compare(p.id, id) })
	bc.i--
	return bc.at()
}

// atOrAfter positions on the least entry at or after id.
func (bc *blockCursor) atOrAfter(id string) (string, bool) {
	scope := string(bc.prefix[:len(bc.prefix)-1])
	k, v := blockFor(bc.c, scope, id)
	if !bc.load(k, v) {
		return "", false
	}
	bc.i, _ = slices.BinarySearchFunc(bc.list, id, func(p posting, id string) int { return strings.Compare(p.id, id) })
	if bc.i == len(bc.list) {
		return bc.next()
	}
	return bc.at()
}

func (bc *blockCursor) next() (string, bool) {
	bc.i++
	if bc.i < len(bc.list) {
		return bc.at()
	}
	if !bc.load(bc.c.Next()) {
		return "", false
	}
	return bc.at()
}

func (bc *blockCursor) prev() (string, bool) {
	bc.i--
	if bc.i >= 0 {
		return bc.at()
	}
	if !bc.load(bc.c.Prev()) {
		return "", false
	}
	bc.i = len(bc.list) - 1
	return bc.at()
}

// value is nil: a posting has no attributes (the search reads them from the index).
func (bc *blockCursor) value() []byte { return nil }
