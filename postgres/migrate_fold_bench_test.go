package postgres_test

import (
	"context"
	"testing"
)

// BenchmarkMigrationFoldsSearchedNames times the open that applies migration 0040 to a
// database holding 100,000 agents and 100,000 numbers, whose names and nicknames its
// backfill folds in Go, 1,000 rows a round (and 0041 after it, which finds them folded
// and rewrites none). Writing the rows is untimed.
func BenchmarkMigrationFoldsSearchedNames(b *testing.B) {
	ctx := context.Background()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		pool := schemaAt(b, 38)
		if _, err := pool.Exec(ctx, `INSERT INTO agents (id, workspace_id, name, status, config, privacy, created_at, updated_at)
			SELECT 'agt_01JD6' || lpad(n::text, 21, '0'), 'ws_' || n % 100, 'Agent ÖΣ ' || n, 'draft', '{}', '{}', now(), now()
			FROM generate_series(1, 100000) n`); err != nil {
			b.Fatal(err)
		}
		if _, err := pool.Exec(ctx, `INSERT INTO numbers (id, workspace_id, phone_number, nickname, provider, created_at, updated_at)
			SELECT 'num_01JD6' || lpad(n::text, 21, '0'), 'ws_' || n % 100, '+1555' || lpad(n::text, 7, '0'), 'Accueil ÉLODIE ' || n, 'sip', now(), now()
			FROM generate_series(1, 100000) n`); err != nil {
			b.Fatal(err)
		}
		db := timedMigratedOpen(b, pool)
		var unfolded int
		if err := pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM agents WHERE name_folded = '') + (SELECT count(*) FROM numbers WHERE nickname_folded = '')`).Scan(&unfolded); err != nil || unfolded != 0 {
			b.Fatalf("%d rows left unfolded: %v", unfolded, err)
		}
		db.Close()
	}
}

// BenchmarkMigrationRefoldsSearchedNames times the open that applies migration 0041 to a
// database holding 100,000 agents and 100,000 numbers folded by 0040's fold
// (strings.ToLower), one in a hundred holding a final sigma, which 0041 rewrites; the
// others it reads only. Writing the rows is untimed.
func BenchmarkMigrationRefoldsSearchedNames(b *testing.B) {
	ctx := context.Background()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		pool := schemaAt(b, 40)
		if _, err := pool.Exec(ctx, `INSERT INTO agents (id, workspace_id, name, name_folded, status, config, privacy, created_at, updated_at)
			SELECT 'agt_01JD6' || lpad(n::text, 21, '0'), 'ws_' || n % 100, v.name, lower(v.name), 'draft', '{}', '{}', now(), now()
			FROM generate_series(1, 100000) n,
				LATERAL (SELECT CASE WHEN n % 100 = 0 THEN 'Οδυσσέας ' || n ELSE 'agent ' || n END AS name) v`); err != nil {
			b.Fatal(err)
		}
		if _, err := pool.Exec(ctx, `INSERT INTO numbers (id, workspace_id, phone_number, nickname, nickname_folded, provider, created_at, updated_at)
			SELECT 'num_01JD6' || lpad(n::text, 21, '0'), 'ws_' || n % 100, '+1555' || lpad(n::text, 7, '0'), v.nick, lower(v.nick), 'sip', now(), now()
			FROM generate_series(1, 100000) n,
				LATERAL (SELECT CASE WHEN n % 100 = 0 THEN 'μύθος ' || n ELSE 'desk ' || n END AS nick) v`); err != nil {
			b.Fatal(err)
		}
		db := timedMigratedOpen(b, pool)
		var stale int
		if err := pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM agents WHERE name_folded LIKE '%ς%') + (SELECT count(*) FROM numbers WHERE nickname_folded LIKE '%ς%')`).Scan(&stale); err != nil || stale != 0 {
			b.Fatalf("%d rows left with a final sigma: %v", stale, err)
		}
		db.Close()
	}
}
