package postgres

import "time"

// WriteUses writes a batch of API key uses as the engine's flush does (touch.go).
func (db *DB) WriteUses(batch map[int64]time.Time) error { return db.writeUses(batch) }
