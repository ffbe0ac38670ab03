package cli

import (
	"log/slog"

	"github.com/voiceapi/voiceapi/bolt"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/netguard"
	"github.com/voiceapi/voiceapi/server"
	"github.com/voiceapi/voiceapi/service"
)

// Services wires the storage into the server's service interfaces: the service layer for
// the resources that have moved there, the storage's own methods for the others.
func Services(db Backend) server.Services {
	return ServicesOn(db, NewServices(db))
}

// ServicesOn is Services with the service layer svc built on db (serve shares it with
// the webhook dispatcher).
func ServicesOn(db Backend, svc *service.Services) server.Services {
	return server.Services{
		Auth:           svc.Auth,
		Users:          svc.Users,
		Workspaces:     svc.Workspaces,
		WorkspaceUsers: svc.WorkspaceUsers,
		Idempotency:    svc.Idempotency,
		Agents:         svc.Agents,
		KnowledgeBases: svc.KnowledgeBases,
		Catalog:        db.Catalog(),
		Webhooks:       svc.Webhooks,
		Audit:          svc.Audit,
		Backup:         svc.Backup,
		Ready:          db.Ping,
		Numbers:        svc.Numbers, Calls: svc.Calls, Analytics: svc.Analytics, Subscriptions: svc.Subscriptions,
		Exports: svc.Exports, Conversations: svc.Conversations,
		AnalysisFigures: svc.Analytics, Prices: svc.Prices, Analysis: svc.Analysis,
		Jobs: svc.Jobs, AgentTests: svc.AgentTests, TestRuns: svc.TestRuns,
		CallStart: svc.CallStart, Rollouts: svc.Rollouts,
		Campaigns: svc.Campaigns, Suppressions: svc.Suppressions,
	}
}

// NewServices builds the service layer on db, with the clock, catalog, logger, bcrypt
// cost and login lifetime db was opened with, and the SSRF guard's check for
// client-supplied URLs.
func NewServices(db Backend) *service.Services {
	o := db.ServiceOptions()
	o.URLGuard = netguard.CheckURL
	svc, err := service.New(db, o)
	if err != nil {
		panic(err) // only a missing sealer fails, and an open db always has one
	}
	return svc
}

// NewServer builds the HTTP server on db. Each configure function, when given, adjusts
// the configuration (rate limits, ...) before the server is built; without any, nothing
// is rate-limited.
func NewServer(db Backend, logger *slog.Logger, configure ...func(*server.Config)) *server.Server {
	return NewServerOn(db, NewServices(db), logger, configure...)
}

// NewServerOn is NewServer over the service layer svc built on db, so that the server and
// the webhook dispatcher share one.
func NewServerOn(db Backend, svc *service.Services, logger *slog.Logger, configure ...func(*server.Config)) *server.Server {
	cfg := server.Config{Logger: logger}
	if b, ok := db.(*bolt.DB); ok {
		cfg.DBStats = dbStats(b)
	}
	if rc, ok := db.(data.RateCounter); ok {
		cfg.RateCounter = rc // the replicas' shared counts (PostgreSQL)
	}
	for _, f := range configure {
		f(&cfg)
	}
	return server.New(ServicesOn(db, svc), cfg)
}
