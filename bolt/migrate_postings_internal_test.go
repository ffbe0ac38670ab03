package bolt

import (
	"encoding/binary"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"go.etcd.io/bbolt"
	"golang.org/x/crypto/bcrypt"

	"github.com/voiceapi/voiceapi/data"
)

// searchIDs lists, newest first, the ids of the calls of ws holding every term.
func searchIDs(t *testing.T, db *DB, ws string, terms ...string) []string {
	t.Helper()
	var ids []string
	err := db.view(func(b *bbolt.Tx) error {
		hits, _, err := tx{db: db, b: b}.SearchCalls(ws, nil, data.CallFilter{}, data.CallSearch{Terms: terms, Sort: data.SortCreatedAt}, data.PageRequest{PerPage: 100})
		for _, h := range hits {
			ids = append(ids, h.Call.ID)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// toSchema2 rewrites a database's search index in the form schema 2 stored it: one key a
// posting in call_postings, plain term lists, schema version 2.
func toSchema2(t *testing.T, db *DB) {
	t.Helper()
	err := db.bolt.Update(func(b *bbolt.Tx) error {
		old, err := b.CreateBucket(bucketCallPostings)
		if err != nil {
			return err
		}
		blocks := b.Bucket(bucketCallPostingBlocks)
		var keys [][]byte
		err = blocks.ForEach(func(k, v []byte) error {
			list, err := decodeBlock(v)
			scope := string(k[:len(k)-len(list[0].id)-1])
			for _, p := range list {
				if err := old.Put(indexKey(scope, p.id), []byte{p.tf}); err != nil {
					return err
				}
			}
			keys = append(keys, append([]byte(nil), k...))
			return err
		})
		if err != nil {
			return err
		}
		for _, k := range keys {
			if err := blocks.Delete(k); err != nil {
				return err
			}
		}
		fwd := b.Bucket(bucketCallTerms)
		plain := map[string][]byte{}
		fwd.ForEach(func(k, v []byte) error {
			terms, err := storedTerms(v)
			plain[string(k)] = encodeTerms(terms)
			return err
		})
		for k, v := range plain {
			if err := fwd.Put([]byte(k), v); err != nil {
				return err
			}
		}
		var ver [8]byte
		binary.BigEndian.PutUint64(ver[:], 2)
		return b.Bucket(bucketMeta).Put([]byte("schema_version"), ver[:])
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A schema 2 file, its postings one key each and its term lists plain, opens as schema 3:
// the postings moved into blocks over several transactions, the old bucket gone, every
// search answering as before, and a call's deletion still removing its postings.
func TestMigratePostingsFromSchema2(t *testing.T) {
	dir := t.TempDir()
	opts := Options{PasswordCost: bcrypt.MinCost, NoSync: true, SecretKey: make([]byte, 32)}
	db, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	ws := "ws_1"
	var ids []string
	err = db.bolt.Update(func(b *bbolt.Tx) error {
		for i := range 60 {
			c := &data.Call{ID: db.ids.New(data.PrefixCall), WorkspaceID: ws, AgentID: "agt_1", Direction: "web", Status: data.CallRegistered,
				CreatedAt: data.NewTime(time.Now())}
			ids = append(ids, c.ID)
			if err := insertCall(b, c); err != nil {
				return err
			}
			terms := map[string]int{"every": 1, fmt.Sprintf("n%d", i%7): 1 + i%3}
			if i%2 == 0 {
				terms["even"] = 2
			}
			if err := setCallTerms(b, ws, c.ID, terms); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	queries := [][]string{{"every"}, {"even"}, {"n3"}, {"even", "n4"}, {"missing"}}
	want := map[string][]string{}
	for _, q := range queries {
		want[fmt.Sprint(q)] = searchIDs(t, db, ws, q...)
	}
	if len(want["[every]"]) != 60 || len(want["[even n4]"]) == 0 {
		t.Fatalf("before: %v", want)
	}
	toSchema2(t, db)
	db.Close()

	defer func(n int) { postingMoveBatch = n }(postingMoveBatch)
	postingMoveBatch = 25 // 150 postings: six transactions
	// One batch, then a crash: the file is marked version 3, so a version 2 binary
	// refuses it rather than missing the moved postings.
	raw, err := bbolt.Open(filepath.Join(dir, FileName), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if more, err := movePostings(raw); err != nil || !more {
		t.Fatalf("first batch: %v, %v", more, err)
	}
	raw.View(func(b *bbolt.Tx) error {
		if v := b.Bucket(bucketMeta).Get([]byte("schema_version")); binary.BigEndian.Uint64(v) != 3 || b.Bucket(bucketCallPostings).Stats().KeyN != 125 {
			t.Errorf("after one batch: version %x, %d old postings left", v, b.Bucket(bucketCallPostings).Stats().KeyN)
		}
		return nil
	})
	raw.Close()
	db, err = Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if v, err := db.SchemaVersion(); err != nil || v != 3 {
		t.Fatalf("schema version %d, %v", v, err)
	}
	db.view(func(b *bbolt.Tx) error {
		if b.Bucket(bucketCallPostings) != nil {
			t.Error("the schema 2 postings bucket is still there")
		}
		return nil
	})
	for _, q := range queries {
		if got := searchIDs(t, db, ws, q...); !slices.Equal(got, want[fmt.Sprint(q)]) {
			t.Errorf("search %v after the migration: %v, want %v", q, got, want[fmt.Sprint(q)])
		}
	}
	// The first call's term list is still the plain one schema 2 wrote.
	err = db.bolt.Update(func(b *bbolt.Tx) error { return tx{db: db, b: b}.DeleteCall(ids[0]) })
	if err != nil {
		t.Fatal(err)
	}
	if got := searchIDs(t, db, ws, "every"); len(got) != 59 || slices.Contains(got, ids[0]) {
		t.Errorf("after deleting %s: %d calls hold \"every\"", ids[0], len(got))
	}
	if got := searchIDs(t, db, ws, "even"); slices.Contains(got, ids[0]) {
		t.Errorf("a deleted call is still found")
	}
}

// A long term list is stored deflated and reads back whole; a short one stays plain.
func TestPackTerms(t *testing.T) {
	long := map[string]int{}
	for i := range 60 {
		long[fmt.Sprintf("word%02d", i)] = 1 + i%5
	}
	for _, terms := range []map[string]int{long, {"a": 1}} {
		plain := encodeTerms(terms)
		packed := packTerms(plain)
		if got, err := storedTerms(packed); err != nil || fmt.Sprint(got) != fmt.Sprint(terms) {
			t.Fatalf("round trip: %v, %v", got, err)
		}
		if isPacked := packed[0] == markPackedTerms; isPacked != (len(terms) > 1) || isPacked && len(packed) >= len(plain) {
			t.Errorf("%d terms: packed %v, %d bytes from %d", len(terms), isPacked, len(packed), len(plain))
		}
	}
}
