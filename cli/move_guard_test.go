package cli_test

import (
	"context"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"testing"

	"github.com/jackc/pgx/v5"
	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/bolt"
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
// keys each holds.
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
