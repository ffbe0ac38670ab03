package postgres

import (
	"context"
	"fmt"
	"io/fs"
	"testing"
	"testing/fstest"
	"time"
)

// FenceChecks is how many times db has read the schema version (tests in postgres_test).
func FenceChecks(db *DB) int64 { return db.fence.checks.Load() }

// Fenced reports whether db refuses writes because a newer binary migrated its database.
func Fenced(db *DB) bool { return db.fence.failed() != nil }

// The fence's verdict at its edges: the database holding exactly this binary's
// migrations is its own; one version more, or one row more below the newest (a
// migration numbered in a gap: migrate.go), is a newer binary's; a row removed by an
// operator's rollback by hand is not.
func TestSupersededAtItsEdges(t *testing.T) {
	const latest, known = 28, 27 // any binary with a number never released below its newest (as 0009)
	for _, c := range []struct {
		name       string
		max, count int
		want       bool
	}{
		{"exactly this binary's", latest, known, false},
		{"a newer version", latest + 1, known + 1, true},
		{"a newer version, a row removed by hand", latest + 1, known, true},
		{"a migration in a gap below the newest", latest, known + 1, true},
		{"a row removed by hand (rollback)", latest, known - 1, false},
		{"the newest removed by hand", latest - 1, known - 1, false},
	} {
		if got := superseded(c.max, c.count, latest, known); got != c.want {
			t.Errorf("%s (max %d, count %d): superseded %v, want %v", c.name, c.max, c.count, got, c.want)
		}
	}
}

// BenchmarkFenceOnTheWritePath is what a write (Update, a job claim, a source file) pays
// for the fence before it begins, on a replica already fenced or not: one atomic load
// (docs/performance.md). Its lock and read with BEGIN are measured through a whole PUT
// and a call registration (docs/performance.md, fence2).
//
//	go test -run '^$' -bench BenchmarkFenceOnTheWritePath -count 5 ./postgres
func BenchmarkFenceOnTheWritePath(b *testing.B) {
	f := newFence(nil)
	for b.Loop() {
		if f.failed() != nil {
			b.Fatal("fenced")
		}
	}
}

// AsNewerBinary makes this package a newer voiceapi's until the test ends: its migrations
// are this binary's and m. A database opened, or Migrate run, meanwhile migrates to m as
// that newer binary would; a database opened before is the older binary's.
func AsNewerBinary(t testing.TB, m Migration) {
	t.Helper()
	newer := fstest.MapFS{}
	entries, err := fs.ReadDir(migrationFiles, "migrations")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		body, err := fs.ReadFile(migrationFiles, "migrations/"+e.Name())
		if err != nil {
			t.Fatal(err)
		}
		newer["migrations/"+e.Name()] = &fstest.MapFile{Data: body}
	}
	newer[fmt.Sprintf("migrations/%04d_%s.sql", m.Version, m.Name)] = &fstest.MapFile{Data: []byte(m.SQL)}
	migrationSource = newer
	t.Cleanup(func() { migrationSource = migrationFiles })
}

// FenceLock is the fence's advisory lock key (tests in postgres_test).
const FenceLock = fenceLock

// ShortenFenceLockWait makes a migration's waits for the fence's lock d long until the
// test ends.
func ShortenFenceLockWait(t testing.TB, d time.Duration) {
	old := fenceLockWait
	fenceLockWait = d
	t.Cleanup(func() { fenceLockWait = old })
}

// StartRows writes the rows a start writes after its migration (tests in postgres_test).
func StartRows(ctx context.Context, db *DB) error { return db.startRows(ctx) }

// FlushKeyUses writes db's pending API key uses now.
func FlushKeyUses(db *DB) { db.touch.Flush() }

// ClearRateWindows deletes the rate windows that started before before, as a window's
// first requests do.
func ClearRateWindows(ctx context.Context, db *DB, before time.Time) error {
	return db.clearWindows(ctx, before)
}

// StopWatching ends db's own readings of the schema version (its writes still read it).
func StopWatching(db *DB) { db.fence.stopWatching() }
