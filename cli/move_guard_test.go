package cli_test

import (
	"bytes"
	"context"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"testing"

	"github.com/jackc/pgx/v5"
	"go.etcd.io/bbolt"
	"golang.org/x/crypto/bcrypt"

	"github.com/voiceapi/voiceapi/bolt"
	"github.com/voiceapi/voiceapi/seal"
	"github.com/voiceapi/voiceapi/service"
)

// checkMoveCarriesEveryKind is the guard against a kind of record the move forgets: every
// bucket of the filled installation (dir) and every table of the migrated database (url)
// is one the move copies (service.MoveCopied) or names with its reason (service.MoveLeft),
// and a copied bucket that holds records was copied (its kind is in the move's summary).
func checkMoveCarriesEveryKind(t *testing.T, dir, url, summary string) {
	t.Helper()
	moved := map[string]int{}
	line := regexp.MustCompile(`into PostgreSQL: (.*)`).FindStringSubmatch(summary)
	if line == nil {
		t.Fatalf("no summary of the move: %s", summary)
	}
	for _, m := range regexp.MustCompile(`([a-z_]+) (\d+)`).FindAllStringSubmatch(line[1], -1) {
		moved[m[1]], _ = strconv.Atoi(m[2])
	}
	seen := map[string]bool{}
	for name, held := range boltBuckets(t, filepath.Join(dir, bolt.FileName)) {
		seen[name] = true
		kind, copied := service.MoveCopied[name]
		switch {
		case !copied && service.MoveLeft[name] == "":
			t.Errorf("bbolt bucket %q is neither copied by service.MoveInstallation nor named in service.MoveLeft: "+
				"add a step that copies it to service/move.go (and to MoveCopied, and a record of it to seedInstallation), "+
				"or name it in MoveLeft (service/move_storage.go) with the reason it is derived or not moved", name)
		case copied && held > 0 && moved[kind] == 0:
			t.Errorf("bbolt bucket %q holds %d records, named copied as %q, but the move copied none: %s", name, held, kind, summary)
		}
	}
	for _, name := range postgresTables(t, url) {
		seen[name] = true
		if _, copied := service.MoveCopied[name]; !copied && service.MoveLeft[name] == "" {
			t.Errorf("PostgreSQL table %q is neither copied by service.MoveInstallation nor named in service.MoveLeft: "+
				"add a step that copies it to service/move.go (and to MoveCopied, and a record of it to seedInstallation), "+
				"or name it in MoveLeft (service/move_storage.go) with the reason it is derived or not moved", name)
		}
	}
	for _, names := range []map[string]string{service.MoveCopied, service.MoveLeft} {
		for name := range names {
			if !seen[name] {
				t.Errorf("service/move_storage.go names %q, which is no bucket or table of either engine: take it off", name)
			}
		}
	}
}

// boltBuckets returns the top-level buckets of the bbolt file at path, with how many
// keys each holds, its nested buckets' included.
func boltBuckets(t *testing.T, path string) map[string]int {
	t.Helper()
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	out := map[string]int{}
	if err := db.View(func(tx *bbolt.Tx) error {
		return tx.ForEach(func(name []byte, b *bbolt.Bucket) error {
			out[string(name)] = b.Stats().KeyN
			return nil
		})
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// valuesReadBackOtherwise names the copied buckets whose records come back from
// PostgreSQL equal in meaning but not byte for byte; the API answers compare them.
var valuesReadBackOtherwise = map[string]string{
	"agents": "an agent's empty used_variables comes back null",
}

// checkRoundTripKeepsEveryValue compares the records of every copied bucket byte for
// byte after the round trip: a field PostgreSQL's store does not keep (a column
// missing) comes back without it.
func checkRoundTripKeepsEveryValue(t *testing.T, path, back string) {
	t.Helper()
	before, after := boltValues(t, path), boltValues(t, back)
	for name, records := range before {
		if _, copied := service.MoveCopied[name]; !copied || valuesReadBackOtherwise[name] != "" {
			continue
		}
		for key, value := range records {
			if got := after[name][key]; !bytes.Equal(got, value) {
				t.Errorf("bbolt bucket %q: the record %q is not the same once moved into PostgreSQL and back:\n%q\nbefore:\n%q\n"+
					"PostgreSQL's store (postgres/) does not keep or read back all of it", name, key, got, value)
				break
			}
		}
	}
	for name := range valuesReadBackOtherwise {
		if _, copied := service.MoveCopied[name]; !copied {
			t.Errorf("valuesReadBackOtherwise names %q, which is no bucket the move copies", name)
		}
	}
}

// boltValues returns every value of the bbolt file at path by top-level bucket, keyed
// by its key's path through nested buckets.
func boltValues(t *testing.T, path string) map[string]map[string][]byte {
	t.Helper()
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	out := map[string]map[string][]byte{}
	var walk func(into map[string][]byte, prefix string, b *bbolt.Bucket) error
	walk = func(into map[string][]byte, prefix string, b *bbolt.Bucket) error {
		return b.ForEach(func(k, v []byte) error {
			if v == nil {
				return walk(into, prefix+string(k)+"/", b.Bucket(k))
			}
			into[prefix+string(k)] = bytes.Clone(v)
			return nil
		})
	}
	if err := db.View(func(tx *bbolt.Tx) error {
		return tx.ForEach(func(name []byte, b *bbolt.Bucket) error {
			out[string(name)] = map[string][]byte{}
			return walk(out[string(name)], "", b)
		})
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// dataFiles returns the files a bbolt installation keeps in dir beside its database
// and its key, with their sizes.
func dataFiles(t *testing.T, dir string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil || rel == bolt.FileName || rel == seal.KeyFile {
			return err
		}
		info, err := d.Info()
		if err == nil {
			out[rel] = info.Size()
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// postgresTables returns the tables of the database at url's schema.
func postgresTables(t *testing.T, url string) []string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT table_name FROM information_schema.tables
		WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`)
	if err != nil {
		t.Fatal(err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(names)
	return names
}

// uncountedAfterRoundTrip names the buckets of MoveLeft whose number of keys may differ
// once the installation has been moved into PostgreSQL and back: the rest, derived or
// not, are rebuilt by the destination's writes to what the installation held.
var uncountedAfterRoundTrip = map[string]string{
	"meta":               "the database's own settings",
	"agents_to_seal":     "every copied agent is listed to seal (ListAgentToSeal), sealed ones too",
	"campaigns_deleting": "a deleted campaign's recipients still to remove are not moved",
	"idempotency":        "kept Idempotency-Key responses are not moved", "idempotency_by_conversation": "not moved",
	"idempotency_by_time": "not moved", "idempotency_by_started_conversation": "not moved",
	"idempotency_by_agent_conversation": "not moved", "idempotency_by_workspace": "not moved",
	"idempotency_starts_to_note": "not moved",
}

// checkRoundTripKeepsEveryKey is the guard against a kind of record stored inside a bucket
// the move copies (a run's results, a conversation's items) that no step of the move
// carries: the moved database (dst) is moved again into a new bbolt installation, and
// every bucket there must hold as many keys, nested buckets' included, as the
// installation in dir held, which leaves none empty; and the files beside the database
// must be the same. Both moves read and write through the same service.Tx, so a record
// left behind either way, or stored in PostgreSQL and not read back, shows here as a
// bucket with fewer keys.
func checkRoundTripKeepsEveryKey(t *testing.T, dir string, dst service.Store) {
	t.Helper()
	back := t.TempDir()
	key, err := os.ReadFile(filepath.Join(dir, seal.KeyFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(back, seal.KeyFile), key, 0o600); err != nil {
		t.Fatal(err)
	}
	again, err := bolt.Open(back, bolt.Options{PasswordCost: bcrypt.MinCost, NoSync: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	_, err = service.MoveInstallation(context.Background(), dst, again, nil)
	again.Close()
	if err != nil {
		t.Fatalf("moving the moved database back into bbolt: %v", err)
	}
	before, after := boltBuckets(t, filepath.Join(dir, bolt.FileName)), boltBuckets(t, filepath.Join(back, bolt.FileName))
	for name, held := range before {
		if uncountedAfterRoundTrip[name] != "" || after[name] == held && held > 0 {
			continue
		}
		if held == 0 {
			t.Errorf("bbolt bucket %q is empty in the installation, so the guard cannot tell whether the move carries its records: "+
				"make seedInstallation store one (through the API where one can)", name)
			continue
		}
		if after[name] > held {
			t.Errorf("bbolt bucket %q holds %d keys in the installation but %d once moved into PostgreSQL and back: "+
				"a step of service.MoveInstallation writes its records twice, or a destination's write derives more than the source held", name, held, after[name])
			continue
		}
		t.Errorf("bbolt bucket %q holds %d keys in the installation but %d once moved into PostgreSQL and back: a kind of record "+
			"stored in it is not carried by service.MoveInstallation (add it to the step of service/move.go that copies the "+
			"bucket's records, or a step of its own as service/move_storage.go says), or PostgreSQL's store does not keep it "+
			"or read it back", name, held, after[name])
	}
	checkRoundTripKeepsEveryValue(t, filepath.Join(dir, bolt.FileName), filepath.Join(back, bolt.FileName))
	files, filesBack := dataFiles(t, dir), dataFiles(t, back)
	if len(files) == 0 {
		t.Error("the installation stores no file beside its database: make seedInstallation upload one")
	}
	for name, size := range files {
		if got, ok := filesBack[name]; !ok || got != size {
			t.Errorf("the installation's %s (%d bytes) is not the same once moved into PostgreSQL and back (%d bytes, there: %v): "+
				"the move copies files in service/move.go (mover.files)", name, size, got, ok)
		}
	}
	for name := range uncountedAfterRoundTrip {
		if _, copied := service.MoveCopied[name]; copied || service.MoveLeft[name] == "" {
			t.Errorf("uncountedAfterRoundTrip names %q, which is no bucket the move leaves (service.MoveLeft)", name)
		}
	}
}
