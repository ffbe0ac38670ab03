package bolt

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.etcd.io/bbolt"
	"golang.org/x/crypto/bcrypt"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/fulltext"
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

// listIDs lists, newest first, the ids of the calls of ws that f selects.
func listIDs(t *testing.T, db *DB, ws string, f data.CallFilter) []string {
	t.Helper()
	var ids []string
	err := db.view(func(b *bbolt.Tx) error {
		list, _, err := tx{db: db, b: b}.Calls(ws, nil, f, data.PageRequest{PerPage: 100})
		for _, c := range list {
			ids = append(ids, c.ID)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// encodeOldBlock is schema 3's block encoder (decodeOldBlock reads it).
func encodeOldBlock(list []oldPosting) []byte {
	out := []byte{0x01}
	var prev []byte
	for _, p := range list {
		k := append([]byte{1}, p.id...)
		if raw, ok := idRaw(data.PrefixCall, p.id); ok {
			k = append([]byte{0}, raw[:]...)
		}
		shared := 0
		for shared < len(prev) && shared < len(k) && prev[shared] == k[shared] {
			shared++
		}
		out = binary.AppendUvarint(out, uint64(shared))
		out = binary.AppendUvarint(out, uint64(len(k)-shared))
		out = append(append(out, k[shared:]...), p.tf)
		prev = k
	}
	return out
}

// toOldSchema rewrites a database's search index in the form schema 3 (or 2) stored it:
// postings by call id in blocks of call_posting_blocks (one key a posting in
// call_postings), a term list per indexed call in call_terms, no slots. The calls of
// unindexed lose their postings and have no term list, as calls stored before the index.
func toOldSchema(t *testing.T, db *DB, version uint64, unindexed map[string]bool) {
	t.Helper()
	err := db.bolt.Update(func(b *bbolt.Tx) error {
		ix := callIndexOf(b)
		lists, indexed, err := oldPostingLists(b, ix, unindexed)
		if err != nil {
			return err
		}
		if err := writeOldPostings(b, version, lists, indexed); err != nil {
			return err
		}
		if err := writeOldCallIndex(b, ix); err != nil {
			return err
		}
		var ver [8]byte
		binary.BigEndian.PutUint64(ver[:], version)
		return b.Bucket(bucketMeta).Put([]byte("schema_version"), ver[:])
	})
	if err != nil {
		t.Fatal(err)
	}
}

// oldPostingLists reads the postings by call id, scope by scope, and which calls hold
// any; the postings of the calls of unindexed are dropped, with their term counts.
func oldPostingLists(b *bbolt.Tx, ix callIndex, unindexed map[string]bool) (map[string][]oldPosting, map[string]bool, error) {
	lists := map[string][]oldPosting{}
	indexed := map[string]bool{}
	err := b.Bucket(bucketCallPostingDocs).ForEach(func(k, v []byte) error {
		scope := string(k[:len(k)-7])
		ws, _, _ := strings.Cut(scope, "/t/")
		list, err := decodeBlock(v)
		for _, p := range list {
			id, _, ok := resolve(ix, ws, p.doc)
			if !ok {
				return fmt.Errorf("%s: %v names no call", scope, p.doc)
			}
			if unindexed[id] {
				if err := addScopeCount(b, scope, -1); err != nil {
					return err
				}
				continue
			}
			lists[scope] = append(lists[scope], oldPosting{id, p.tf})
			indexed[id] = true
		}
		return err
	})
	return lists, indexed, err
}

// writeOldPostings replaces the postings by document with lists as version stored them
// (one key a posting in call_postings for 2, blocks of 7 in call_posting_blocks for 3)
// and a term list for each indexed call.
func writeOldPostings(b *bbolt.Tx, version uint64, lists map[string][]oldPosting, indexed map[string]bool) error {
	if err := b.DeleteBucket(bucketCallPostingDocs); err != nil {
		return err
	}
	name := map[uint64][]byte{2: bucketCallPostings, 3: bucketCallPostingBlocks}[version]
	old, err := b.CreateBucket(name)
	if err != nil {
		return err
	}
	for scope, list := range lists {
		for len(list) > 0 {
			if version == 2 {
				if err := old.Put(indexKey(scope, list[0].id), []byte{list[0].tf}); err != nil {
					return err
				}
				list = list[1:]
				continue
			}
			n := min(len(list), 7)
			if err := old.Put(indexKey(scope, list[0].id), encodeOldBlock(list[:n])); err != nil {
				return err
			}
			list = list[n:]
		}
	}
	terms, err := b.CreateBucket(bucketCallTerms)
	if err != nil {
		return err
	}
	for id := range indexed {
		if err := terms.Put([]byte(id), []byte("a term\x00\x01")); err != nil {
			return err
		}
	}
	return nil
}

// writeOldCallIndex replaces the call index with the one schema 3 kept:
// "<scope>\x00<call id>", no slots.
func writeOldCallIndex(b *bbolt.Tx, ix callIndex) error {
	oldIndex, err := b.CreateBucket(bucketCallsIndex)
	if err != nil {
		return err
	}
	err = ix.scopes.ForEach(func(scope, _ []byte) error {
		c := ix.cursor(string(scope))
		for id, ok := c.atOrAfter(""); ok; id, ok = c.next() {
			var v []byte
			if len(c.value()) > 0 {
				v = decodeAttrs(c.value()).encode()
			}
			if err := oldIndex.Put(indexKey(string(scope), id), v); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, name := range [][]byte{bucketCallEntries, bucketCallScopes} {
		if err := b.DeleteBucket(name); err != nil {
			return err
		}
	}
	return nil
}

// A file of schema 2 or 3 opens as schema 4: the call index moved to numbered scopes,
// slots given to the calls that share a millisecond, the postings moved, over several
// transactions and after a crash in the middle of either move, the calls stored before
// the search index indexed, the old buckets gone; every search answers as before, the
// term counts match the postings, and a deletion removes a call's postings.
func TestMigrateSearchIndexToSchema4(t *testing.T) {
	for _, version := range []uint64{2, 3} {
		for _, crash := range []string{"index", "postings"} {
			t.Run(fmt.Sprintf("schema %d, crash moving the %s", version, crash), func(t *testing.T) { testMigrateSearchIndex(t, version, crash) })
		}
	}
}

// allOf runs a migration step until it has nothing more to do.
func allOf(step func(*bbolt.DB) (bool, error)) func(*bbolt.DB) (bool, error) {
	return func(bdb *bbolt.DB) (bool, error) {
		for {
			if more, err := step(bdb); err != nil || !more {
				return false, err
			}
		}
	}
}

func testMigrateSearchIndex(t *testing.T, version uint64, crash string) {
	db, dir, opts := openFile(t)
	var err error
	ids, calls := seedCrowdedCalls(t, db, version)
	before := recordCallAnswers(t, db)
	unindexed := map[string]bool{ids[3]: true, ids[40]: true, ids[41]: true}
	toOldSchema(t, db, version, unindexed)
	db.Close()

	defer func(n int) { migrateBatch = n }(migrateBatch)
	migrateBatch = 25
	crashMidMigration(t, dir, version, crash)
	db, err = Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if v, err := db.SchemaVersion(); err != nil || v != schemaVersion {
		t.Fatalf("schema version %d, %v", v, err)
	}
	checkMigratedIndex(t, db, calls)
	before.check(t, db)
	first := ids[3] // one of the calls indexed by the migration
	err = db.bolt.Update(func(b *bbolt.Tx) error {
		return tx{db: db, b: b}.DeleteCall(first, fulltext.CallTerms(calls[first]))
	})
	if err != nil {
		t.Fatal(err)
	}
	ws := calls[first].WorkspaceID
	if got := searchIDs(t, db, ws, "every"); len(got) != len(before.searches[ws+"[every]"])-1 || slices.Contains(got, first) {
		t.Errorf("after deleting %s: %d calls hold \"every\"", first, len(got))
	}
	db.view(func(b *bbolt.Tx) error { checkTermCounts(t, b); return nil })
}

// seedCrowdedCalls stores 80 calls of crowded ids, in a shuffled order, across ws_1 and
// ws_2 with their terms; it returns the ids and the calls by id.
func seedCrowdedCalls(t *testing.T, db *DB, version uint64) ([]string, map[string]*data.Call) {
	t.Helper()
	r := rand.New(rand.NewPCG(version, 9))
	ids := crowdedIDs(r, 80)
	order := slices.Clone(ids)
	r.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	calls := map[string]*data.Call{}
	err := db.bolt.Update(func(b *bbolt.Tx) error {
		for i, id := range order {
			ws := []string{"ws_1", "ws_1", "ws_2"}[i%3]
			words := fmt.Sprintf("every n%d", i%7)
			if i%2 == 0 {
				words += " even even"
			}
			c := &data.Call{ID: id, WorkspaceID: ws, AgentID: "agt_1", Direction: data.DirectionWeb, Status: data.CallEnded,
				CreatedAt: data.NewTime(data.IDTime(data.PrefixCall, id)), Transcript: []data.TranscriptItem{{Role: "user", Content: words}}}
			calls[id] = c
			if err := insertCall(b, c); err != nil {
				return err
			}
			if err := setCallTerms(b, ws, id, nil, fulltext.CallTerms(c)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return ids, calls
}

// callAnswers are the ids of each workspace's searches and filtered lists, keyed by the
// workspace and the query or filter, to compare after the migration.
type callAnswers struct {
	searches, lists map[string][]string
}

var (
	answerQueries = [][]string{{"every"}, {"even"}, {"n3"}, {"even", "n4"}, {"missing"}}
	answerFilters = []data.CallFilter{{}, {AgentID: "agt_1"}, {Direction: data.DirectionWeb}, {Status: data.CallEnded}, {AgentID: "agt_2"}}
)

// recordCallAnswers reads the answers of db, which must find enough to compare.
func recordCallAnswers(t *testing.T, db *DB) callAnswers {
	t.Helper()
	a := callAnswers{searches: map[string][]string{}, lists: map[string][]string{}}
	for _, ws := range []string{"ws_1", "ws_2"} {
		for _, q := range answerQueries {
			a.searches[ws+fmt.Sprint(q)] = searchIDs(t, db, ws, q...)
		}
	}
	for _, ws := range []string{"ws_1", "ws_2"} {
		for _, f := range answerFilters {
			a.lists[ws+fmt.Sprint(f)] = listIDs(t, db, ws, f)
		}
	}
	if len(a.searches["ws_1[every]"]) < 50 || len(a.searches["ws_1[even n4]"]) == 0 || len(a.lists["ws_1"+fmt.Sprint(answerFilters[1])]) < 50 {
		t.Fatalf("before: %v", a.searches)
	}
	return a
}

// check holds db's answers to the recorded ones.
func (a callAnswers) check(t *testing.T, db *DB) {
	t.Helper()
	for key, ids := range a.searches {
		ws, q, _ := strings.Cut(key, "[")
		if got := searchIDs(t, db, ws, strings.Fields(strings.TrimSuffix(q, "]"))...); !slices.Equal(got, ids) {
			t.Errorf("search %s after the migration: %v, want %v", key, got, ids)
		}
	}
	for _, ws := range []string{"ws_1", "ws_2"} {
		for _, f := range answerFilters {
			if got := listIDs(t, db, ws, f); !slices.Equal(got, a.lists[ws+fmt.Sprint(f)]) {
				t.Errorf("list %s %+v after the migration: %v, want %v", ws, f, got, a.lists[ws+fmt.Sprint(f)])
			}
		}
	}
}

// crashMidMigration runs the migration's first steps on the file in dir, as far as the
// middle of the move named by crash, and stops there as a crash would: the file is
// marked version 4 already, so a version 3 binary refuses it rather than missing what
// was moved.
func crashMidMigration(t *testing.T, dir string, version uint64, crash string) {
	t.Helper()
	raw, err := bbolt.Open(filepath.Join(dir, FileName), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	steps, left := []func(*bbolt.DB) (bool, error){markVersion4, moveCallIndex}, bucketCallsIndex
	if crash == "postings" {
		steps = []func(*bbolt.DB) (bool, error){markVersion4, allOf(moveCallIndex), assignSlots, movePostingsToDocs}
		left = map[uint64][]byte{2: bucketCallPostings, 3: bucketCallPostingBlocks}[version]
	}
	for _, step := range steps {
		if _, err := step(raw); err != nil {
			t.Fatal(err)
		}
	}
	raw.View(func(b *bbolt.Tx) error {
		if v := b.Bucket(bucketMeta).Get([]byte("schema_version")); binary.BigEndian.Uint64(v) != 4 || b.Bucket(left).Stats().KeyN == 0 {
			t.Errorf("at the crash: version %x, %d keys left in %s", v, b.Bucket(left).Stats().KeyN, left)
		}
		return nil
	})
}

// checkMigratedIndex checks that the old buckets are gone, every call's document id
// resolves back to it and the term counts match the postings.
func checkMigratedIndex(t *testing.T, db *DB, calls map[string]*data.Call) {
	t.Helper()
	db.view(func(b *bbolt.Tx) error {
		for _, name := range oldIndexBuckets {
			if b.Bucket(name) != nil {
				t.Errorf("bucket %s is still there", name)
			}
		}
		ix := callIndexOf(b)
		for id, c := range calls {
			d, ok := docOf(ix, c.WorkspaceID, id)
			if back, _, found := resolve(ix, c.WorkspaceID, d); !ok || !found || back != id {
				t.Errorf("%s: docID %v resolves to %s", id, d, back)
			}
		}
		checkTermCounts(t, b)
		return nil
	})
}

// checkTermCounts holds every term scope's count to its postings.
func checkTermCounts(t *testing.T, b *bbolt.Tx) {
	t.Helper()
	postings := map[string]uint64{}
	b.Bucket(bucketCallPostingDocs).ForEach(func(k, v []byte) error {
		list, _ := decodeBlock(v)
		postings[string(k[:len(k)-7])] += uint64(len(list))
		return nil
	})
	b.Bucket(bucketCallScopeCounts).ForEach(func(k, v []byte) error {
		if bytes.Contains(k, []byte("/t/")) && postings[string(k)] != binary.BigEndian.Uint64(v) {
			t.Errorf("%s: count %d, %d postings", k, binary.BigEndian.Uint64(v), postings[string(k)])
		}
		delete(postings, string(k))
		return nil
	})
	for scope, n := range postings {
		t.Errorf("%s: %d postings, no count", scope, n)
	}
}

// Calls registered, updated and deleted through the services keep the postings exact on
// bbolt: the service hands storage the terms a call was indexed with, storage keeps no
// copy, and no posting is left naming a call that is gone (a term count would be off and
// a slot reused later could inherit it).
func TestServicePathsKeepPostingsExact(t *testing.T) {
	c := &clock{time.Date(2026, 11, 20, 8, 0, 0, 0, time.UTC)}
	db := openInternal(t, c)
	ctx, ws := ownerCtx(t, db, "a@example.com")
	agent := newTestAgent(t, db, ws)
	said := func(words string) []data.TranscriptItem { return []data.TranscriptItem{{Role: "user", Content: words}} }
	var ids []string
	for i := range 30 {
		in := data.CallCreate{AgentID: agent, Direction: "web", Transcript: said(fmt.Sprintf("hello caller %d about order %d", i, i%4))}
		if i%3 == 0 {
			in.Analysis = map[string]any{"summary": "refund asked"}
		}
		call, err := svcOf(db).Calls.RegisterCall(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, call.ID)
		if i%4 == 0 {
			c.t = c.t.Add(time.Millisecond) // some share a millisecond, some not
		}
	}
	for i, id := range ids {
		switch i % 5 {
		case 1:
			if _, err := svcOf(db).Calls.UpdateCall(ctx, id, data.CallUpdate{Transcript: data.Some(said("goodbye now"))}); err != nil {
				t.Fatal(err)
			}
		case 2:
			if err := svcOf(db).Calls.DeleteCall(ctx, id); err != nil {
				t.Fatal(err)
			}
		case 3:
			if _, err := svcOf(db).Calls.UpdateCall(ctx, id, data.CallUpdate{Analysis: data.Some(map[string]any{"summary": "refund given"})}); err != nil {
				t.Fatal(err)
			}
		}
	}
	db.view(func(b *bbolt.Tx) error {
		checkTermCounts(t, b)
		ix := callIndexOf(b)
		return b.Bucket(bucketCallPostingDocs).ForEach(func(k, v []byte) error {
			list, err := decodeBlock(v)
			for _, p := range list {
				if _, _, ok := resolve(ix, ws, p.doc); !ok {
					t.Errorf("%s: a posting of %v names no call", k[:len(k)-7], p.doc)
				}
			}
			return err
		})
	})
	want := func(keep func(i int) bool) []string {
		var out []string
		for i := len(ids) - 1; i >= 0; i-- {
			if keep(i) {
				out = append(out, ids[i])
			}
		}
		return out
	}
	for q, keep := range map[string]func(int) bool{
		"hello":   func(i int) bool { return i%5 != 1 && i%5 != 2 },
		"goodbye": func(i int) bool { return i%5 == 1 },
		"refund":  func(i int) bool { return i%5 == 3 || i%3 == 0 && i%5 != 2 },
		"given":   func(i int) bool { return i%5 == 3 },
		"asked":   func(i int) bool { return i%3 == 0 && i%5 != 2 && i%5 != 3 },
	} {
		if got := searchIDs(t, db, ws, q); !slices.Equal(got, want(keep)) {
			t.Errorf("%s: %v, want %v", q, got, want(keep))
		}
	}
}

// setSchemaVersion writes version into b's meta bucket, as a binary of that schema left it.
func setSchemaVersion(b *bbolt.Tx, version uint64) error {
	return b.Bucket(bucketMeta).Put([]byte("schema_version"), binary.BigEndian.AppendUint64(nil, version))
}

// reopenUpgraded closes db and opens dir again, which migrates the file, and checks that
// it reached this code's schema version.
func reopenUpgraded(t *testing.T, db *DB, dir string, opts Options) *DB {
	t.Helper()
	db.Close()
	db, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := db.SchemaVersion(); err != nil || v != schemaVersion {
		db.Close()
		t.Fatalf("schema version %d, %v; want %d", v, err, schemaVersion)
	}
	return db
}

// asOlderFile makes db's file as a binary of schema version left it, without the given
// buckets (the indexes that version did not have), then reopens it: the migrations to
// this code's version run, and reopenUpgraded checks they reached it.
func asOlderFile(t *testing.T, db *DB, dir string, opts Options, version uint64, buckets ...[]byte) *DB {
	t.Helper()
	if err := db.bolt.Update(func(b *bbolt.Tx) error {
		if err := setSchemaVersion(b, version); err != nil {
			return err
		}
		for _, name := range buckets {
			if err := b.DeleteBucket(name); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return reopenUpgraded(t, db, dir, opts)
}

// openFile opens a new file in a temporary directory, with the options the upgrade tests
// reopen it with.
func openFile(t *testing.T) (*DB, string, Options) {
	t.Helper()
	dir := t.TempDir()
	opts := Options{PasswordCost: bcrypt.MinCost, NoSync: true, SecretKey: make([]byte, 32)}
	db, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	return db, dir, opts
}
