package testkit

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/cli"
	"github.com/voiceapi/voiceapi/internal/pgtest"
	"github.com/voiceapi/voiceapi/postgres"
	"github.com/voiceapi/voiceapi/server"
	"github.com/voiceapi/voiceapi/service"
	"github.com/voiceapi/voiceapi/webhook"
)

// Replica is one of several servers sharing one PostgreSQL database, each with its own
// engine (pool, caches, id generator), services, webhook dispatcher and HTTP server:
// what separate processes behind a load balancer would be, in one test.
type Replica struct {
	*Server
	PG *postgres.DB
	// Dispatcher posts this replica's claimed webhook deliveries; StopDispatcher cuts it.
	Dispatcher *webhook.Dispatcher
	// Jobs is this replica's job runner, started as serve starts it (url fetches).
	Jobs *service.JobRunner
}

// ReplicaOptions tune NewReplicas.
type ReplicaOptions struct {
	// Configure adjusts each replica's server (rate limits, ...).
	Configure func(*server.Config)
	// Lease is the dispatchers' delivery lease; webhook's default when 0.
	Lease time.Duration
	// Now is every replica's clock; time.Now when nil.
	Now func() time.Time
	// URL is the database the replicas share (an empty one, on a cluster the test
	// controls); a new database of the package's shared cluster when empty.
	URL string
	// Prepare adjusts each replica's services before its server starts (a conversation's
	// model clients, say).
	Prepare func(*service.Services)
	// JobPoll is the job runners' poll; service's default when 0.
	JobPoll time.Duration
}

// NewReplicas starts n replicas on one new database. The owner account is created
// through the first; every replica's Owner is the same account.
func NewReplicas(t testing.TB, n int, o ReplicaOptions) []*Replica {
	t.Helper()
	url := o.URL
	if url == "" {
		url = pgtest.Database(t)
	}
	var out []*Replica
	for i := range n {
		logs := &SyncBuffer{}
		logger := slog.New(slog.NewJSONHandler(logs, nil))
		db := OpenPostgres(t, func(po *postgres.Options) { po.URL, po.Logger, po.Now = url, logger, o.Now })
		svc := cli.NewServices(db)
		if o.Prepare != nil {
			o.Prepare(svc)
		}
		d := webhook.NewDispatcher(svc.Deliveries, webhook.Config{AllowPrivate: true, Logger: logger, Lease: o.Lease, Now: o.Now})
		db.SetEventHook(d.Wake)
		d.Start(context.Background())
		t.Cleanup(func() {
			db.SetEventHook(nil)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			d.Stop(ctx)
		})
		srv := cli.NewServerOn(db, svc, logger, func(c *server.Config) {
			c.AllowPrivateURLs = true
			if o.Configure != nil {
				o.Configure(c)
			}
		})
		jobs := svc.Jobs.NewRunner(service.RunnerOptions{Poll: o.JobPoll, Now: o.Now})
		jobs.Start(context.Background())
		t.Cleanup(func() { jobs.Stop(context.Background()) })
		hs := httptest.NewServer(srv.Handler())
		t.Cleanup(hs.Close)
		s := &Server{Env: &Env{Store: db, Svc: svc}, T: t, URL: hs.URL, Dir: t.TempDir(), Logs: logs}
		if i == 0 {
			s.Owner = s.NewUser("owner@example.com", true)
		} else {
			s.Owner = out[0].Owner
		}
		out = append(out, &Replica{Server: s, PG: db, Dispatcher: d, Jobs: jobs})
	}
	return out
}
