package postgres_test

import (
	"context"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/voiceapi/voiceapi/cli"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/postgres"
	"github.com/voiceapi/voiceapi/service"
)

// revisionFixture is a database with an administrator, an API key of theirs and an agent
// in their workspace, and the services over it.
type revisionFixture struct {
	db    *postgres.DB
	svc   *service.Services
	ctx   context.Context
	pctx  context.Context // as the owner
	user  *data.User
	ws    string
	key   *data.APIKey
	agent *data.Agent
}

func newRevisionFixture(t testing.TB) revisionFixture {
	t.Helper()
	f := revisionFixture{db: testkit.OpenPostgres(t, nil), ctx: context.Background()}
	f.svc = cli.NewServices(f.db)
	u, err := f.svc.Users.CreateUser(f.ctx, data.UserCreate{Name: "Rev", Email: "rev@example.com", Password: "password-123456", IsAdmin: true})
	if err != nil {
		t.Fatal(err)
	}
	f.user, f.ws = u, u.PersonalWorkspaceID
	if f.key, _, err = f.svc.Auth.CreateAPIKeyFor(f.ctx, u.ID, f.ws, data.APIKeyCreate{Name: "k"}); err != nil {
		t.Fatal(err)
	}
	f.pctx = data.WithPrincipal(f.ctx, &data.Principal{UserID: u.ID, IsAdmin: true, WorkspaceID: f.ws, CurrentWorkspaceID: f.ws, Role: data.RoleOwner, Modules: data.Modules})
	if f.agent, err = f.svc.Agents.CreateAgent(f.pctx, data.AgentCreate{Name: data.Some("A")}); err != nil {
		t.Fatal(err)
	}
	return f
}

// The one-statement revision reads (service.RevisionReader) give what the same reads in
// a transaction give, for present rows, after each row changes, and once they are gone.
func TestRevisionReaderMatchesTransactions(t *testing.T) {
	f := newRevisionFixture(t)
	db, svc, ctx, u, ws, key, pctx, agent := f.db, f.svc, f.ctx, f.user, f.ws, f.key, f.pctx, f.agent
	check := func(stage string, wantKey, wantAgent bool) {
		t.Helper()
		var k, us, m, a uint64
		err := db.View(ctx, func(tx service.Tx) error {
			var err error
			if k, err = tx.APIKeyRevision(key.ID); err != nil {
				return err
			}
			if us, err = tx.UserRevision(u.ID); err != nil {
				return err
			}
			if m, err = tx.MemberRevision(ws, u.ID); err != nil {
				return err
			}
			a, err = tx.AgentRevision(agent.ID)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		var batch []uint64
		err = db.View(ctx, func(tx service.Tx) error {
			var err error
			batch, err = tx.(service.AgentRevisionsTx).AgentRevisions([]string{agent.ID, "agt_none", agent.ID})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(batch) != 3 || batch[0] != a || batch[1] != 0 || batch[2] != a {
			t.Errorf("%s: AgentRevisions = %v, want [%d 0 %d]", stage, batch, a, a)
		}
		tr, err := db.TokenRevisions(ctx, key.ID, u.ID, ws)
		if err != nil {
			t.Fatal(err)
		}
		gk, gu, gm := tr.Key, tr.User, tr.Member
		ga, err := db.AgentRevision(ctx, agent.ID, 0)
		if err != nil {
			t.Fatal(err)
		}
		if gk != k || gu != us || gm != m || ga != a {
			t.Errorf("%s: one statement reads key %d user %d member %d agent %d; a transaction %d %d %d %d", stage, gk, gu, gm, ga, k, us, m, a)
		}
		if (gk != 0) != wantKey || (ga != 0) != wantAgent || gu == 0 || gm == 0 {
			t.Errorf("%s: key %d, user %d, member %d, agent %d: a present row reads 0 or an absent one not", stage, gk, gu, gm, ga)
		}
	}
	check("created", true, true)
	beforeRevs, _ := db.TokenRevisions(ctx, key.ID, u.ID, ws)
	before := beforeRevs.Key
	beforeAgent, _ := db.AgentRevision(ctx, agent.ID, 0)
	if _, err := svc.Agents.UpdateAgent(pctx, agent.ID, data.AgentUpdate{Name: data.Some("B")}); err != nil {
		t.Fatal(err)
	}
	if after, _ := db.AgentRevision(ctx, agent.ID, 0); after == beforeAgent {
		t.Errorf("an updated agent keeps revision %d", after)
	}
	check("agent updated", true, true)
	if err := svc.Auth.DeleteAPIKey(pctx, key.ID); err != nil {
		t.Fatal(err)
	}
	if before == 0 {
		t.Fatal("the key read 0 before it was revoked")
	}
	check("key revoked", false, true)
	if err := svc.Agents.DeleteAgent(pctx, agent.ID); err != nil {
		t.Fatal(err)
	}
	check("agent deleted", false, false)
	if r, err := db.TokenRevisions(ctx, 424242, "usr_none", "ws_none"); err != nil || r.Key != 0 || r.User != 0 || r.Member != 0 {
		t.Errorf("absent rows: %+v, %v", r, err)
	}
}

// viewCounter is the engine with its View calls counted: what the services do with it is
// the engine's own behaviour.
type viewCounter struct {
	*postgres.DB
	views atomic.Int64
}

func (v *viewCounter) View(ctx context.Context, fn func(service.Tx) error) error {
	v.views.Add(1)
	return v.DB.View(ctx, fn)
}

// A cached token and a cached agent are confirmed without a transaction: the second
// authentication and GET of an agent open no View; a revoked key still opens one (the
// revisions differ) and is refused.
func TestCachedReadsOpenNoTransaction(t *testing.T) {
	db := testkit.OpenPostgres(t, nil)
	counted := &viewCounter{DB: db}
	svc, err := service.New(counted, db.ServiceOptions())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	u, err := svc.Users.CreateUser(ctx, data.UserCreate{Name: "Rev", Email: "rev@example.com", Password: "password-123456", IsAdmin: true})
	if err != nil {
		t.Fatal(err)
	}
	key, token, err := svc.Auth.CreateAPIKeyFor(ctx, u.ID, u.PersonalWorkspaceID, data.APIKeyCreate{Name: "k"})
	if err != nil {
		t.Fatal(err)
	}
	read := func() (*data.Principal, error) {
		p, err := svc.Auth.Authenticate(ctx, token)
		if err != nil {
			return nil, err
		}
		return p, nil
	}
	p, err := read() // builds the cache entry in a View
	if err != nil {
		t.Fatal(err)
	}
	pctx := data.WithPrincipal(ctx, p)
	a, err := svc.Agents.CreateAgent(pctx, data.AgentCreate{Name: data.Some("A")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Agents.AgentJSON(pctx, a.ID); err != nil { // caches the agent
		t.Fatal(err)
	}
	before := counted.views.Load()
	if _, err := read(); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Agents.AgentJSON(pctx, a.ID); err != nil {
		t.Fatal(err)
	}
	if n := counted.views.Load() - before; n != 0 {
		t.Errorf("a cached token and agent opened %d transactions, want 0", n)
	}
	// A page of agents, cached here, changed through other services on the same
	// database (another replica): the page reads the change.
	if _, _, err := svc.Agents.ListAgentsJSON(pctx, data.AgentFilter{PageRequest: data.PageRequest{PerPage: 100}}); err != nil {
		t.Fatal(err)
	}
	other, err := service.New(db, db.ServiceOptions())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Agents.UpdateAgent(pctx, a.ID, data.AgentUpdate{Name: data.Some("Changed elsewhere")}); err != nil {
		t.Fatal(err)
	}
	page, _, err := svc.Agents.ListAgentsJSON(pctx, data.AgentFilter{PageRequest: data.PageRequest{PerPage: 100}})
	if err != nil {
		t.Fatal(err)
	}
	if len(page) != 1 || !strings.Contains(string(page[0]), "Changed elsewhere") {
		t.Errorf("the page after another replica's change: %s", page)
	}
	if err := svc.Auth.DeleteAPIKey(pctx, key.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := read(); data.ErrorCode(err) != data.EUNAUTHORIZED {
		t.Errorf("a revoked key authenticates: %v", err)
	}
}

// BenchmarkTokenRevisions compares the two ways of confirming a cached token: the three
// revisions read in a View (BEGIN, three statements, COMMIT: five round trips) and in
// one statement (TokenRevisions: one).
func BenchmarkTokenRevisions(b *testing.B) {
	f := newRevisionFixture(b)
	db, ctx, u, ws, key := f.db, f.ctx, f.user, f.ws, f.key
	b.Run("view", func(b *testing.B) {
		for b.Loop() {
			err := db.View(ctx, func(tx service.Tx) error {
				if _, err := tx.APIKeyRevision(key.ID); err != nil {
					return err
				}
				if _, err := tx.UserRevision(u.ID); err != nil {
					return err
				}
				_, err := tx.MemberRevision(ws, u.ID)
				return err
			})
			if err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("one_statement", func(b *testing.B) {
		for b.Loop() {
			if _, err := db.TokenRevisions(ctx, key.ID, u.ID, ws); err != nil {
				b.Fatal(err)
			}
		}
	})
	// 32 goroutines checking at once share statements (revisionBatcher).
	b.Run("shared_32", func(b *testing.B) {
		b.SetParallelism(32 / runtime.GOMAXPROCS(0))
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := db.TokenRevisions(ctx, key.ID, u.ID, ws); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}

// An agent id PostgreSQL cannot hold as text (bytes that are not UTF-8, U+0000) names no
// agent: the shared read answers 0 without sending it. Sent, it failed its statement and
// stayed among the hot agents every later statement reads, so every token check of the
// replica failed after it (GET /api/v1/agents/%ff did that before the server refused it).
func TestRevisionReaderAgentIDNotText(t *testing.T) {
	f := newRevisionFixture(t)
	for _, id := range []string{"agt_\xff", "agt_\x00"} {
		if rev, err := f.db.AgentRevision(f.ctx, id, 0); err != nil || rev != 0 {
			t.Fatalf("AgentRevision(%q) = %d, %v; want 0, nil", id, rev, err)
		}
		if _, err := f.db.TokenRevisions(f.ctx, f.key.ID, f.user.ID, f.ws); err != nil {
			t.Fatalf("after AgentRevision(%q) a token's revisions fail: %v", id, err)
		}
		if rev, err := f.db.AgentRevision(f.ctx, f.agent.ID, 0); err != nil || rev == 0 {
			t.Fatalf("after AgentRevision(%q) the agent's revision is %d, %v", id, rev, err)
		}
	}
}
