package bolt

import (
	"bytes"
	crand "crypto/rand"
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
)

// crowdedIDs makes n call ids on a clock that moves one millisecond every few ids, so
// that many milliseconds hold several calls.
func crowdedIDs(r *rand.Rand, n int) []string {
	now := time.UnixMilli(1_790_000_000_000)
	g := &data.IDGen{Now: func() time.Time {
		if r.IntN(4) == 0 {
			now = now.Add(time.Millisecond)
		}
		return now
	}, Rand: crand.Reader}
	ids := make([]string, n)
	for i := range ids {
		ids[i] = g.New(data.PrefixCall)
	}
	return ids
}

var testAttrs = callAttrs{agent: "agt_1", direction: data.DirectionWeb, status: data.CallEnded}

// Calls of crowded milliseconds enter the index in a shuffled order (so a millisecond's
// slots are not in id order); random inserts, frequency changes and deletes of their
// postings, in any order, keep every term's blocks equal to a sorted model: lookups,
// walks both ways from any point, blocks keyed by their first millisecond, within their
// size bound, in id order, a millisecond never split. Calls that leave the index without
// their postings are skipped by walks.
func TestPostingBlocksMatchModel(t *testing.T) {
	db := openInternal(t, &clock{time.Now()})
	r := rand.New(rand.NewPCG(1, 2))
	const ws = "ws_1"
	ids := crowdedIDs(r, 3000)
	storeShuffledCalls(t, db, ws, ids, r)
	if n := slotsOutOfIDOrder(t, db, ws); n < 50 {
		t.Fatalf("only %d milliseconds have slots out of id order: the test does not cover them", n)
	}
	m := &postingModel{ws: ws, r: r, ids: ids, scopes: []string{"ws_1/t/a", "ws_1/t/b", "ws_1/t/c"}, model: map[string]map[string]byte{}, gone: map[string]bool{}}
	for _, s := range m.scopes {
		m.model[s] = map[string]byte{}
	}
	for round := range 6 {
		err := db.bolt.Update(func(tx *bbolt.Tx) error {
			b, ix := tx.Bucket(bucketCallPostingDocs), callIndexOf(tx)
			if err := m.putRandomPostings(t, b, ix, round); err != nil {
				return err
			}
			if round == 3 {
				return m.leaveIndexWithPostings(tx)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		checkPostings(t, db, ws, m.scopes, m.model, ids, m.gone, r)
	}
}

// storeShuffledCalls indexes the calls of ids in ws in a random order, so that slots are
// not in id order.
func storeShuffledCalls(t *testing.T, db *DB, ws string, ids []string, r *rand.Rand) {
	t.Helper()
	stored := slices.Clone(ids)
	r.Shuffle(len(stored), func(i, j int) { stored[i], stored[j] = stored[j], stored[i] })
	err := db.bolt.Update(func(tx *bbolt.Tx) error {
		for _, id := range stored {
			if err := moveCallIndexes(tx, ws, id, nil, &testAttrs); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// postingModel is what each scope's postings should hold, and the calls gone from the
// index, beside the randomness that changes them.
type postingModel struct {
	ws     string
	r      *rand.Rand
	ids    []string
	scopes []string
	model  map[string]map[string]byte // scope → call id → term frequency
	gone   map[string]bool
}

// putRandomPostings inserts, changes and deletes 2000 random postings in b and the
// model, checking each put's delta. Early rounds append mostly in id order, later ones
// anywhere; the last only deletes.
func (m *postingModel) putRandomPostings(t *testing.T, b *bbolt.Bucket, ix callIndex, round int) error {
	t.Helper()
	for range 2000 {
		scope := m.scopes[m.r.IntN(len(m.scopes))]
		var id string
		if round < 2 {
			id = m.ids[min(len(m.ids)-1, len(m.model[scope])+m.r.IntN(5))]
		} else {
			id = m.ids[m.r.IntN(len(m.ids))]
		}
		if m.gone[id] {
			continue
		}
		tf := byte(m.r.IntN(4)) // 0 deletes
		if round == 5 {
			tf = 0
		}
		pc, ok := postedCallOf(ix, m.ws, id)
		if !ok {
			t.Fatalf("%s has no docID", id)
		}
		delta, err := putPosting(b, ix, scope, pc, tf)
		if err != nil {
			return err
		}
		_, had := m.model[scope][id]
		if want := map[[2]bool]int{{false, true}: 1, {true, false}: -1}[[2]bool{had, tf != 0}]; delta != want {
			t.Fatalf("put %s %d (had %v): delta %d, want %d", id, tf, had, delta, want)
		}
		if tf == 0 {
			delete(m.model[scope], id)
		} else {
			m.model[scope][id] = tf
		}
	}
	return nil
}

// leaveIndexWithPostings takes 100 random calls out of the index with their postings
// left behind.
func (m *postingModel) leaveIndexWithPostings(tx *bbolt.Tx) error {
	for range 100 {
		id := m.ids[m.r.IntN(len(m.ids))]
		if !m.gone[id] {
			m.gone[id] = true
			if err := moveCallIndexes(tx, m.ws, id, &testAttrs, nil); err != nil {
				return err
			}
		}
	}
	return nil
}

// slotsOutOfIDOrder counts the milliseconds of ws whose slots do not grow with the ids.
func slotsOutOfIDOrder(t *testing.T, db *DB, ws string) int {
	n := 0
	db.bolt.View(func(tx *bbolt.Tx) error {
		lastMS, lastSlot, counted := uint64(0), uint32(0), false
		c := callIndexOf(tx).cursor(ws)
		for id, ok := c.atOrAfter(""); ok; id, ok = c.next() {
			ms, _ := idMS(id)
			slot := entrySlot(c.value())
			if ms == lastMS && slot < lastSlot && !counted {
				n++
				counted = true
			}
			if ms != lastMS {
				counted = false
			}
			lastMS, lastSlot = ms, slot
		}
		return nil
	})
	return n
}

func checkPostings(t *testing.T, db *DB, ws string, scopes []string, model map[string]map[string]byte, ids []string, gone map[string]bool, r *rand.Rand) {
	t.Helper()
	db.bolt.View(func(tx *bbolt.Tx) error {
		b, ix := tx.Bucket(bucketCallPostingDocs), callIndexOf(tx)
		checkBlockShapes(t, b, ix, ws)
		for _, scope := range scopes {
			want := checkPostingLookups(t, b, ix, ws, scope, model, ids, gone, r)
			c := newBlockCursor(b, ix, ws, scope)
			checkCursorWalks(t, c, ix, ws, scope, want)
			checkCursorSeeks(t, c, scope, want, ids, r)
		}
		return nil
	})
}

// checkBlockShapes checks every block: decodable and not empty, keyed by its first
// millisecond, within its size bound unless one millisecond fills it, after the scope's
// block before, its calls in id order.
func checkBlockShapes(t *testing.T, b *bbolt.Bucket, ix callIndex, ws string) {
	t.Helper()
	lastMS := map[string]uint64{}
	b.ForEach(func(k, v []byte) error {
		list, err := decodeBlock(v)
		if err != nil || len(list) == 0 {
			t.Fatalf("block %q: %d entries, %v", k, len(list), err)
		}
		scope := string(k[:len(k)-7])
		if !bytes.Equal(k, blockKey(scope, list[0].doc.ms)) {
			t.Fatalf("block %q starts with millisecond %d", k, list[0].doc.ms)
		}
		if len(v) > maxBlockBytes && list[0].doc.ms != list[len(list)-1].doc.ms {
			t.Fatalf("block %q: %d bytes over several milliseconds", k, len(v))
		}
		if prev, ok := lastMS[scope]; ok && prev >= list[0].doc.ms {
			t.Fatalf("block %q: millisecond %d follows %d", k, list[0].doc.ms, prev)
		}
		lastMS[scope] = list[len(list)-1].doc.ms
		prevID := ""
		for _, p := range list {
			if id, _, ok := resolve(ix, ws, p.doc); ok {
				if id <= prevID {
					t.Fatalf("block %q: %s after %s", k, id, prevID)
				}
				prevID = id
			}
		}
		return nil
	})
}

// checkPostingLookups holds 300 random calls' postings in scope to the model (a gone
// call has no document id) and returns the scope's calls in the model, sorted.
func checkPostingLookups(t *testing.T, b *bbolt.Bucket, ix callIndex, ws, scope string, model map[string]map[string]byte, ids []string, gone map[string]bool, r *rand.Rand) []string {
	t.Helper()
	var want []string
	for id := range model[scope] {
		if !gone[id] {
			want = append(want, id)
		}
	}
	slices.Sort(want)
	for range 300 {
		id := ids[r.IntN(len(ids))]
		d, ok := docOf(ix, ws, id)
		if gone[id] != !ok {
			t.Fatalf("%s: docID %v, gone %v", id, ok, gone[id])
		}
		if got := postingTF(b, scope, d); ok && got != model[scope][id] {
			t.Fatalf("%s %s: tf %d, want %d", scope, id, got, model[scope][id])
		}
	}
	return want
}

// checkCursorWalks walks c from the first call up and from the last down: want both
// ways, each value the call's index entry.
func checkCursorWalks(t *testing.T, c *blockCursor, ix callIndex, ws, scope string, want []string) {
	t.Helper()
	var got []string
	for id, ok := c.atOrAfter(""); ok; id, ok = c.next() {
		if !bytes.Equal(c.value(), ix.get(ws, id)) {
			t.Fatalf("%s: the cursor's value is not the call's entry", id)
		}
		got = append(got, id)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("%s ascending: %d ids, want %d", scope, len(got), len(want))
	}
	got = got[:0]
	for id, ok := c.last(); ok; id, ok = c.prev() {
		got = append(got, id)
	}
	slices.Reverse(got)
	if !slices.Equal(got, want) {
		t.Fatalf("%s descending: %d ids, want %d", scope, len(got), len(want))
	}
}

// checkCursorSeeks seeks c at and before 80 random bounds (ids, bounds made from a time
// as from/to filters make them, and just past ids as a relevance anchor makes them) and
// at the edges.
func checkCursorSeeks(t *testing.T, c *blockCursor, scope string, want, ids []string, r *rand.Rand) {
	t.Helper()
	for i := range 80 {
		from := ids[r.IntN(len(ids))]
		switch i % 4 {
		case 1: // a bound made from a time, as from/to filters make them
			from = data.IDFloor(data.PrefixCall, data.IDTime(data.PrefixCall, from))
		case 2: // at or before an id, as a relevance anchor makes it
			from += "\x00"
		}
		at, _ := slices.BinarySearch(want, from)
		id, ok := c.atOrAfter(from)
		if wantOK := at < len(want); ok != wantOK || ok && id != want[at] {
			t.Fatalf("%s atOrAfter %q: %s %v", scope, from, id, ok)
		}
		id, ok = c.before(from)
		if wantOK := at > 0; ok != wantOK || ok && id != want[at-1] {
			t.Fatalf("%s before %q: %s %v", scope, from, id, ok)
		}
	}
	for _, edge := range []string{"", "call_", "zzz"} {
		at, _ := slices.BinarySearch(want, edge)
		if id, ok := c.atOrAfter(edge); ok != (at < len(want)) || ok && id != want[at] {
			t.Fatalf("%s atOrAfter %q: %s %v", scope, edge, id, ok)
		}
	}
}

// Entries round-trip through a block's bytes: every flag, big gaps, and slots.
func TestBlockEncoding(t *testing.T) {
	list := []posting{
		{docID{1_790_000_000_000, 0}, 1},
		{docID{1_790_000_000_000, 3}, 255},
		{docID{1_790_000_000_001, 0}, 2},
		{docID{1_790_000_000_001, maxSlot - 1}, 1},
		{docID{1<<48 - 1, 0}, 7},
	}
	enc := encodeBlock(list)
	got, err := decodeBlock(enc)
	if err != nil || !slices.Equal(got, list) {
		t.Fatalf("round trip: %v, %v", got, err)
	}
	if one := encodeBlock(list[:1]); len(one) != 1+binary.PutUvarint(make([]byte, 10), list[0].doc.ms)+1+blockTrailer {
		t.Errorf("a lone entry of frequency 1 takes %d bytes", len(one))
	}
	body := enc[:len(enc)-blockTrailer]
	withEntry := func(extra ...byte) []byte {
		return append(append(slices.Clone(body), extra...), enc[len(enc)-blockTrailer:]...)
	}
	for _, bad := range [][]byte{nil, {0x01}, {blockFormat2}, body, withEntry(0x80), withEntry(0x02), withEntry(0x03, 0x01), withEntry(0x04)} {
		if _, err := decodeBlock(bad); err == nil {
			t.Errorf("%x decoded", bad)
		}
	}
}

// FuzzPostingBlock: any bytes as a stored block decode or fail without panicking, and
// any list of postings in docID order encodes into a block that decodes to it.
func FuzzPostingBlock(f *testing.F) {
	f.Add(encodeBlock([]posting{{docID{1_790_000_000_000, 0}, 1}, {docID{1_790_000_000_000, 2}, 3}}), uint64(1_790_000_000_000), []byte{0, 1, 2, 0, 1, 0})
	f.Add([]byte{blockFormat2, 0x80}, uint64(0), []byte{})
	f.Fuzz(func(t *testing.T, stored []byte, start uint64, steps []byte) {
		if list, err := decodeBlock(stored); err == nil && len(list) == 0 {
			t.Fatalf("%x: no entries and no error", stored)
		}
		// steps: triples of (milliseconds forward, slot, frequency).
		list := []posting{}
		ms := start % (1 << 47)
		for i := 0; i+2 < len(steps); i += 3 {
			ms += uint64(steps[i])
			if len(list) > 0 && list[len(list)-1].doc.ms == ms && steps[i+1] == 0 {
				continue // a millisecond's second entry needs another slot
			}
			tf := max(steps[i+2], 1)
			list = append(list, posting{docID{ms, uint32(steps[i+1])}, tf})
		}
		if len(list) == 0 {
			return
		}
		got, err := decodeBlock(encodeBlock(list))
		if err != nil || !slices.Equal(got, list) {
			t.Fatalf("round trip of %v: %v, %v", list, got, err)
		}
	})
}

// seekLastWithPrefix finds a prefix's last key whatever the prefix's last bytes: the
// zero of "<scope>\x00", a uvarint's, bytes past 0x7F and 0xFF.
func TestSeekLastWithPrefix(t *testing.T) {
	db := openInternal(t, &clock{time.Now()})
	keys := [][]byte{{0x01, 0x01}, {0x01, 0x80}, {0x01, 0x80, 0x05}, {0x01, 0x81}, {0x01, 0xFF}, {0x01, 0xFF, 0x07}, {0x02}, {0x02, 0x00, 0x09}}
	err := db.bolt.Update(func(tx *bbolt.Tx) error {
		b, err := tx.CreateBucket([]byte("seek_last_test"))
		if err != nil {
			return err
		}
		for _, k := range keys {
			if err := b.Put(k, nil); err != nil {
				return err
			}
		}
		for _, tc := range []struct{ prefix, want []byte }{
			{[]byte{0x01, 0x80}, []byte{0x01, 0x80, 0x05}},
			{[]byte{0x01, 0xFF}, []byte{0x01, 0xFF, 0x07}},
			{[]byte{0x01}, []byte{0x01, 0xFF, 0x07}},
			{[]byte{0x02, 0x00}, []byte{0x02, 0x00, 0x09}},
			{[]byte{0xFF}, []byte{0x02, 0x00, 0x09}}, // past every key: the last one
		} {
			if got, _ := seekLastWithPrefix(b.Cursor(), tc.prefix); !bytes.Equal(got, tc.want) {
				t.Errorf("prefix %x: %x, want %x", tc.prefix, got, tc.want)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
