package postgres

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/voiceapi/voiceapi/data"
)

func init() {
	workspaceCascades = append(workspaceCascades, func(t *tx, ws string) error {
		// What the Idempotency-Keys of its conversations' requests kept goes first (the
		// tokens that could replay them go with the workspace), each over its index.
		for _, col := range []string{"conversation_id", "started_conversation_id"} {
			if _, err := t.exec(`DELETE FROM idempotency_responses WHERE `+col+` IN (
				SELECT id FROM conversations WHERE workspace_id = $1)`, ws); err != nil {
				return err
			}
		}
		// Items go with their conversation (ON DELETE CASCADE).
		_, err := t.exec(`DELETE FROM conversations WHERE workspace_id = $1`, ws)
		return err
	})
}

const conversationCols = `id, workspace_id, agent_id, agent_version, status, variables, input_tokens,
	output_tokens, agent_turns, disconnection_reason, call_id, items, started_by, lease_token,
	lease_until, created_at, updated_at, ended_at`

func scanConversation(row pgx.Row) (*data.StoredConversation, error) {
	var c data.StoredConversation
	var variables []byte
	var leaseToken *string
	var leaseUntil, ended *time.Time
	var created, updated time.Time
	if err := row.Scan(&c.ID, &c.WorkspaceID, &c.AgentID, &c.AgentVersion, &c.Status, &variables,
		&c.Usage.InputTokens, &c.Usage.OutputTokens, &c.AgentTurns, &c.DisconnectionReason, &c.CallID,
		&c.Items, &c.StartedBy, &leaseToken, &leaseUntil, &created, &updated, &ended); err != nil {
		return nil, err
	}
	if err := data.DecodeJSON(variables, &c.Variables); err != nil {
		return nil, fmt.Errorf("decoding conversation %s: %w", c.ID, err)
	}
	if leaseToken != nil && leaseUntil != nil {
		c.Lease = &data.ConversationLease{Token: *leaseToken, Until: storedTime(*leaseUntil)}
	}
	c.CreatedAt, c.UpdatedAt, c.EndedAt = storedTime(created), storedTime(updated), storedTimePtr(ended)
	return &c, nil
}

// jsonbSafe encodes v for a jsonb column: PostgreSQL refuses the NUL character in jsonb
// text, which a model's reply or a custom function's answer may hold, so NULs become
// U+FFFD (the replacement character) there, as bbolt keeps them.
func jsonbSafe(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil || !bytes.Contains(raw, []byte(`\u0000`)) {
		return raw, err
	}
	var doc any
	if err := data.DecodeJSON(raw, &doc); err != nil {
		return nil, err
	}
	var clean func(any) any
	clean = func(x any) any {
		switch y := x.(type) {
		case string:
			return strings.ReplaceAll(y, "\x00", "\uFFFD")
		case []any:
			for i := range y {
				y[i] = clean(y[i])
			}
		case map[string]any:
			m := make(map[string]any, len(y))
			for k, item := range y {
				m[clean(k).(string)] = clean(item)
			}
			return m
		}
		return x
	}
	return json.Marshal(clean(doc))
}

// conversationParams are c's values for the conversationCols, in order.
func conversationParams(c *data.StoredConversation) ([]any, error) {
	variables, err := jsonbSafe(c.Variables)
	if err != nil {
		return nil, fmt.Errorf("encoding conversation %s: %w", c.ID, err)
	}
	if string(variables) == "null" {
		variables = []byte("{}")
	}
	var leaseToken *string
	var leaseUntil *time.Time
	if c.Lease != nil {
		leaseToken, leaseUntil = &c.Lease.Token, &c.Lease.Until.Time
	}
	return []any{c.ID, c.WorkspaceID, c.AgentID, c.AgentVersion, c.Status, variables, c.Usage.InputTokens,
		c.Usage.OutputTokens, c.AgentTurns, c.DisconnectionReason, c.CallID, c.Items, c.StartedBy, leaseToken,
		leaseUntil, c.CreatedAt.Time, c.UpdatedAt.Time, paramTime(c.EndedAt)}, nil
}

// Conversation implements service.ConversationTx.
func (t *tx) Conversation(id string) (*data.StoredConversation, error) {
	c, err := scanConversation(t.queryRow(`SELECT `+conversationCols+` FROM conversations WHERE id = $1`, id))
	if err != nil {
		return nil, noRows(err)
	}
	return c, nil
}

// ConversationItems implements service.ConversationTx.
func (t *tx) ConversationItems(id string) ([]data.ConversationItem, error) {
	rows, err := t.query(`SELECT item FROM conversation_items WHERE conversation_id = $1 ORDER BY seq`, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []data.ConversationItem
	for rows.Next() {
		var raw []byte
		if err := rows.Scan(&raw); err != nil {
			return nil, err
		}
		var it data.ConversationItem
		if err := data.DecodeJSON(raw, &it); err != nil {
			return nil, fmt.Errorf("decoding an item of conversation %s: %w", id, err)
		}
		out = append(out, it)
	}
	return out, rows.Err()
}

// InsertConversation implements service.ConversationTx.
func (t *tx) InsertConversation(c *data.StoredConversation, items []data.ConversationItem) error {
	params, err := conversationParams(c)
	if err != nil {
		return err
	}
	if _, err := t.exec(`INSERT INTO conversations (`+conversationCols+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)`, params...); err != nil {
		return err
	}
	return t.appendConversationItems(c, items)
}

// PutConversation implements service.ConversationTx.
func (t *tx) PutConversation(c *data.StoredConversation, items []data.ConversationItem) error {
	params, err := conversationParams(c)
	if err != nil {
		return err
	}
	tag, err := t.exec(`UPDATE conversations SET workspace_id = $2, agent_id = $3, agent_version = $4,
		status = $5, variables = $6, input_tokens = $7, output_tokens = $8, agent_turns = $9,
		disconnection_reason = $10, call_id = $11, items = $12, started_by = $13, lease_token = $14,
		lease_until = $15, created_at = $16, updated_at = $17, ended_at = $18 WHERE id = $1`, params...)
	if err != nil {
		return err
	}
	if tag.RowsAffected() != 1 {
		return fmt.Errorf("conversation %s is not stored", c.ID)
	}
	return t.appendConversationItems(c, items)
}

// appendConversationItems inserts items as c's last len(items) items, in one statement.
func (t *tx) appendConversationItems(c *data.StoredConversation, items []data.ConversationItem) error {
	if len(items) == 0 {
		return nil
	}
	seqs := make([]int, len(items))
	docs := make([]string, len(items))
	for i := range items {
		raw, err := jsonbSafe(&items[i])
		if err != nil {
			return fmt.Errorf("encoding an item of conversation %s: %w", c.ID, err)
		}
		seqs[i], docs[i] = c.Items-len(items)+i, string(raw)
	}
	_, err := t.exec(`INSERT INTO conversation_items (conversation_id, seq, item)
		SELECT $1, s, d::jsonb FROM unnest($2::integer[], $3::text[]) AS u(s, d)`, c.ID, seqs, docs)
	return err
}

// RewriteConversationItems implements service.ConversationTx, in one statement, which
// rewrites nothing unless items are as many as the conversation holds.
func (t *tx) RewriteConversationItems(id string, items []data.ConversationItem) error {
	seqs := make([]int, len(items))
	docs := make([]string, len(items))
	for i := range items {
		raw, err := jsonbSafe(&items[i])
		if err != nil {
			return fmt.Errorf("encoding an item of conversation %s: %w", id, err)
		}
		seqs[i], docs[i] = i, string(raw)
	}
	tag, err := t.exec(`UPDATE conversation_items SET item = u.d::jsonb
		FROM unnest($2::integer[], $3::text[]) AS u(s, d) WHERE conversation_id = $1 AND seq = u.s
		AND EXISTS (SELECT 1 FROM conversations WHERE id = $1 AND items = cardinality($2::integer[]))`, id, seqs, docs)
	if err != nil {
		return err
	}
	if tag.RowsAffected() != int64(len(items)) {
		return fmt.Errorf("conversation %s: %d items to rewrite, %d stored", id, len(items), tag.RowsAffected())
	}
	return nil
}

// ConversationOfCall implements service.ConversationTx, through the index
// conversations_by_call (migration 0024).
func (t *tx) ConversationOfCall(callID string) (string, error) {
	var id string
	err := t.queryRow(conversationOfCallSQL, callID).Scan(&id)
	if err := noRows(err); err != nil {
		return "", err
	}
	return id, nil
}

// conversationOfCallSQL finds the conversation that became the call $1.
const conversationOfCallSQL = `SELECT id FROM conversations WHERE call_id = $1 LIMIT 1`

// DeleteConversation implements service.ConversationTx; its items and its place on the
// upgrade's list go with it (ON DELETE CASCADE).
func (t *tx) DeleteConversation(id string) error {
	_, err := t.exec(`DELETE FROM conversations WHERE id = $1`, id)
	return err
}

// ConversationsToRedact implements service.ConversationTx (migration 0024's list).
func (t *tx) ConversationsToRedact(ws string, limit int) ([]string, error) {
	rows, err := t.query(`SELECT conversation_id FROM conversations_to_redact WHERE workspace_id = $1
		ORDER BY conversation_id LIMIT $2`, ws, limit)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// ConversationRedacted implements service.ConversationTx.
func (t *tx) ConversationRedacted(ws, id string) error {
	_, err := t.exec(`DELETE FROM conversations_to_redact WHERE workspace_id = $1 AND conversation_id = $2`, ws, id)
	return err
}

// ListConversationToRedact implements service.ConversationTx.
func (t *tx) ListConversationToRedact(ws, id string) error {
	_, err := t.exec(`INSERT INTO conversations_to_redact (workspace_id, conversation_id) VALUES ($1, $2) ON CONFLICT DO NOTHING`, ws, id)
	return err
}

// IdleConversations implements service.ConversationTx.
func (t *tx) IdleConversations(before time.Time, limit int) ([]string, error) {
	rows, err := t.query(`SELECT id FROM conversations WHERE status = 'active' AND updated_at < $1
		ORDER BY updated_at, id LIMIT $2`, before, limit)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// OpenConversations implements service.ConversationTx, from the index conversations_open
// (migration 0023). The workspace's writers take its lock before their snapshot and write
// SERIALIZABLE, so two starts racing for the last slot, on any replicas, do not both
// commit.
func (t *tx) OpenConversations(ws string, updatedAfter, leasedAfter time.Time, limit int) (int, error) {
	var n int
	err := t.queryRow(openConversationsSQL, ws, updatedAfter, leasedAfter, limit).Scan(&n)
	return n, err
}

// ActiveConversationOn implements service.ConversationTx, through the index of the
// workspace's active conversations (conversations_open).
func (t *tx) ActiveConversationOn(ws, agentID string, n int) (string, error) {
	var id string
	err := t.queryRow(`SELECT id FROM conversations WHERE workspace_id = $1 AND status = 'active'
		AND agent_id = $2 AND agent_version = $3 LIMIT 1`, ws, agentID, n).Scan(&id)
	return id, noRows(err)
}

// openConversationsSQL counts a workspace's open conversations ($1), updated after $2 or
// leased past $3, at most $4 of them; status = 'active' is the index's predicate.
const openConversationsSQL = `SELECT count(*) FROM (SELECT 1 FROM conversations WHERE workspace_id = $1
	AND status = 'active' AND (updated_at > $2 OR lease_until > $3) LIMIT $4) AS open`
