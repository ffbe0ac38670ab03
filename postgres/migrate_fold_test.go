package postgres_test

import (
	"context"
	"maps"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/postgres"
	"github.com/voiceapi/voiceapi/service"
)

// Migration 0040 folds the names and nicknames stored before it, in Go (data.FoldCase,
// which SQL's lower() under the C locale is not), over more rows than one batch: every
// row's copy is the fold of its text, and a search finds a name stored before by another
// case of a non-ASCII letter. Run again, the backfill rewrites no row.
func TestMigrationFoldsSearchedNames(t *testing.T) {
	const before = 38
	pool := schemaAt(t, before)
	ctx := context.Background()
	const rows = 2500 // two and a half batches (foldBatch)
	if _, err := pool.Exec(ctx, `
		INSERT INTO agents (id, workspace_id, name, status, config, privacy, created_at, updated_at)
			SELECT 'agt_01JD6' || lpad(i::text, 21, '0'), 'ws_1',
				CASE WHEN i % 1000 = 7 THEN 'ÉLODIE ' || i ELSE 'Agent ÖΣ ' || i END,
				'draft', '{}', '{}', now(), now()
			FROM generate_series(1, $1) i`, rows); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `
		INSERT INTO numbers (id, workspace_id, phone_number, nickname, provider, created_at, updated_at)
			SELECT 'num_01JD6' || lpad(i::text, 21, '0'), 'ws_1', '+1555' || lpad(i::text, 7, '0'),
				CASE WHEN i % 1000 = 7 THEN 'Accueil ÉLODIE' WHEN i % 2 = 0 THEN '' ELSE 'ΑΊΘΟΥΣΑ ' || i END,
				'sip', now(), now()
			FROM generate_series(1, $1) i`, rows); err != nil {
		t.Fatal(err)
	}
	all, err := postgres.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(all, func(m postgres.Migration) bool { return m.Name == "search_folded" })
	if i < 0 || all[i].Backfill == nil || all[i].Version <= before {
		t.Fatalf("no migration search_folded with a backfill after %d", before)
	}
	fold := all[i]
	if applied, err := postgres.Migrate(ctx, pool); err != nil || !slices.Contains(applied, fold.Version) {
		t.Fatalf("migrate: applied %v, %v", applied, err)
	}
	agents := checkFolded(t, pool, `SELECT id, name, name_folded, xmin::text FROM agents`, rows)
	numbers := checkFolded(t, pool, `SELECT id, nickname, nickname_folded, xmin::text FROM numbers`, rows)

	if err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error { return fold.Backfill(ctx, tx) }); err != nil {
		t.Fatal(err)
	}
	if again := checkFolded(t, pool, `SELECT id, name, name_folded, xmin::text FROM agents`, rows); !maps.Equal(again, agents) {
		t.Error("the backfill run again rewrote agents")
	}
	if again := checkFolded(t, pool, `SELECT id, nickname, nickname_folded, xmin::text FROM numbers`, rows); !maps.Equal(again, numbers) {
		t.Error("the backfill run again rewrote numbers")
	}

	db := openMigrated(t, pool)
	defer db.Close()
	if err := db.View(ctx, func(tx service.Tx) error {
		ids, _, err := tx.AgentIDs("ws_1", "", nil, service.AgentSearch{Name: "élodie"}, data.PageRequest{PerPage: 10})
		if want := []string{"agt_01JD6000000000000000002007", "agt_01JD6000000000000000001007", "agt_01JD6000000000000000000007"}; err != nil || !slices.Equal(ids, want) {
			t.Errorf("agents named élodie: %v, %v; want %v", ids, err, want)
		}
		found, _, err := tx.Numbers("ws_1", service.NumberSearch{NumberFilter: data.NumberFilter{Q: "αίθουσα 2499"}}, data.PageRequest{PerPage: 10})
		if err != nil || len(found) != 1 || found[0].ID != "num_01JD6000000000000000002499" {
			t.Errorf("numbers nicknamed αίθουσα 2499: %v, %v", found, err)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// checkFolded reads (id, text, folded, xmin) rows, checks that each folded is
// data.FoldCase(text) and that there are n, and returns each row's xmin by id.
func checkFolded(t *testing.T, pool *pgxpool.Pool, sql string, n int) map[string]string {
	t.Helper()
	rows, err := pool.Query(context.Background(), sql)
	if err != nil {
		t.Fatal(err)
	}
	versions := map[string]string{}
	var id, text, folded, xmin string
	wrong := 0
	if _, err := pgx.ForEachRow(rows, []any{&id, &text, &folded, &xmin}, func() error {
		if folded != data.FoldCase(text) {
			if wrong++; wrong == 1 {
				t.Errorf("%s: %q folded %q, want %q", id, text, folded, data.FoldCase(text))
			}
		}
		versions[id] = xmin
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if wrong > 0 || len(versions) != n {
		t.Errorf("%d rows of %d folded otherwise than data.FoldCase; want %d rows, none", wrong, len(versions), n)
	}
	return versions
}

// Migration 0041 folds again the rows 0040 folded with strings.ToLower, under which a
// final sigma kept apart from σ: a name stored before it is found by its capitals after
// it, and the rows whose fold did not change are not rewritten.
func TestMigrationRefoldsSearchedNames(t *testing.T) {
	const before = 40
	pool := schemaAt(t, before)
	ctx := context.Background()
	if _, err := pool.Exec(ctx, `
		INSERT INTO agents (id, workspace_id, name, name_folded, status, config, privacy, created_at, updated_at) VALUES
			('agt_01JD6000000000000000000001', 'ws_1', 'Οδυσσέας', 'οδυσσέας', 'draft', '{}', '{}', now(), now()),
			('agt_01JD6000000000000000000002', 'ws_1', 'Plain Ö', 'plain ö', 'draft', '{}', '{}', now(), now());
		INSERT INTO numbers (id, workspace_id, phone_number, nickname, nickname_folded, provider, created_at, updated_at) VALUES
			('num_01JD6000000000000000000001', 'ws_1', '+15550000001', 'Γραφείο Μύθος', 'γραφείο μύθος', 'sip', now(), now())`); err != nil {
		t.Fatal(err)
	}
	unchanged := checkFolded(t, pool, `SELECT id, name, name_folded, xmin::text FROM agents WHERE id LIKE '%2'`, 1)
	all, err := postgres.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(all, func(m postgres.Migration) bool { return m.Name == "search_refolded" })
	if i < 0 || all[i].Backfill == nil || all[i].Version <= before {
		t.Fatalf("no migration search_refolded with a backfill after %d", before)
	}
	if applied, err := postgres.Migrate(ctx, pool); err != nil || !slices.Contains(applied, all[i].Version) {
		t.Fatalf("migrate: applied %v, %v", applied, err)
	}
	agents := checkFolded(t, pool, `SELECT id, name, name_folded, xmin::text FROM agents`, 2)
	checkFolded(t, pool, `SELECT id, nickname, nickname_folded, xmin::text FROM numbers`, 1)
	if agents["agt_01JD6000000000000000000002"] != unchanged["agt_01JD6000000000000000000002"] {
		t.Error("the refold rewrote an agent whose fold did not change")
	}
	db := openMigrated(t, pool)
	defer db.Close()
	if err := db.View(ctx, func(tx service.Tx) error {
		ids, _, err := tx.AgentIDs("ws_1", "", nil, service.AgentSearch{Name: "ΟΔΥΣΣΈΑΣ"}, data.PageRequest{PerPage: 10})
		if want := []string{"agt_01JD6000000000000000000001"}; err != nil || !slices.Equal(ids, want) {
			t.Errorf("agents named ΟΔΥΣΣΈΑΣ: %v, %v; want %v", ids, err, want)
		}
		found, _, err := tx.Numbers("ws_1", service.NumberSearch{NumberFilter: data.NumberFilter{Q: "ΜΎΘΟΣ"}}, data.PageRequest{PerPage: 10})
		if err != nil || len(found) != 1 {
			t.Errorf("numbers nicknamed ΜΎΘΟΣ: %v, %v", found, err)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
