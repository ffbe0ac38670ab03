package postgres_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/postgres"
	"github.com/voiceapi/voiceapi/service"
)

// A write whose function panics (the server and the job runner recover and go on) gives
// back its connection and its session locks, the fence's among them, with and without a
// workspace's lock: kept, they made every later migration wait for ever (asking again
// every fenceLockWait, each time holding every write of every replica behind it) and
// the pool's Close hang. Afterwards no session of the database holds an advisory lock,
// no connection is out of the pool, and a newer binary's migration applies.
func TestAPanickingWriteLeavesNoLockBehind(t *testing.T) {
	db := testkit.OpenPostgres(t, nil)
	pool := db.Pool()
	const ws = "ws_01M8PJKXCQAW2M68WVPKBZQC82"
	for _, ctx := range []context.Context{
		data.WithPrincipal(context.Background(), &data.Principal{CurrentWorkspaceID: ws}),
		context.Background(),
	} {
		func() {
			defer func() {
				if p := recover(); p == nil || !strings.Contains(p.(string), "a bug") {
					t.Errorf("Update's panic: %v, want the function's, passed on", p)
				}
			}()
			_ = db.Update(ctx, func(tx service.Tx) error {
				if _, err := tx.Workspace(ws); err != nil { // the locks are taken with BEGIN
					return err
				}
				panic("a bug")
			})
		}()
	}
	ctx := context.Background()
	waitUntil(t, 10*time.Second, "the panicking writes' sessions to give back their locks", func() bool {
		var n int
		return pool.QueryRow(ctx, `SELECT count(*) FROM pg_locks l JOIN pg_database d ON d.oid = l.database
			WHERE l.locktype = 'advisory' AND d.datname = current_database() AND l.pid <> pg_backend_pid()`).Scan(&n) == nil && n == 0
	})
	// pgxpool destroys a closed connection in the background: it may count as out a moment.
	waitUntil(t, 10*time.Second, "the panicking writes' connections back in the pool", func() bool {
		return pool.Stat().AcquiredConns() == 0
	})

	newer := newerMigration(t)
	postgres.AsNewerBinary(t, newer)
	postgres.ShortenFenceLockWait(t, 200*time.Millisecond)
	mctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if applied, err := postgres.Migrate(mctx, pool); err != nil || !slices.Equal(applied, []int{newer.Version}) {
		t.Errorf("the newer binary's migration: applied %v, %v", applied, err)
	}
}

// A migration kept waiting for a write under way (here a session holding the fence's lock
// shared, as a long write does) says so each time its wait for the lock runs out, with
// how long it has waited, and applies once the write ends: `voiceapi serve` logs it and
// `voiceapi migrate` prints it, where both were silent while every write waited.
func TestAMigrationKeptWaitingSaysSo(t *testing.T) {
	db := testkit.OpenPostgres(t, nil)
	pool := db.Pool()
	ctx := context.Background()
	write, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer write.Release()
	if _, err := write.Exec(ctx, `SELECT pg_advisory_lock_shared($1)`, postgres.FenceLock); err != nil {
		t.Fatal(err)
	}
	newer := newerMigration(t)
	postgres.AsNewerBinary(t, newer)
	postgres.ShortenFenceLockWait(t, 100*time.Millisecond)
	waits := make(chan time.Duration, 100)
	migrated := migrateInBackground(func() ([]int, error) {
		return postgres.MigrateWithWaits(ctx, pool, func(waited time.Duration) { waits <- waited })
	})
	select {
	case waited := <-waits:
		if waited < 100*time.Millisecond {
			t.Errorf("the first wait said it had waited %v, want at least the 100 ms it was given", waited)
		}
	case res := <-migrated:
		t.Fatalf("the migration ended (%v, %v) while a write held the lock", res.applied, res.err)
	case <-time.After(30 * time.Second):
		t.Fatal("the migration never said it was waiting")
	}
	if _, err := write.Exec(ctx, `SELECT pg_advisory_unlock_shared($1)`, postgres.FenceLock); err != nil {
		t.Fatal(err)
	}
	awaitAppliedOnly(t, migrated, newer.Version, "once the write ended")
}

// migrationResult is what a migration run in the background answered.
type migrationResult struct {
	applied []int
	err     error
}

// migrateInBackground runs migrate in a goroutine, for a test to hold a lock it waits for;
// its answer arrives on the channel.
func migrateInBackground(migrate func() ([]int, error)) <-chan migrationResult {
	migrated := make(chan migrationResult, 1)
	go func() {
		applied, err := migrate()
		migrated <- migrationResult{applied, err}
	}()
	return migrated
}

// awaitAppliedOnly waits for a background migration's answer and checks that it applied
// version and no other. when says what should have let it through.
func awaitAppliedOnly(t *testing.T, migrated <-chan migrationResult, version int, when string) {
	t.Helper()
	select {
	case res := <-migrated:
		if res.err != nil || !slices.Equal(res.applied, []int{version}) {
			t.Errorf("the migration: applied %v, %v; want %d alone", res.applied, res.err, version)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the migration never applied " + when)
	}
}
