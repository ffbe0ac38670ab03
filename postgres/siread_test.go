package postgres_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"golang.org/x/crypto/bcrypt"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/pgtest"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/postgres"
)

// An agent's rename by a request's token, on a small database whose statistics are
// known (ANALYZE, as autovacuum runs it): every predicate lock it leaves is an index
// page's or a row's, none a whole table's. The planner picks a sequential scan for a
// point lookup on a table of a page or two, and SSI locks a sequential scan's read as
// the whole relation: the write then conflicted with every write of any other
// workspace that changed a row of the same table (event_heads, agents, users...), about
// one serialization failure a write between separate workspaces (docs/performance.md).
// The agent is read first on the one connection the write uses: PostgreSQL does not
// re-plan a cached statement when enable_seqscan changes, so without the write's custom
// plans it ran the read's cached sequential scan and locked agents whole.
// A committed SERIALIZABLE transaction's predicate locks stay while a transaction that
// overlapped it runs: one is held open for pg_locks to show the write's.
func TestWriteTakesNoWholeTablePredicateLock(t *testing.T) {
	ctx := context.Background()
	url := pgtest.Database(t)
	db, err := postgres.Open(ctx, postgres.Options{URL: url, PasswordCost: bcrypt.MinCost, SecretKey: testkit.SecretKey, MaxConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	svc := testkit.Services(t, db, nil)
	var accounts []*testkit.Account
	var agents []string
	for w := range 3 {
		acc := testkit.NewAccount(t, svc, fmt.Sprintf("writer%d@example.com", w), false)
		pctx := data.WithPrincipal(ctx, &data.Principal{UserID: acc.ID, WorkspaceID: acc.WorkspaceID,
			CurrentWorkspaceID: acc.WorkspaceID, Role: data.RoleOwner, Modules: data.Modules})
		a, err := svc.Agents.CreateAgent(pctx, data.AgentCreate{Name: data.Some("agent")})
		if err != nil {
			t.Fatal(err)
		}
		accounts, agents = append(accounts, acc), append(agents, a.ID)
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "ANALYZE"); err != nil {
		t.Fatal(err)
	}
	overlap, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer overlap.Close(ctx)
	if _, err := overlap.Exec(ctx, "BEGIN ISOLATION LEVEL SERIALIZABLE; SELECT 1"); err != nil {
		t.Fatal(err)
	}
	p, err := svc.Auth.Authenticate(ctx, accounts[0].Token)
	if err != nil {
		t.Fatal(err)
	}
	// Reads first, on the one connection the write then uses: a plan cached for a read
	// (sequential scans allowed) must not serve the write.
	pctx := data.WithPrincipal(ctx, p)
	for range 10 {
		if _, err := svc.Agents.Agent(pctx, agents[0]); err != nil {
			t.Fatal(err)
		}
		if _, _, err := svc.Agents.ListAgents(pctx, data.AgentFilter{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := svc.Agents.UpdateAgent(data.WithPrincipal(ctx, p), agents[0], data.AgentUpdate{Name: data.Some("renamed")}); err != nil {
		t.Fatal(err)
	}
	rows, err := conn.Query(ctx, `SELECT locktype, relation::regclass::text FROM pg_locks
		WHERE mode = 'SIReadLock' AND relation IS NOT NULL ORDER BY 2, 1`)
	if err != nil {
		t.Fatal(err)
	}
	type lock struct{ Kind, Relation string }
	locks, err := pgx.CollectRows(rows, pgx.RowToStructByPos[lock])
	if err != nil {
		t.Fatal(err)
	}
	var whole []string
	for _, l := range locks {
		if l.Kind == "relation" {
			whole = append(whole, l.Relation)
		}
	}
	if len(locks) == 0 {
		t.Fatal("no predicate lock of the write seen: the test shows nothing")
	}
	if len(whole) > 0 {
		t.Errorf("the write holds predicate locks on whole tables %s, want index pages and rows only; all: %v", strings.Join(whole, ", "), locks)
	}
}
