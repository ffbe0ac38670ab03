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
// The agent is read first, as requests do: when reads and writes shared connections,
// PostgreSQL did not re-plan a read's cached sequential scan for a write that turned
// enable_seqscan off, and the rename locked agents whole. Writes now run on sessions of
// their own (TestWriteConnectionsCacheIndexPlans).
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
	// Reads first: a plan cached for a read (sequential scans allowed) must not serve the
	// write.
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

// SERIALIZABLE writes run on sessions that start with enable_seqscan off (the writes'
// pool), so every plan those connections cache is made without sequential scans and
// writes keep their cached plans. After ANALYZE (the planner then knows the tables are a
// page or two) and a dozen renames of one agent on the one write connection, that
// session's own value of enable_seqscan (reset_val: not one a transaction set) is off, and
// the generic plans it cached for the writes' point lookups are index plans. Set per
// transaction instead (before), the session's value was on, and each write forced custom
// plans to avoid a read's cached ones, at about 0.5 ms a write (docs/performance.md).
func TestWriteConnectionsCacheIndexPlans(t *testing.T) {
	ctx := context.Background()
	url := pgtest.Database(t)
	// A pool of 2 is one read and one write connection: every write below runs on the
	// session inspected.
	db, err := postgres.Open(ctx, postgres.Options{URL: url, PasswordCost: bcrypt.MinCost, SecretKey: testkit.SecretKey, MaxConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	svc := testkit.Services(t, db, nil)
	acc := testkit.NewAccount(t, svc, "writer@example.com", false)
	owner := data.WithPrincipal(ctx, &data.Principal{UserID: acc.ID, WorkspaceID: acc.WorkspaceID,
		CurrentWorkspaceID: acc.WorkspaceID, Role: data.RoleOwner, Modules: data.Modules})
	agent, err := svc.Agents.CreateAgent(owner, data.AgentCreate{Name: data.Some("agent")})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "ANALYZE"); err != nil {
		t.Fatal(err)
	}
	p, err := svc.Auth.Authenticate(ctx, acc.Token)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 12 {
		if _, err := svc.Agents.UpdateAgent(data.WithPrincipal(ctx, p), agent.ID, data.AgentUpdate{Name: data.Some(fmt.Sprint("renamed ", i))}); err != nil {
			t.Fatal(err)
		}
	}
	err = db.InWrite(ctx, func(q postgres.Querier) error {
		var now, session string
		if err := q.QueryRow(ctx, `SELECT setting, reset_val FROM pg_settings WHERE name = 'enable_seqscan'`).Scan(&now, &session); err != nil {
			return err
		}
		if now != "off" || session != "off" {
			t.Errorf("a write's enable_seqscan = %s, its session's %s; want off and off", now, session)
		}
		rows, err := q.Query(ctx, `SELECT name, statement, cardinality(parameter_types) FROM pg_prepared_statements
			WHERE generic_plans > 0 AND statement ~ 'FROM (agents|event_heads|api_keys|users|members)\M'`)
		if err != nil {
			return err
		}
		type cached struct {
			Name, Statement string
			Params          int
		}
		plans, err := pgx.CollectRows(rows, pgx.RowToStructByPos[cached])
		if err != nil {
			return err
		}
		if len(plans) == 0 {
			t.Error("the write connection cached no generic plan for the writes' lookups: each statement was planned anew")
		}
		for _, c := range plans {
			args := strings.TrimSuffix(strings.Repeat("NULL, ", c.Params), ", ")
			rows, err := q.Query(ctx, "EXPLAIN EXECUTE "+c.Name+"("+args+")")
			if err != nil {
				return err
			}
			lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
			if err != nil {
				return err
			}
			plan := strings.Join(lines, "\n")
			if strings.Contains(plan, "Seq Scan") {
				t.Errorf("the cached plan of %s\nscans a table:\n%s", c.Statement, plan)
			}
		}
		t.Logf("%d cached generic plans inspected", len(plans))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
