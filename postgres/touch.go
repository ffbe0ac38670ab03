package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/voiceapi/voiceapi/data"
)

// MarkAPIKeyUsed implements service.KeyUseRecorder: db.touch writes last_used_at in
// batches (internal/lastused). Replicas flush independently; the newest use wins.
func (db *DB) MarkAPIKeyUsed(id int64, at time.Time) { db.touch.Mark(id, at) }

// writeUses writes a batch of uses in one statement, outside any transaction of the
// service's: it touches only last_used_at, never earlier than what is stored (another
// replica may have written a later use), and skips keys revoked meanwhile.
//
// It passes the fence (writeOnce): a newer binary's migration may have changed api_keys,
// and a replica that stepped aside writes nothing of its own rules into it.
//
// It runs at READ COMMITTED whatever the database's default_transaction_isolation
// (writeOnce's, as every statement outside an Update: readCommittedSessions): every write's
// access re-check reads these rows in its SERIALIZABLE transaction, and a SERIALIZABLE
// flush would join their predicate-lock graph: writes of separate workspaces failed and
// ran again nearly twice as often, and flushes failed (docs/performance.md). At READ
// COMMITTED PostgreSQL tracks none of its reads or writes.
func (db *DB) writeUses(batch map[int64]time.Time) error {
	ids := make([]int64, 0, len(batch))
	ats := make([]time.Time, 0, len(batch))
	for id, at := range batch {
		ids, ats = append(ids, id), append(ats, at.UTC().Truncate(time.Millisecond))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := db.writeOnce(ctx, func(t *tx) error {
		_, err := t.exec(`UPDATE api_keys k SET last_used_at = u.at
		FROM unnest($1::bigint[], $2::timestamptz[]) AS u(id, at)
		WHERE k.id = u.id AND (k.last_used_at IS NULL OR k.last_used_at < u.at)`, ids, ats)
		return err
	})
	if errors.Is(err, data.ErrStorageSuperseded) {
		return nil // a fenced replica's uses are dropped (informational), logged once by the fence
	}
	return err
}
