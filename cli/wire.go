package cli

import (
	"log/slog"

	"github.com/voiceapi/voiceapi/bolt"
	"github.com/voiceapi/voiceapi/server"
)

// Services wires the storage into the server's service interfaces.
func Services(db *bolt.DB) server.Services {
	return server.Services{
		Auth:           db,
		Users:          db,
		Workspaces:     db,
		WorkspaceUsers: db,
		Idempotency:    db,
		Agents:         db,
		KnowledgeBases: db,
		Catalog:        db.Catalog(),
		Webhooks:       db,
		Audit:          db,
		Backup:         db,
		Ready:          db.Ping,
		Numbers:        db, Calls: db, Analytics: db, Subscriptions: db,
		Exports: db,
	}
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
