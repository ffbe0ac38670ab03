package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// migrationFiles are the schema's versions: NNNN_name.sql, applied in order, each in its
// own transaction, never edited once released (a change is a new file). Numbers are
// handed out to pieces of work built side by side, so a version may be missing for a
// while: each migration is applied once, by number, whether or not a higher one came
// first (a database that ran 0010 before 0008 existed gets 0008 when it arrives).
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrationSource is where Migrations reads them: migrationFiles, but for a test that
// plays a newer voiceapi (fence_internal_test.go).
var migrationSource fs.FS = migrationFiles

// migrationLock is the advisory lock key the migrating replica holds ("voiceapi" in
// ASCII), so that replicas starting together migrate once and the others wait.
const migrationLock int64 = 0x766f696365617069

// Migration is one schema version.
type Migration struct {
	Version int
	Name    string
	SQL     string
	// Backfill, when not nil, runs after SQL in its transaction: what SQL cannot compute
	// (migrationBackfills).
	Backfill func(ctx context.Context, tx pgx.Tx) error
}

// Migrations returns the embedded migrations, oldest first.
func Migrations() ([]Migration, error) {
	entries, err := fs.ReadDir(migrationSource, "migrations")
	if err != nil {
		return nil, err
	}
	var out []Migration
	for _, e := range entries {
		name := e.Name()
		num, rest, ok := strings.Cut(strings.TrimSuffix(name, ".sql"), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("postgres: migration file %q is not named NNNN_name.sql", name)
		}
		body, err := fs.ReadFile(migrationSource, "migrations/"+name)
		if err != nil {
			return nil, err
		}
		out = append(out, Migration{Version: v, Name: rest, SQL: string(body), Backfill: migrationBackfills[rest]})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	for i := 1; i < len(out); i++ {
		if out[i].Version == out[i-1].Version {
			return nil, fmt.Errorf("postgres: two migrations are numbered %d (%s and %s)", out[i].Version, out[i-1].Name, out[i].Name)
		}
	}
	return out, nil
}

// appliedVersions returns the versions recorded in schema_migrations (none for an empty
// database).
func appliedVersions(ctx context.Context, q interface {
	Query(context.Context, string, ...any) (pgx.Rows, error)
	QueryRow(context.Context, string, ...any) pgx.Row
}) (map[int]bool, error) {
	var exists bool
	if err := q.QueryRow(ctx, `SELECT to_regclass('schema_migrations') IS NOT NULL`).Scan(&exists); err != nil || !exists {
		return map[int]bool{}, err
	}
	rows, err := q.Query(ctx, `SELECT version FROM schema_migrations`)
	if err != nil {
		return nil, err
	}
	versions, err := pgx.CollectRows(rows, pgx.RowTo[int])
	out := make(map[int]bool, len(versions))
	for _, v := range versions {
		out[v] = true
	}
	return out, err
}

// pendingMigrations returns the migrations of all that applied lacks, oldest first, and
// refuses a database holding a version this binary does not know (a newer binary's).
func pendingMigrations(all []Migration, applied map[int]bool) ([]Migration, error) {
	known := make(map[int]bool, len(all))
	var pending []Migration
	for _, m := range all {
		known[m.Version] = true
		if !applied[m.Version] {
			pending = append(pending, m)
		}
	}
	for v := range applied {
		if !known[v] {
			return nil, fmt.Errorf("postgres: the database has schema version %d, which this voiceapi does not know (its newest is %d): upgrade voiceapi", v, LatestVersion(all))
		}
	}
	return pending, nil
}

// LatestVersion is the newest of the migrations all (0 when none).
func LatestVersion(all []Migration) int {
	if len(all) == 0 {
		return 0
	}
	return all[len(all)-1].Version
}

// SchemaVersion returns the version the database is at (0 for an empty database).
func SchemaVersion(ctx context.Context, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}) (int, error) {
	var exists bool
	if err := q.QueryRow(ctx, `SELECT to_regclass('schema_migrations') IS NOT NULL`).Scan(&exists); err != nil {
		return 0, err
	}
	if !exists {
		return 0, nil
	}
	var v int
	err := q.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&v)
	return v, err
}

// Migrate brings the schema to this binary's version under the advisory lock and returns
// the versions it applied. A database newer than the binary is refused.
func Migrate(ctx context.Context, pool *pgxpool.Pool) ([]int, error) {
	return MigrateWithWaits(ctx, pool, nil)
}

// MigrateWithWaits is Migrate, calling onWait (when not nil) each time its wait for the
// writes under way on every replica (the fence's lock) has lasted another fenceLockWait,
// with how long it has waited so far: a long write, a campaign's import, holds the
// migration and every write behind it, which the operator must hear of rather than see
// a start or a `voiceapi migrate` hang.
func MigrateWithWaits(ctx context.Context, pool *pgxpool.Pool, onWait func(waited time.Duration)) ([]int, error) {
	all, err := Migrations()
	if err != nil {
		return nil, err
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, migrationLock); err != nil {
		return nil, fmt.Errorf("postgres: taking the migration lock: %w", err)
	}
	defer conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, migrationLock)
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    integer PRIMARY KEY,
		name       text NOT NULL,
		applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	done, err := appliedVersions(ctx, conn)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	pending, err := pendingMigrations(all, done)
	if err != nil {
		return nil, err
	}
	return applyMigrations(ctx, conn, pending, onWait)
}

// applyMigrations applies pending on conn, which holds migrationLock, each in its own
// transaction, under the fence's lock held exclusively (fence.go): it waits for the
// writes under way, of every replica, to end, and the writes that begin meanwhile wait
// for it and then read the new version. A write transaction that runs long delays the
// migration, and every write waits for the migration's end: most take milliseconds, a
// migration that fills a table as long as that takes (docs/upgrading.md).
func applyMigrations(ctx context.Context, conn *pgxpool.Conn, pending []Migration, onWait func(time.Duration)) ([]int, error) {
	if len(pending) == 0 {
		return nil, nil
	}
	if err := takeFenceLock(ctx, conn, onWait); err != nil {
		return nil, fmt.Errorf("postgres: taking the fence's lock: %w", err)
	}
	defer conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, fenceLock)
	var applied []int
	for _, m := range pending {
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, m.SQL); err != nil {
				return err
			}
			if m.Backfill != nil {
				if err := m.Backfill(ctx, tx); err != nil {
					return fmt.Errorf("backfill: %w", err)
				}
			}
			_, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version, name) VALUES ($1, $2)`, m.Version, m.Name)
			return err
		})
		if err != nil {
			return applied, fmt.Errorf("postgres: migration %d (%s): %w", m.Version, m.Name, err)
		}
		applied = append(applied, m.Version)
	}
	return applied, nil
}

// fenceLockWait bounds one wait of a migration for the fence's lock. The writes that
// begin while it waits queue behind it; were one of them awaited by a write holding the
// lock (in the process, where PostgreSQL's deadlock detector cannot see it), neither
// would ever end. Giving up the wait lets them through; the migration then asks again.
// A variable for a test to shorten (fence_internal_test.go).
var fenceLockWait = 10 * time.Second

// takeFenceLock takes the fence's lock exclusively on conn, asking again after each
// fenceLockWait until it has it or ctx ends, and telling onWait (when not nil) each time.
func takeFenceLock(ctx context.Context, conn *pgxpool.Conn, onWait func(time.Duration)) error {
	if _, err := conn.Exec(ctx, fmt.Sprintf("SET lock_timeout = %d", fenceLockWait.Milliseconds())); err != nil {
		return err
	}
	defer conn.Exec(context.WithoutCancel(ctx), `RESET lock_timeout`)
	began := time.Now()
	for {
		_, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, fenceLock)
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "55P03" { // lock_not_available: the wait ran out
			return err
		}
		if onWait != nil {
			onWait(time.Since(began))
		}
	}
}

// CheckSchema refuses a database whose schema is not this binary's version.
func CheckSchema(ctx context.Context, pool *pgxpool.Pool) error {
	all, err := Migrations()
	if err != nil {
		return err
	}
	done, err := appliedVersions(ctx, pool)
	if err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	pending, err := pendingMigrations(all, done)
	if err != nil {
		return err
	}
	if len(pending) > 0 {
		v, err := SchemaVersion(ctx, pool)
		if err != nil {
			return fmt.Errorf("postgres: %w", err)
		}
		return fmt.Errorf("postgres: the database has schema version %d and lacks %04d_%s, which this voiceapi needs (version %d): run `voiceapi migrate`",
			v, pending[0].Version, pending[0].Name, LatestVersion(all))
	}
	return nil
}
