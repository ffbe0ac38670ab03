package postgres

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// migrationFiles are the schema's versions: NNNN_name.sql, applied in order, each in its
// own transaction, never edited once released (a change is a new file).
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrationLock is the advisory lock key the migrating replica holds ("voiceapi" in
// ASCII), so that replicas starting together migrate once and the others wait.
const migrationLock int64 = 0x766f696365617069

// Migration is one schema version.
type Migration struct {
	Version int
	Name    string
	SQL     string
}

// Migrations returns the embedded migrations, oldest first.
func Migrations() ([]Migration, error) {
	entries, err := fs.ReadDir(migrationFiles, "migrations")
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
		body, err := fs.ReadFile(migrationFiles, "migrations/"+name)
		if err != nil {
			return nil, err
		}
		out = append(out, Migration{Version: v, Name: rest, SQL: string(body)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	for i, m := range out {
		if m.Version != i+1 {
			return nil, fmt.Errorf("postgres: migration %d is missing (found %d_%s)", i+1, m.Version, m.Name)
		}
	}
	return out, nil
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
	current, err := SchemaVersion(ctx, conn)
	if err != nil {
		return nil, err
	}
	if current > len(all) {
		return nil, fmt.Errorf("postgres: the database has schema version %d, newer than this voiceapi (%d): upgrade voiceapi", current, len(all))
	}
	var applied []int
	for _, m := range all[current:] {
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, m.SQL); err != nil {
				return err
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

// CheckSchema refuses a database whose schema is not this binary's version.
func CheckSchema(ctx context.Context, pool *pgxpool.Pool) error {
	all, err := Migrations()
	if err != nil {
		return err
	}
	v, err := SchemaVersion(ctx, pool)
	if err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	if v != len(all) {
		return fmt.Errorf("postgres: the database has schema version %d, this voiceapi needs %d: run `voiceapi migrate`", v, len(all))
	}
	return nil
}
