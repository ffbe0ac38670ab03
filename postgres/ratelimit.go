package postgres

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/voiceapi/voiceapi/data"
)

var _ data.RateCounter = (*DB)(nil)

// rateCount is one request to be counted, and its answer.
type rateCount struct {
	key   string
	start time.Time
	limit int

	count int
	added bool
}

// rateWindowKey is one row of rate_windows: a key's window.
type rateWindowKey struct {
	key   string
	start int64 // Unix microseconds, as timestamptz keeps it
}

// rateStatementsInFlight is how many counting statements a replica runs at once: one,
// so that concurrent requests queue into one statement.
const rateStatementsInFlight = 1

// CountRequest implements data.RateCounter on an UNLOGGED table (counting writes no WAL
// and so waits for no disk flush; a database crash only resets the current minute's
// windows). Concurrent requests are counted together, one statement a batch (batcher):
// otherwise every request of a busy token waits its turn for the row's lock, and each
// costs the database a statement.
func (db *DB) CountRequest(ctx context.Context, key string, start time.Time, limit int) (int, bool, error) {
	c := &rateCount{key: key, start: start, limit: limit}
	if _, err := db.rates.do(ctx, c); err != nil {
		return 0, false, err
	}
	return c.count, c.added, nil
}

// UncountRequest implements data.RateCounter: one statement, not batched, as only a
// successful login takes a count back, and that has written its token already. A
// window's row holds a count above 0 (0005_rate_windows.sql), so its last request taken
// back deletes it; a request counted into that row meanwhile makes the statement take
// nothing back, the safe side.
func (db *DB) UncountRequest(ctx context.Context, key string, start time.Time) error {
	return db.tryFenced(ctx, uncountRequestSQL, nil, key, start)
}

// uncountRequestSQL takes one request back from the window ($1, $2), under fencedSQL.
var uncountRequestSQL = `
WITH gone AS (
	DELETE FROM rate_windows WHERE key = $1 AND window_start = $2 AND count = 1 AND ` + fencedSQL(3) + `
)
UPDATE rate_windows SET count = count - 1
WHERE key = $1 AND window_start = $2 AND count > 1 AND ` + fencedSQL(3)

// countRequests counts a batch: each window's requests added by one row update, up to
// the limit (a refused request is not counted), and each request answered in batch
// order as if counted alone. A key has one limit in a process (the token and login
// limiters prefix their keys), so a window's requests share the first one's.
func (db *DB) countRequests(ctx context.Context, batch []*rateCount, _ uint64) error {
	groups := map[rateWindowKey][]*rateCount{}
	var windows []rateWindowKey
	for _, c := range batch {
		w := rateWindowKey{c.key, c.start.UnixMicro()}
		if _, ok := groups[w]; !ok {
			windows = append(windows, w)
		}
		groups[w] = append(groups[w], c)
	}
	// One order for every replica's statements, so that two never wait for each
	// other's rows (deadlock).
	slices.SortFunc(windows, func(a, b rateWindowKey) int {
		return cmp.Or(cmp.Compare(a.key, b.key), cmp.Compare(a.start, b.start))
	})
	keys, starts := make([]string, len(windows)), make([]time.Time, len(windows))
	ns, limits := make([]int32, len(windows)), make([]int32, len(windows))
	for i, w := range windows {
		g := groups[w]
		keys[i], starts[i], ns[i], limits[i] = w.key, g[0].start, int32(len(g)), int32(g[0].limit)
	}
	answered, oldest := 0, time.Time{}
	err := db.tryFenced(ctx, countRequestsSQL, func(rows pgx.Rows) error {
		for rows.Next() {
			var key string
			var start time.Time
			var before int
			if err := rows.Scan(&key, &start, &before); err != nil {
				return err
			}
			g := groups[rateWindowKey{key, start.UnixMicro()}]
			if g == nil {
				return fmt.Errorf("postgres: counted a window nobody asked for (%s at %s)", key, start)
			}
			for i, c := range g {
				n := before + i + 1
				c.added, c.count = n <= c.limit, min(n, c.limit)
			}
			answered += len(g)
			if before == 0 && (oldest.IsZero() || start.Before(oldest)) {
				oldest = start
			}
		}
		return rows.Err()
	}, keys, starts, ns, limits)
	if err != nil {
		return err
	}
	if answered != len(batch) {
		return fmt.Errorf("postgres: %d of %d requests counted", answered, len(batch))
	}
	if !oldest.IsZero() {
		// A window's first requests clear the windows that ended before the last one,
		// so the table holds about two minutes of keys: after the counts' commit, so
		// that their rows' locks are not held meanwhile. Behind the fence as the count
		// (a newer binary may keep other windows); skipped while a migration runs, as a
		// later window's first requests clear them too.
		err := db.clearWindows(ctx, oldest.Add(-time.Minute))
		if err != nil && !errors.Is(err, data.ErrStorageSuperseded) && !errors.Is(err, data.ErrCountBusy) {
			db.log.Warn("rate limit: clearing old windows", "error", err)
		}
	}
	return nil
}

// clearWindows deletes the windows that started before before.
func (db *DB) clearWindows(ctx context.Context, before time.Time) error {
	return db.tryFenced(ctx, `DELETE FROM rate_windows WHERE window_start < $1 AND `+fencedSQL(2), nil, before)
}

// tryFenced runs sql (a statement of the rate counts whose condition ends with
// fencedSQL) with args behind the fence (fence.go) in the one round trip it takes anyway,
// and hands its rows to read (nil: none): a request's count is every request's, reads
// included, and writeOnce's two more round trips doubled its cost (docs/performance.md,
// fence3). The same lock and reading as every write, in one implicit transaction: the
// fence's lock tried shared until its commit (pg_try_advisory_xact_lock_shared), its
// outcome noted in a setting of the transaction, then the schema version's read and sql,
// each with a snapshot of its own taken after the try (READ COMMITTED), so that when the
// lock is held a migration has committed or has not begun; sql writes only when the lock
// is held and the version it reads is this binary's. The reading then fences the replica
// (verdict).
//
// Unlike a write, it does not wait for a migration: while one holds the lock or waits for
// it, sql writes nothing and tryFenced answers data.ErrCountBusy, so that the server
// counts the request on its own and reads are not held for as long as the migration runs
// (docs/upgrading.md).
func (db *DB) tryFenced(ctx context.Context, sql string, read func(pgx.Rows) error, args ...any) error {
	if err := db.fence.failed(); err != nil {
		return err
	}
	b := &pgx.Batch{}
	b.Queue(`SELECT set_config('voiceapi.fence_held', CASE WHEN pg_try_advisory_xact_lock_shared($1) THEN 'on' ELSE 'off' END, true) = 'on'`, fenceLock)
	b.Queue(fenceSQL)
	b.Queue(sql, append(args, db.fence.latest, db.fence.known)...)
	br := db.shared.SendBatch(ctx, b)
	defer br.Close()
	var held bool
	if err := br.QueryRow().Scan(&held); err != nil {
		return err
	}
	var newest, count int
	if err := br.QueryRow().Scan(&newest, &count); err != nil {
		return err
	}
	rows, err := br.Query()
	if err != nil {
		return err
	}
	if read != nil {
		err = read(rows)
	}
	rows.Close()
	if err == nil {
		err = rows.Err()
	}
	if verdict := db.verdict(newest, count); verdict != nil {
		return verdict
	}
	if err != nil {
		return err
	}
	if err := br.Close(); err != nil {
		return err
	}
	if !held {
		return data.ErrCountBusy
	}
	return nil
}

// fencedSQL is the condition tryFenced's statements write under: the fence's lock held
// (the setting tryFenced's try leaves) and the database holding no migration this binary
// does not know (fence.go's superseded), with $n this binary's newest and $n+1 how many
// it knows.
func fencedSQL(n int) string {
	return fmt.Sprintf(`current_setting('voiceapi.fence_held', true) = 'on'
	AND (SELECT coalesce(max(version), 0) <= $%d AND count(*) <= $%d FROM schema_migrations)`, n, n+1)
}

// countRequestsSQL adds n requests to each window, up to its limit, and returns each
// window's count before: a new window's row starts at min(n, limit) with prev 0. It
// counts only under fencedSQL (tryFenced).
var countRequestsSQL = `
WITH t AS (
	SELECT * FROM unnest($1::text[], $2::timestamptz[], $3::int[], $4::int[]) WITH ORDINALITY AS t(key, start, n, lim, i)
)
INSERT INTO rate_windows AS w (key, window_start, count, prev)
SELECT t.key, t.start, LEAST(t.n, t.lim), 0 FROM t
WHERE ` + fencedSQL(5) + `
ORDER BY t.i
ON CONFLICT (key, window_start) DO UPDATE SET prev = w.count, count = (
	SELECT CASE WHEN w.count >= t.lim THEN w.count ELSE LEAST(w.count + t.n, t.lim) END
	FROM t WHERE t.key = excluded.key AND t.start = excluded.window_start)
RETURNING key, window_start, prev`
