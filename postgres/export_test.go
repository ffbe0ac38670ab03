package postgres

import (
	"context"
	"time"

	"github.com/voiceapi/voiceapi/service"
)

// WriteUses writes a batch of API key uses as the engine's flush does (touch.go).
func (db *DB) WriteUses(batch map[int64]time.Time) error { return db.writeUses(batch) }

// Querier runs statements in a transaction (tx.go querier).
type Querier = querier

// InWrite runs fn in a SERIALIZABLE write transaction begun as the service's writes
// begin, on the connection they run on.
func (db *DB) InWrite(ctx context.Context, fn func(q Querier) error) error {
	return db.Update(ctx, func(stx service.Tx) error {
		t := stx.(*tx)
		if err := t.begin(); err != nil {
			return err
		}
		return fn(t.q)
	})
}
