package postgres

import (
	"context"
	"fmt"

	"github.com/voiceapi/voiceapi/service"
)

var _ service.RevisionReader = (*DB)(nil)

// TokenRevisions implements service.RevisionReader: the three revisions an
// authentication checks its cached token by, in one statement on a pooled connection
// (one round trip, where a View costs five: BEGIN, three reads, COMMIT). One statement
// reads one snapshot, so the three are as consistent as in a transaction.
func (db *DB) TokenRevisions(ctx context.Context, id int64, userID, workspaceID string) (key, user, member uint64, err error) {
	var k, u, m int64
	err = db.pool.QueryRow(ctx, `SELECT
		COALESCE((SELECT revision FROM api_keys WHERE id = $1), 0),
		COALESCE((SELECT revision FROM users WHERE id = $2), 0),
		COALESCE((SELECT revision FROM members WHERE workspace_id = $3 AND user_id = $2), 0)`,
		id, userID, workspaceID).Scan(&k, &u, &m)
	return uint64(k), uint64(u), uint64(m), err
}

// AgentRevision implements service.RevisionReader: tx.AgentRevision's statement, outside
// a transaction (one round trip instead of three).
func (db *DB) AgentRevision(ctx context.Context, id string) (uint64, error) {
	var rev int64
	if err := db.pool.QueryRow(ctx, `SELECT revision FROM agents WHERE id = $1`, id).Scan(&rev); err != nil {
		return 0, noRows(err)
	}
	return uint64(rev), nil
}

var _ service.AgentRevisionsTx = (*tx)(nil)

// AgentRevisions implements service.AgentRevisionsTx: the revisions of ids in one
// statement, in the order of ids (0 for an absent agent).
func (t *tx) AgentRevisions(ids []string) ([]uint64, error) {
	rows, err := t.query(`SELECT coalesce(a.revision, 0) FROM unnest($1::text[]) WITH ORDINALITY AS i(id, n)
		LEFT JOIN agents a ON a.id = i.id COLLATE "C" ORDER BY i.n`, ids)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make([]uint64, 0, len(ids))
	for rows.Next() {
		var rev int64
		if err := rows.Scan(&rev); err != nil {
			return nil, err
		}
		out = append(out, uint64(rev))
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(out) != len(ids) {
		return nil, fmt.Errorf("postgres: %d revisions for %d agents", len(out), len(ids))
	}
	return out, nil
}
