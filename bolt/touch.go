package bolt

import (
	"time"

	"go.etcd.io/bbolt"
)

// writeUses records a batch of API key uses (internal/lastused) in one transaction.
func (db *DB) writeUses(batch map[int64]time.Time) error {
	return db.bolt.Update(func(tx *bbolt.Tx) error {
		for id, at := range batch {
			if err := touchAPIKey(tx, id, at); err != nil {
				return err
			}
		}
		return nil
	})
}
