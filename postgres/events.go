package postgres

import (
	"encoding/json"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// eventCols are the columns an event is read from, in scanEvent's order.
const eventCols = `seq, id, workspace_id, type, created_at, actor_type, actor_user_id, actor_token_id, actor_address, data, prev_hash, hash`

// scanEvent reads one row of eventCols.
func scanEvent(row pgx.Row) (*data.Event, int64, error) {
	var e data.Event
	var seq int64
	var at time.Time
	var body []byte
	err := row.Scan(&seq, &e.ID, &e.WorkspaceID, &e.Type, &at, &e.Actor.Type, &e.Actor.UserID, &e.Actor.TokenID, &e.Actor.Address, &body, &e.PrevHash, &e.Hash)
	if err != nil {
		return nil, 0, err
	}
	e.CreatedAt = data.NewTime(at)
	if body != nil {
		e.Data = json.RawMessage(body)
	}
	return &e, seq, nil
}

// EventHead implements service.EventTx. In a write transaction the workspace is locked
// first (locks.go): writers of one chain take turns from the snapshot on, so the head
// read is the one the next link must name. The row is still read FOR UPDATE: should a
// writer ever reach the head without the lock, it fails to serialize rather than fork
// the chain.
func (t *tx) EventHead(workspaceID string) (string, error) {
	sql := `SELECT hash FROM event_heads WHERE workspace_id = $1`
	if !t.ro {
		if err := t.lockWorkspace(workspaceID); err != nil {
			return "", err
		}
		if h, ok := t.knownHead(workspaceID); ok {
			return h, nil // read with BEGIN, under the lock (lockAndBegin)
		}
		sql += ` FOR UPDATE`
	}
	var hash string
	err := t.queryRow(sql, workspaceID).Scan(&hash)
	return hash, noRows(err)
}

// AppendEvent implements service.EventTx: the event, the workspace's new head and the
// outbox entry, in the transaction and in one round trip (the workspace's writers wait
// for each other's whole transactions, so every round trip in one is paid by all of
// them); the dispatcher wakes after the commit.
func (t *tx) AppendEvent(e *data.Event) error {
	if err := t.lockWorkspace(e.WorkspaceID); err != nil {
		return err
	}
	var body any
	if e.Data != nil {
		body = []byte(e.Data)
	}
	var b pgx.Batch
	// chain_time and the head's clock (migration 0047, events_window.go), moved under the
	// workspace's lock. The head's upsert gives the event its chain_time: a read of
	// event_heads instead would, for a workspace with no head yet, take a predicate lock
	// on the index page other workspaces' first heads go into, and appends of separate
	// workspaces would fail to serialize (TestAppendsOfSeparateWorkspacesDoNotConflict).
	b.Queue(`WITH head AS (
			INSERT INTO event_heads (workspace_id, hash, chain_time) VALUES ($2, $11, $4)
			ON CONFLICT (workspace_id) DO UPDATE SET hash = excluded.hash,
				chain_time = GREATEST(event_heads.chain_time, excluded.chain_time),
				lag = GREATEST(event_heads.lag, event_heads.chain_time - excluded.chain_time)
			RETURNING chain_time)
		INSERT INTO events (id, workspace_id, type, created_at, actor_type, actor_user_id, actor_token_id, actor_address, data, prev_hash, hash, agent_id, kind, chain_time)
		SELECT $1::text, $2::text, $3::text, $4::timestamptz, $5::text, $6::text, $7::bigint, $8::text, $9::json, $10::text, $11::text, $12::text, $13::text, head.chain_time FROM head`,
		e.ID, e.WorkspaceID, e.Type, e.CreatedAt.Time, e.Actor.Type, e.Actor.UserID, e.Actor.TokenID, e.Actor.Address, body, e.PrevHash, e.Hash, e.AgentID, e.Kind)
	b.Queue(`INSERT INTO outbox (event_id) VALUES ($1)`, e.ID)
	if err := t.sendBatch(&b); err != nil {
		return err
	}
	t.movedHead(e.WorkspaceID, e.Hash, false)
	t.st.wake = true
	return nil
}

// RelinkEvent implements service.EventTx.
func (t *tx) RelinkEvent(id, prevHash, hash string) error {
	var ws string
	if err := t.queryRow(`SELECT workspace_id FROM events WHERE id = $1`, id).Scan(&ws); err != nil {
		return noRows(err)
	}
	if err := t.lockWorkspace(ws); err != nil {
		return err
	}
	_, err := t.exec(`UPDATE events SET prev_hash = $2, hash = $3 WHERE id = $1`, id, prevHash, hash)
	return err
}

// SetEventHead implements service.EventTx.
func (t *tx) SetEventHead(workspaceID, hash string) error {
	if err := t.lockWorkspace(workspaceID); err != nil {
		return err
	}
	if _, err := t.exec(setEventHeadSQL, workspaceID, hash); err != nil {
		return err
	}
	t.movedHead(workspaceID, hash, false)
	return nil
}

// setEventHeadSQL stores a workspace's chain head ($1, $2).
const setEventHeadSQL = `INSERT INTO event_heads (workspace_id, hash) VALUES ($1, $2)
	ON CONFLICT (workspace_id) DO UPDATE SET hash = excluded.hash`

// Event implements service.EventReadTx.
func (t *tx) Event(id string) (*data.Event, error) {
	e, _, err := scanEvent(t.queryRow(`SELECT `+eventCols+` FROM events WHERE id = $1`, id))
	if err != nil {
		return nil, noRows(err)
	}
	return e, nil
}

// EventWorkspace implements service.EventWorkspaceTx: the fan-out of an event of a
// workspace without webhooks (most of them) reads its workspace, not its payload (an
// agent's whole record).
func (t *tx) EventWorkspace(id string) (string, error) {
	var ws string
	err := t.queryRow(`SELECT workspace_id FROM events WHERE id = $1`, id).Scan(&ws)
	return ws, noRows(err)
}

var _ service.EventWorkspaceTx = (*tx)(nil)

// EventsNewestFirst implements service.EventReadTx: the chain's order (seq), newest
// first, read in batches so that a caller stopping early reads little.
func (t *tx) EventsNewestFirst(workspaceID string, fn func(e *data.Event) (bool, error)) error {
	w := eventWalk{t: t, workspaceID: workspaceID, from: maxSeq}
	for {
		e, ok, err := w.next()
		if err != nil || !ok {
			return err
		}
		if more, err := fn(e); err != nil || !more {
			return err
		}
	}
}

// ChainWorkspaces implements service.EventReadTx.
func (t *tx) ChainWorkspaces() ([]string, error) {
	rows, err := t.query(`SELECT workspace_id FROM event_heads
		UNION SELECT DISTINCT workspace_id FROM events ORDER BY 1`)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// ChainEvents implements service.EventReadTx: the workspace's events oldest first, in the
// order they were appended (seq).
func (t *tx) ChainEvents(workspaceID string, fn func(id string, e *data.Event, readErr error) error) error {
	w := eventWalk{t: t, workspaceID: workspaceID, forward: true}
	for {
		e, ok, err := w.next()
		if err != nil || !ok {
			return err
		}
		if err := fn(e.ID, e, nil); err != nil {
			return err
		}
	}
}

// deleteWorkspaceEvents removes a deleted workspace's events, outbox entries and chain
// head. The outbox has no foreign key to events (migration 0021: its check made appends
// of separate workspaces conflict), so its entries go first, by name.
func deleteWorkspaceEvents(t *tx, workspaceID string) error {
	if err := t.lockWorkspace(workspaceID); err != nil {
		return err
	}
	if _, err := t.exec(`DELETE FROM outbox WHERE event_id IN (SELECT id FROM events WHERE workspace_id = $1)`, workspaceID); err != nil {
		return err
	}
	if _, err := t.exec(`DELETE FROM events WHERE workspace_id = $1`, workspaceID); err != nil {
		return err
	}
	_, err := t.exec(`DELETE FROM event_heads WHERE workspace_id = $1`, workspaceID)
	t.movedHead(workspaceID, "", true)
	return err
}

func init() { workspaceCascades = append(workspaceCascades, deleteWorkspaceEvents) }
