package postgres_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"golang.org/x/crypto/bcrypt"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/pgtest"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/postgres"
)

// On a database whose default isolation is SERIALIZABLE (ALTER DATABASE, as an operator
// may set it), the statements the engine runs outside its transactions still run at READ
// COMMITTED (db.go readCommittedSessions): at SERIALIZABLE, two replicas counting one
// busy key at once would fail with 40001 (concurrent update), and the reads would join
// the writes' conflict graph. Triggers note the isolation of every row the writes among
// them change (rate counting and its clean-up of old windows, source files,
// last_used_at's flush), and the reads (the revision checks, the webhook queue's depth,
// a source file's download) leave no predicate lock on what they read, which every
// SERIALIZABLE statement leaves while a SERIALIZABLE transaction that overlapped it runs
// (one is held open).
func TestStatementsOutsideTransactionsRunReadCommitted(t *testing.T) {
	ctx := context.Background()
	url := pgtest.Database(t)
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var name string
	if err := conn.QueryRow(ctx, `SELECT current_database()`).Scan(&name); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `ALTER DATABASE `+pgx.Identifier{name}.Sanitize()+` SET default_transaction_isolation = 'serializable'`); err != nil {
		t.Fatal(err)
	}
	db, err := postgres.Open(ctx, postgres.Options{URL: url, PasswordCost: bcrypt.MinCost, SecretKey: testkit.SecretKey})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var level string
	if err := db.Pool().QueryRow(ctx, `SELECT reset_val FROM pg_settings WHERE name = 'default_transaction_isolation'`).Scan(&level); err != nil {
		t.Fatal(err)
	}
	fresh, err := pgx.Connect(ctx, url) // conn's session began before the ALTER
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close(ctx)
	var dbDefault string
	if err := fresh.QueryRow(ctx, `SHOW default_transaction_isolation`).Scan(&dbDefault); err != nil || dbDefault != "serializable" {
		t.Fatalf("the database's default isolation = %q, %v; want serializable", dbDefault, err)
	}

	for _, sql := range []string{
		`INSERT INTO rate_windows (key, window_start, count, prev) VALUES ('old', now() - interval '1 hour', 1, 0)`,
		`CREATE TABLE seen_isolation (tbl text, op text, level text)`,
		`CREATE FUNCTION note_isolation() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN INSERT INTO seen_isolation VALUES (TG_TABLE_NAME, TG_OP, current_setting('transaction_isolation')); RETURN NULL; END $$`,
		`CREATE TRIGGER note_isolation AFTER INSERT OR UPDATE OR DELETE ON rate_windows FOR EACH ROW EXECUTE FUNCTION note_isolation()`,
		`CREATE TRIGGER note_isolation AFTER INSERT OR UPDATE OR DELETE ON source_files FOR EACH ROW EXECUTE FUNCTION note_isolation()`,
		`CREATE TRIGGER note_isolation AFTER UPDATE ON api_keys FOR EACH ROW EXECUTE FUNCTION note_isolation()`,
	} {
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	svc := testkit.Services(t, db, nil)
	acc := testkit.NewAccount(t, svc, "ada@example.com", false)
	p, err := svc.Auth.Authenticate(ctx, acc.Token)
	if err != nil {
		t.Fatal(err)
	}
	// Held open from here: the statements below leave their predicate locks, if any.
	overlap, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer overlap.Close(ctx)
	if _, err := overlap.Exec(ctx, "BEGIN ISOLATION LEVEL SERIALIZABLE; SELECT 1"); err != nil {
		t.Fatal(err)
	}

	minute := time.Now().Truncate(time.Minute)
	for range 2 { // a new window (INSERT, and the old one's DELETE), then a count (UPDATE)
		if _, _, err := db.CountRequest(ctx, "key", minute, 10); err != nil {
			t.Fatal(err)
		}
	}
	ids := db.IDs()
	ws, kb, src := ids.New(data.PrefixWorkspace), ids.New(data.PrefixKnowledgeBase), ids.New(data.PrefixSource)
	if err := db.PutSourceFile(ctx, ws, kb, src, strings.NewReader("file")); err != nil {
		t.Fatal(err)
	}
	if _, err := db.OpenSourceFile(ctx, ws, kb, src); err != nil {
		t.Fatal(err)
	}
	if err := db.DiscardSourceFiles(ctx, ws, kb, []string{src}); err != nil {
		t.Fatal(err)
	}
	if err := db.WriteUses(map[int64]time.Time{p.TokenID: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.TokenRevisions(ctx, p.TokenID, acc.ID, acc.WorkspaceID); err != nil {
		t.Fatal(err)
	}
	if _, err := db.WebhookQueueDepth(ctx); err != nil {
		t.Fatal(err)
	}

	rows, err := conn.Query(ctx, `SELECT DISTINCT tbl || ' ' || op || ' at ' || level FROM seen_isolation ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	seen, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"api_keys UPDATE at read committed",
		"rate_windows DELETE at read committed", "rate_windows INSERT at read committed", "rate_windows UPDATE at read committed",
		"source_files DELETE at read committed", "source_files INSERT at read committed",
	}
	if strings.Join(seen, "\n") != strings.Join(want, "\n") {
		t.Errorf("the rows changed outside transactions:\n%s\nwant\n%s", strings.Join(seen, "\n"), strings.Join(want, "\n"))
	}
	rows, err = conn.Query(ctx, `SELECT l.locktype || ' ' || coalesce(l.relation::regclass::text, '') FROM pg_locks l
		WHERE l.mode = 'SIReadLock' AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
		AND l.relation::regclass::text ~ '^(api_keys|users|members|agents|outbox|deliveries|source_files|rate_windows)'`)
	if err != nil {
		t.Fatal(err)
	}
	locks, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if len(locks) > 0 {
		t.Errorf("statements outside transactions left predicate locks (they ran SERIALIZABLE): %v", locks)
	}
	if level != "read committed" {
		t.Errorf("the pool's sessions start at %s; want read committed", level)
	}
}
