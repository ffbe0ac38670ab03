package postgres

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

var _ service.RevisionReader = (*DB)(nil)

// TokenRevisions implements service.RevisionReader: the three revisions an
// authentication checks its cached token by, read by one statement (one snapshot, so the
// three are as consistent as in a transaction) that concurrent checks share
// (revisionBatcher).
func (db *DB) TokenRevisions(ctx context.Context, id int64, userID, workspaceID string) (service.TokenRevisions, error) {
	c := &revisionCheck{keyID: id, userID: userID, workspaceID: workspaceID}
	n, err := db.revisions.check(ctx, c)
	if err != nil {
		return service.TokenRevisions{}, unavailableError(err)
	}
	return service.TokenRevisions{Key: c.revs[0], User: c.revs[1], Member: c.revs[2], Read: n}, nil
}

// AgentRevision implements service.RevisionReader: tx.AgentRevision's lookup, outside a
// transaction, taken from a shared statement numbered since or later when one read it,
// else from the next.
func (db *DB) AgentRevision(ctx context.Context, id string, since uint64) (uint64, error) {
	if !utf8.ValidString(id) || strings.IndexByte(id, 0) >= 0 {
		// No agent has such an id, and sent it would fail the shared statement and stay
		// among the hot agents that every later statement of the replica reads.
		return 0, nil
	}
	rev, err := db.revisions.agentSince(ctx, id, since)
	return rev, unavailableError(err)
}

// readRevisions answers a batch of checks with one statement, which also reads the
// agents in hot and returns every agent revision it read. Equal checks (every request
// of one token, or of one hot agent) are asked once. A read that met a dead connection
// (a PostgreSQL restart ends every session) is read again on a fresh one.
func (db *DB) readRevisions(ctx context.Context, batch []*revisionCheck, hot []string) (map[string]uint64, error) {
	for reconnect := 0; ; reconnect++ {
		revs, err := db.readRevisionsOnce(ctx, batch, hot)
		if err == nil || reconnect == maxReconnects || !unavailable(err) || ctx.Err() != nil {
			return revs, err
		}
	}
}

func (db *DB) readRevisionsOnce(ctx context.Context, batch []*revisionCheck, hot []string) (map[string]uint64, error) {
	type tokenKey struct {
		id       int64
		user, ws string
	}
	tokens, agents := map[tokenKey]int{}, map[string]int{}
	var keyIDs []int64
	var userIDs, wsIDs, agentIDs []string
	addAgent := func(id string) {
		if _, ok := agents[id]; !ok {
			agents[id] = len(agentIDs)
			agentIDs = append(agentIDs, id)
		}
	}
	for _, c := range batch {
		if c.agent {
			addAgent(c.agentID)
			continue
		}
		k := tokenKey{c.keyID, c.userID, c.workspaceID}
		if _, ok := tokens[k]; !ok {
			tokens[k] = len(keyIDs)
			keyIDs, userIDs, wsIDs = append(keyIDs, c.keyID), append(userIDs, c.userID), append(wsIDs, c.workspaceID)
		}
	}
	for _, id := range hot {
		addAgent(id)
	}
	rows, err := db.shared.Query(ctx, revisionsSQL, keyIDs, userIDs, wsIDs, agentIDs)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	tokenRevs, agentRevs := make([][3]uint64, len(keyIDs)), make([]uint64, len(agentIDs))
	seen := 0
	for rows.Next() {
		var agent bool
		var n int
		var a, b, c int64
		if err := rows.Scan(&agent, &n, &a, &b, &c); err != nil {
			return nil, err
		}
		if n < 1 || (agent && n > len(agentRevs)) || (!agent && n > len(tokenRevs)) {
			return nil, fmt.Errorf("postgres: revision row %d out of range", n)
		}
		if agent {
			agentRevs[n-1] = uint64(a)
		} else {
			tokenRevs[n-1] = [3]uint64{uint64(a), uint64(b), uint64(c)}
		}
		seen++
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if seen != len(keyIDs)+len(agentIDs) {
		return nil, fmt.Errorf("postgres: %d revision rows for %d checks", seen, len(keyIDs)+len(agentIDs))
	}
	for _, c := range batch {
		if c.agent {
			c.revs[0] = agentRevs[agents[c.agentID]]
		} else {
			c.revs = tokenRevs[tokens[tokenKey{c.keyID, c.userID, c.workspaceID}]]
		}
	}
	read := make(map[string]uint64, len(agentIDs))
	for i, id := range agentIDs {
		read[id] = agentRevs[i]
	}
	return read, nil
}

// revisionsSQL reads, as of one snapshot, each token's (key, user, member) revisions and
// each agent's, 0 for an absent row, numbered from 1 in the order of the arrays.
const revisionsSQL = `SELECT false, t.n::int,
	COALESCE((SELECT revision FROM api_keys k WHERE k.id = t.key_id), 0),
	COALESCE((SELECT revision FROM users u WHERE u.id = t.user_id COLLATE "C"), 0),
	COALESCE((SELECT revision FROM members m WHERE m.workspace_id = t.ws COLLATE "C" AND m.user_id = t.user_id COLLATE "C"), 0)
FROM unnest($1::bigint[], $2::text[], $3::text[]) WITH ORDINALITY AS t(key_id, user_id, ws, n)
UNION ALL
SELECT true, a.n::int, COALESCE((SELECT revision FROM agents g WHERE g.id = a.id COLLATE "C"), 0), 0, 0
FROM unnest($4::text[]) WITH ORDINALITY AS a(id, n)`

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

var _ service.AccessRevisionsTx = (*tx)(nil)

// AccessRevisions implements service.AccessRevisionsTx: a write's re-check of its
// caller's token, user and membership in one statement of its transaction.
func (t *tx) AccessRevisions(keyID int64, userID, workspaceID string) (data.AccessRevisions, error) {
	var k, u, m int64
	err := t.queryRow(`SELECT
		COALESCE((SELECT revision FROM api_keys WHERE id = $1), 0),
		COALESCE((SELECT revision FROM users WHERE id = $2), 0),
		COALESCE((SELECT revision FROM members WHERE workspace_id = $3 AND user_id = $2), 0)`,
		keyID, userID, workspaceID).Scan(&k, &u, &m)
	return data.AccessRevisions{Key: uint64(k), User: uint64(u), Member: uint64(m)}, err
}
