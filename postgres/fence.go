package postgres

// A replica steps aside once a newer voiceapi has migrated its database. During a rolling
// upgrade the first upgraded replica migrates the schema while the older ones still run;
// their code would keep writing by the old rules (docs/upgrading.md). So, once the
// database holds a migration this binary does not know, a replica refuses every write for
// the rest of its life (the fence): its /readyz answers 503 and the load balancer takes
// it out.
//
// Every write transaction learns it with no delay: it holds fenceLock shared from before
// its BEGIN to after its COMMIT and, once it holds it, reads the schema version, in the
// round trip of its BEGIN (locks.go); a migration holds fenceLock exclusively from before
// its BEGIN to after its COMMIT (migrate.go). So a write either commits before a
// migration starts, or waits for it, reads the newer version and is refused: no write
// runs the old code once a newer binary's migration has committed. A rate count, which
// reads make too, tries the lock instead of waiting for a migration (ratelimit.go).
// Besides, the replica reads the version about once a second on its own, for /readyz and
// so that its runner stops claiming before it would try.

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/voiceapi/voiceapi/data"
)

// fenceInterval is how often a replica reads the schema version on its own (its writes
// read it anyway). A second matches the load balancer's health check (deploy/haproxy.cfg:
// inter 1s), so an older replica that nothing writes through steps aside about when
// HAProxy would notice, and costs one lookup in a table of a few dozen rows a second
// (docs/performance.md).
const fenceInterval = time.Second

// fenceQueryTimeout bounds one reading: a database that does not answer is /readyz's
// concern, not the fence's.
const fenceQueryTimeout = 2 * time.Second

// fenceSQL reads what tells a newer binary's migration: the newest version and how many
// there are. The count catches a migration numbered below this binary's newest (numbers
// are handed out to work built side by side: migrate.go), which max alone would miss.
const fenceSQL = `SELECT coalesce(max(version), 0), count(*) FROM schema_migrations`

// fenceLock is the advisory lock of the fence ("voicefen" in ASCII): shared by every
// write transaction, exclusive to a migration. A session lock taken before BEGIN, as the
// workspaces' are (locks.go): PostgreSQL takes a SERIALIZABLE transaction's snapshot at
// its first statement, so a lock taken inside the transaction could be waited for with a
// snapshot from before the migration committed. An advisory lock rather than a lock of
// schema_migrations leaves the table to its readers (/readyz, CheckSchema) while a
// migration runs.
const fenceLock int64 = 0x766f69636566656e

// fence watches the schema version for a newer binary's migration.
type fence struct {
	latest, known int // this binary's newest migration and how many it knows
	// err is nil until the database is found superseded, then the error every write
	// answers; it never goes back (the state is one-way for the process's life).
	err atomic.Pointer[error]
	// checkedAt is when a reading last succeeded (UnixNano): the loop skips its turn
	// after a recent one (GET /readyz reads it through Ping).
	checkedAt atomic.Int64
	checks    atomic.Int64 // readings made (tests)
	// ctx ends when the database closes: the loop's reading under way with it.
	ctx  context.Context
	stop context.CancelFunc
	done chan struct{}
}

// newFence is the fence of a binary whose migrations are all.
func newFence(all []Migration) *fence {
	ctx, stop := context.WithCancel(context.Background())
	return &fence{latest: LatestVersion(all), known: len(all), ctx: ctx, stop: stop, done: make(chan struct{})}
}

// superseded reports whether a database at version newest holding count migrations
// holds one this binary does not know. After Open the database holds exactly the known
// ones (Migrate applied the rest, and both it and CheckSchema refuse an unknown one), so
// a higher version or more rows mean a newer binary has been at it; fewer rows are an
// operator's rollback by hand.
func superseded(newest, count, latest, known int) bool {
	return newest > latest || count > known
}

// failed returns the error writes answer once fenced, else nil: one atomic load.
func (f *fence) failed() error {
	if p := f.err.Load(); p != nil {
		return *p
	}
	return nil
}

// checkSchemaVersion reads the schema version and fences db when a newer binary has
// migrated it. Other errors are the reading's (the database unreachable), not a verdict.
func (db *DB) checkSchemaVersion(ctx context.Context) error {
	f := db.fence
	if err := f.failed(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, fenceQueryTimeout)
	defer cancel()
	var newest, count int
	if err := db.pool.QueryRow(ctx, fenceSQL).Scan(&newest, &count); err != nil {
		return unavailableError(err)
	}
	f.checks.Add(1)
	f.checkedAt.Store(time.Now().UnixNano())
	return db.verdict(newest, count)
}

// verdict fences db when a database at version newest holding count migrations is a
// newer binary's, and returns the error writes answer then; nil when it is this one's.
func (db *DB) verdict(newest, count int) error {
	f := db.fence
	if !superseded(newest, count, f.latest, f.known) {
		return nil
	}
	err := fmt.Errorf("%w: the database holds schema version %d (%d migrations) and this voiceapi knows up to %d (%d migrations)",
		data.ErrStorageSuperseded, newest, count, f.latest, f.known)
	if f.err.CompareAndSwap(nil, &err) {
		db.log.Error("the database was upgraded by a newer voiceapi: this replica no longer writes, claims no work and answers /readyz 503; replace it with the new version",
			"schema_version", newest, "migrations", count, "newest_known", f.latest, "known", f.known)
	}
	return f.failed()
}

// watchSchema reads the schema version every fenceInterval until Close or the fence:
// on its own, so a replica steps aside whether or not a load balancer polls /readyz.
func (db *DB) watchSchema() {
	defer close(db.fence.done)
	tick := time.NewTicker(fenceInterval)
	defer tick.Stop()
	for {
		select {
		case <-db.fence.ctx.Done():
			return
		case <-tick.C:
		}
		// A reading /readyz has just made (HAProxy checks every second) stands in for
		// the loop's. Skipping only within three quarters of the interval never skips
		// after the loop's own previous reading, so a verdict is at most about 1.75 s old.
		if time.Since(time.Unix(0, db.fence.checkedAt.Load())) < fenceInterval*3/4 {
			continue
		}
		if db.checkSchemaVersion(db.fence.ctx) != nil && db.fence.failed() != nil {
			return // fenced for good: nothing more to watch
		}
	}
}

// stopWatching ends watchSchema and waits for it.
func (f *fence) stopWatching() {
	f.stop()
	<-f.done
}
