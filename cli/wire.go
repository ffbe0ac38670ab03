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
		Ready:          db.Ping,
	}
}

// NewServer builds the HTTP server on db.
func NewServer(db *bolt.DB, logger *slog.Logger) *server.Server {
	return server.New(Services(db), server.Config{Logger: logger})
}
