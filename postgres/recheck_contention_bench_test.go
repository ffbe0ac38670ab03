package postgres_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"golang.org/x/crypto/bcrypt"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/pgtest"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/postgres"
	"github.com/voiceapi/voiceapi/service"
)

// BenchmarkRecheckContention measures what every write's access re-check (conventions
// §20: the key's, user's and membership's revisions read inside the SERIALIZABLE write)
// costs under contention: VOICEAPI_BENCH_CLIENTS writers (16) each rename their own agent
// at once, every write authenticated as a request is, while last_used_at of the keys is
// written every millisecond by the engine's own flush (it runs every 5 s per replica:
// this is far more, to give the re-check's reads every chance to conflict;
// touch-failures counts the flushes that failed). recheck=off gives the writes a principal without revisions (as a caller not
// built from a stored token), which the service does not re-check. retries/op counts the
// serialization failures and deadlocks PostgreSQL logged, each a retry of Update's loop.
//
//	go test ./postgres -run '^$' -bench BenchmarkRecheckContention -benchtime 800x
//
// one-workspace: one key, one workspace (its writes take turns under its lock);
// own-workspaces: each writer its own key and workspace (nothing serializes them but SSI).
// VOICEAPI_BENCH_SERIALIZABLE_DEFAULT=1 runs on a database whose connections default to
// SERIALIZABLE (default_transaction_isolation, as an operator may set it); since every
// pool's sessions start at READ COMMITTED (db.go readCommittedSessions), the engine's
// statements no longer follow it, so its figures are the default's.
// VOICEAPI_BENCH_ANALYZE=1 runs ANALYZE before the writes, as autovacuum does on a live
// database: the planner then knows how small the tables are (their plans, and so their
// predicate locks, may differ).
func BenchmarkRecheckContention(b *testing.B) {
	for _, shared := range []bool{true, false} {
		for _, recheck := range []bool{true, false} {
			name := fmt.Sprintf("own-workspaces/recheck=%s", onOff(recheck))
			if shared {
				name = fmt.Sprintf("one-workspace/recheck=%s", onOff(recheck))
			}
			b.Run(name, func(b *testing.B) { benchRecheckContention(b, shared, recheck) })
		}
	}
}

func onOff(on bool) string {
	if on {
		return "on"
	}
	return "off"
}

func benchRecheckContention(b *testing.B, shared, recheck bool) {
	clients := testkit.BenchClients()
	url := pgtest.Database(b)
	if os.Getenv("VOICEAPI_BENCH_SERIALIZABLE_DEFAULT") == "1" {
		url += "&default_transaction_isolation=serializable"
	}
	db, err := postgres.Open(context.Background(), postgres.Options{URL: url, PasswordCost: bcrypt.MinCost, SecretKey: testkit.SecretKey})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	svc := testkit.Services(b, db, nil)
	tokens, agents := recheckWriters(b, svc, clients, shared)
	keys := make([]int64, len(tokens))
	for i, tok := range tokens {
		p, err := svc.Auth.Authenticate(context.Background(), tok)
		if err != nil {
			b.Fatal(err)
		}
		keys[i] = p.TokenID
	}

	if os.Getenv("VOICEAPI_BENCH_ANALYZE") == "1" {
		analyze(b, url)
	}
	stop := touchKeys(db, keys)
	before := retriesLogged(b)
	b.ResetTimer()
	res, err := testkit.RunLoad(clients, b.N, func(c, i int) error {
		p, err := svc.Auth.Authenticate(context.Background(), tokens[c%len(tokens)])
		if err != nil {
			return err
		}
		if !recheck {
			p.Access = data.AccessRevisions{}
		}
		ctx := data.WithPrincipal(context.Background(), p)
		_, err = svc.Agents.UpdateAgent(ctx, agents[c], data.AgentUpdate{Name: data.Some(fmt.Sprint("writer ", c, " round ", i))})
		return err
	}, nil)
	b.StopTimer()
	touchFailures := stop()
	if err != nil {
		b.Fatal(err)
	}
	res.Report(b)
	b.ReportMetric(float64(retriesLogged(b)-before)/float64(b.N), "retries/op")
	b.ReportMetric(float64(touchFailures), "touch-failures")
}

// analyze gathers the statistics of url's database.
func analyze(b *testing.B, url string) {
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), "ANALYZE"); err != nil {
		b.Fatal(err)
	}
}

// recheckWriters makes n agents, one a writer, and the writers' tokens: one owner's key
// in one workspace when shared, else one user (its personal workspace, its key) a writer.
func recheckWriters(b *testing.B, svc *service.Services, n int, shared bool) (tokens, agents []string) {
	owner := testkit.NewAccount(b, svc, "owner@example.com", false)
	for w := range n {
		acc := owner
		if !shared {
			acc = testkit.NewAccount(b, svc, fmt.Sprintf("writer%d@example.com", w), false)
		}
		if w == 0 || !shared {
			tokens = append(tokens, acc.Token)
		}
		ctx := data.WithPrincipal(context.Background(), &data.Principal{UserID: acc.ID, WorkspaceID: acc.WorkspaceID,
			CurrentWorkspaceID: acc.WorkspaceID, Role: data.RoleOwner, Modules: data.Modules})
		a, err := svc.Agents.CreateAgent(ctx, data.AgentCreate{Name: data.Some(fmt.Sprint("writer ", w))})
		if err != nil {
			b.Fatal(err)
		}
		agents = append(agents, a.ID)
	}
	return tokens, agents
}

// touchKeys records a use of every key of keys every millisecond through db's own
// flush of last_used_at (touch.go), until the returned function is called; that returns
// how many flushes failed.
func touchKeys(db *postgres.DB, keys []int64) (stop func() int) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	failed := 0
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			batch := make(map[int64]time.Time, len(keys))
			for _, id := range keys {
				batch[id] = time.Now()
			}
			if err := db.WriteUses(batch); err != nil {
				failed++
			}
		}
	}()
	return func() int { close(done); wg.Wait(); return failed }
}

// retriesLogged counts the serialization failures and deadlocks the package's cluster
// logged: each made an Update run again.
func retriesLogged(b *testing.B) int {
	log, err := pgtest.SharedLog()
	if err != nil {
		b.Fatal(err)
	}
	return bytes.Count(log, []byte("could not serialize access")) + bytes.Count(log, []byte("deadlock detected"))
}
