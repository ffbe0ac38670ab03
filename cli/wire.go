package cli

import (
	"log/slog"

	"github.com/voiceapi/voiceapi/bolt"
	"github.com/voiceapi/voiceapi/server"
	"github.com/voiceapi/voiceapi/service"
)

// Services wires the storage into the server's service interfaces: the service layer for
// the resources that have moved there, the storage's own methods for the others.
func Services(db *bolt.DB) server.Services {
	svc := NewServices(db)
	return server.Services{
		Auth:           svc.Auth,
		Users:          svc.Users,
		Workspaces:     svc.Workspaces,
		WorkspaceUsers: svc.WorkspaceUsers,
		Idempotency:    svc.Idempotency,
		Agents:         db,
		KnowledgeBases: svc.KnowledgeBases,
		Catalog:        db.Catalog(),
		Webhooks:       db,
		Audit:          db,
		Backup:         db,
		Ready:          db.Ping,
		Numbers:        db, Calls: db, Analytics: db, Subscriptions: db,
		Exports: db,
	}
}

// NewServices builds the service layer on db, with the clock, catalog, logger, bcrypt
// cost and login lifetime db was opened with.
func NewServices(db *bolt.DB) *service.Services {
	o := db.Options()
	svc, err := service.New(db, service.Options{
		Now: o.Now, Sealer: db.Sealer(), Catalog: o.Catalog, Logger: o.Logger,
		PasswordCost: o.PasswordCost, LoginTTL: o.LoginTTL, IDs: db.IDs(),
		Knowledge: o.Knowledge, CheckURL: server.CheckOutboundURL,
	})
	if err != nil {
		panic(err) // only a missing sealer fails, and an open db always has one
	}
	return svc
}

// NewServer builds the HTTP server on db. Each configure function, when given, adjusts
// the configuration (rate limits, ...) before the server is built; without any, nothing
// is rate-limited.
func NewServer(db *bolt.DB, logger *slog.Logger, configure ...func(*server.Config)) *server.Server {
	cfg := server.Config{Logger: logger, DBStats: dbStats(db)}
	for _, f := range configure {
		f(&cfg)
	}
	return server.New(Services(db), cfg)
}
