package bolt

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
)

func TestCallIDBytesRoundTrip(t *testing.T) {
	g := data.NewIDGen()
	for range 1000 {
		id := g.New(data.PrefixCall)
		raw, ok := callIDBytes(id)
		if !ok || data.PrefixCall+crockford16(raw[:]) != id {
			t.Fatalf("%s: %v %x", id, ok, raw)
		}
	}
	for _, id := range []string{"call_x", "agt_01ARZ3NDEKTSV4RRFFQ69G5FAV", "call_81ARZ3NDEKTSV4RRFFQ69G5FAV", "c"} {
		if _, ok := callIDBytes(id); ok {
			t.Errorf("%q decoded as a call id", id)
		}
	}
}

// Random inserts, frequency changes and deletes, in any id order, of well-formed call ids
// and other strings, keep every term's blocks equal to a plain sorted model: lookups,
// walks both ways from any point, and blocks within their size bound and keyed by their
// first id.
func TestPostingBlocksMatchModel(t *testing.T) {
	db := openInternal(t, &clock{time.Now()})
	r := rand.New(rand.NewPCG(1, 2))
	g := data.NewIDGen()
	var ids []string
	for i := range 3000 {
		if i%50 == 0 {
			ids = append(ids, fmt.Sprintf("x-%04d", r.IntN(10000))) // not a call id: stored as text
		} else {
			ids = append(ids, g.New(data.PrefixCall))
		}
	}
	model := map[string]map[string]byte{"ws_1/t/a": {}, "ws_1/t/b": {}, "ws_2/t/a": {}}
	scopes := []string{"ws_1/t/a", "ws_1/t/b", "ws_2/t/a"}
	for round := range 6 {
		err := db.bolt.Update(func(tx *bbolt.Tx) error {
			b := tx.Bucket(bucketCallPostingBlocks)
			for range 2000 {
				scope := scopes[r.IntN(len(scopes))]
				// Early rounds append mostly in id order, later ones anywhere.
				var id string
				if round < 2 {
					id = ids[min(len(ids)-1, len(model[scope])+r.IntN(5))]
				} else {
					id = ids[r.IntN(len(ids))]
				}
				tf := byte(r.IntN(4)) // 0 deletes
				if round == 5 {
					tf = 0
				}
				if err := putPosting(b, scope, id, tf); err != nil {
					return err
				}
				if tf == 0 {
					delete(model[scope], id)
				} else {
					model[scope][id] = tf
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		checkPostings(t, db, scopes, model, ids, r)
	}
}

func checkPostings(t *testing.T, db *DB, scopes []string, model map[string]map[string]byte, ids []string, r *rand.Rand) {
	t.Helper()
	db.bolt.View(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketCallPostingBlocks)
		b.ForEach(func(k, v []byte) error {
			list, err := decodeBlock(v)
			if err != nil || len(list) == 0 || len(v) > maxBlockBytes && len(list) > 1 {
				t.Fatalf("block %q: %d entries, %d bytes, %v", k, len(list), len(v), err)
			}
			if i := len(k) - len(list[0].id); string(k[i:]) != list[0].id {
				t.Fatalf("block %q starts with %s", k, list[0].id)
			}
			return nil
		})
		for _, scope := range scopes {
			var want []string
			for id := range model[scope] {
				want = append(want, id)
			}
			slices.Sort(want)
			for _, id := range ids[:200] {
				if got := postingTF(b, scope, id); got != model[scope][id] {
					t.Fatalf("%s %s: tf %d, want %d", scope, id, got, model[scope][id])
				}
			}
			var got []string
			c := newBlockCursor(b, scope)
			for id, ok := c.atOrAfter(""); ok; id, ok = c.next() {
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
			for range 50 {
				from := ids[r.IntN(len(ids))]
				i, _ := slices.BinarySearch(want, from)
				id, ok := c.atOrAfter(from)
				if wantOK := i < len(want); ok != wantOK || ok && id != want[i] {
					t.Fatalf("%s atOrAfter %s: %s %v", scope, from, id, ok)
				}
				id, ok = c.before(from)
				if wantOK := i > 0; ok != wantOK || ok && id != want[i-1] {
					t.Fatalf("%s before %s: %s %v", scope, from, id, ok)
				}
			}
		}
		return nil
	})
}
