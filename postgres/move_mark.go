package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// ErrMoveUnfinished is returned by Open on a database that a move of a single node
// (`voiceapi migrate --from-data`) was filling when it stopped: it holds part of the
// installation, and replicas started on it would serve that part as if it were all.
var ErrMoveUnfinished = errors.New("a move into this database did not finish")

// moveMark names the meta row a move holds from its first write to its last: the move
// writes in transactions of bounded size, so a move killed (or whose connection or
// terminal went) between two leaves records without the rest, and nothing else tells.
const moveMark = "move_unfinished"

// BeginMove marks the database as the destination of a move under way, in the
// transaction that checks it holds no accounts yet (service.MoveInstallation).
func (db *DB) BeginMove(ctx context.Context) error {
	return db.writeOnce(ctx, func(t *tx) error {
		n, err := t.CountUsers()
		if err != nil {
			return err
		}
		if n > 0 {
			return errors.New("the destination already holds accounts: a move goes into an empty database")
		}
		_, err = t.exec(`INSERT INTO meta (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING`,
			moveMark, []byte(time.Now().UTC().Format(time.RFC3339)))
		return err
	})
}

// EndMove clears the mark once every record and file of the move is in place.
func (db *DB) EndMove(ctx context.Context) error {
	return db.writeOnce(ctx, func(t *tx) error {
		_, err := t.exec(`DELETE FROM meta WHERE name = $1`, moveMark)
		return err
	})
}

// checkMoveFinished refuses a database still marked by a move (startRows).
func checkMoveFinished(t *tx) error {
	var began []byte
	err := t.queryRow(`SELECT value FROM meta WHERE name = $1`, moveMark).Scan(&began)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("postgres: reading the move mark: %w", err)
	}
	return fmt.Errorf("%w (begun %s): it holds only part of the installation. Drop the database, create it again empty and run `voiceapi migrate --from-data` again; the installation's data directory is unchanged",
		ErrMoveUnfinished, began)
}
