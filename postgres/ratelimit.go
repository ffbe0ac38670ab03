package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/voiceapi/voiceapi/data"
)

var _ data.RateCounter = (*DB)(nil)

// CountRequest implements data.RateCounter on an UNLOGGED table: one statement per
// request, which writes no WAL and so waits for no disk flush; the counts are lost in a
// database crash, which only resets the current minute's windows.
func (db *DB) CountRequest(ctx context.Context, key string, start time.Time, limit int) (int, bool, error) {
	var count int
	err := db.pool.QueryRow(ctx, `
		INSERT INTO rate_windows AS w (key, window_start, count) VALUES ($1, $2, 1)
		ON CONFLICT (key, window_start) DO UPDATE SET count = w.count + 1 WHERE w.count < $3
		RETURNING count`, key, start, limit).Scan(&count)
	if errors.Is(err, pgx.ErrNoRows) {
		return limit, false, nil // the window is full: refused, not counted
	}
	if err != nil {
		return 0, false, err
	}
	if count == 1 {
		// The first request of a window clears the windows that ended before the last
		// one, so the table holds about two minutes of keys.
		if _, err := db.pool.Exec(ctx, `DELETE FROM rate_windows WHERE window_start < $1`, start.Add(-time.Minute)); err != nil {
			db.log.Warn("rate limit: clearing old windows", "error", err)
		}
	}
	return count, true, nil
}
