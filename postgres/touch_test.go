package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"golang.org/x/crypto/bcrypt"

	"github.com/voiceapi/voiceapi/internal/pgtest"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/postgres"
)

// The flush of last_used_at runs at READ COMMITTED whatever the database's default
// isolation: at SERIALIZABLE its writes of api_keys rows would join the predicate-lock
// graph of every write's access re-check, which reads those rows, and make writes fail
// and retry (and the flush itself fail; docs/performance.md, BenchmarkRecheckContention).
// A trigger notes the isolation each update of api_keys runs at.
func TestKeyUsesWrittenReadCommittedUnderASerializableDefault(t *testing.T) {
	url := pgtest.Database(t) + "&default_transaction_isolation=serializable"
	db, err := postgres.Open(context.Background(), postgres.Options{URL: url, PasswordCost: bcrypt.MinCost, SecretKey: testkit.SecretKey})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	svc := testkit.Services(t, db, nil)
	acc := testkit.NewAccount(t, svc, "ada@example.com", false)
	p, err := svc.Auth.Authenticate(context.Background(), acc.Token)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	for _, sql := range []string{
		`CREATE TABLE seen_isolation (level text)`,
		`CREATE FUNCTION note_isolation() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN INSERT INTO seen_isolation VALUES (current_setting('transaction_isolation')); RETURN NEW; END $$`,
		`CREATE TRIGGER note_isolation BEFORE UPDATE ON api_keys FOR EACH ROW EXECUTE FUNCTION note_isolation()`,
	} {
		if _, err := conn.Exec(context.Background(), sql); err != nil {
			t.Fatal(err)
		}
	}
	var level string
	if err := conn.QueryRow(context.Background(), `SHOW default_transaction_isolation`).Scan(&level); err != nil || level != "serializable" {
		t.Fatalf("the database's default isolation = %q, %v; want serializable", level, err)
	}

	if err := db.WriteUses(map[int64]time.Time{p.TokenID: time.Now()}); err != nil {
		t.Fatal(err)
	}
	var levels []string
	rows, _ := conn.Query(context.Background(), `SELECT level FROM seen_isolation`)
	levels, err = pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil || len(levels) != 1 || levels[0] != "read committed" {
		t.Errorf("the flush's update ran at %v, %v; want once at read committed", levels, err)
	}
}
