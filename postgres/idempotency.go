package postgres

import (
	"encoding/json"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/voiceapi/voiceapi/data"
)

// IdempotentResponse implements service.AccountTx.
func (t *tx) IdempotentResponse(tokenID int64, key string) (*data.IdempotentResponse, error) {
	var r data.IdempotentResponse
	var header []byte
	var created time.Time
	err := t.queryRow(`SELECT `+keptColumns+` FROM idempotency_responses WHERE token_id = $1 AND key = $2`, tokenID, []byte(key)).
		Scan(keptInto(&r, &header, &created)...)
	if err != nil {
		return nil, noRows(err)
	}
	return &r, keptDone(&r, header, created)
}

// keptColumns are the columns of a kept response that keptInto scans.
const keptColumns = `request_hash, status, header, body, created_at, claim_id, coalesce(agent_id, ''),
	coalesce(conversation_id, ''), coalesce(started_conversation_id, ''), coalesce(workspace_id, '')`

// keptInto are the scan targets of keptColumns; keptDone completes r from the two that
// need decoding.
func keptInto(r *data.IdempotentResponse, header *[]byte, created *time.Time) []any {
	return []any{&r.RequestHash, &r.Status, header, &r.Body, created, &r.ClaimID, &r.AgentID, &r.ConversationID, &r.StartedConversationID, &r.WorkspaceID}
}

func keptDone(r *data.IdempotentResponse, header []byte, created time.Time) error {
	r.CreatedAt = data.NewTime(created)
	if header == nil {
		return nil
	}
	return data.DecodeJSON(header, &r.Header)
}

// ConversationStartResponses implements service.AccountTx, over the index
// idempotency_responses_started_conversation.
func (t *tx) ConversationStartResponses(conversationID string) ([]data.KeptResponse, error) {
	return t.keptResponses(`SELECT token_id, key, `+keptColumns+` FROM idempotency_responses WHERE started_conversation_id = $1`, conversationID)
}

// AgentResponses implements service.AccountTx, over the partial index
// idempotency_responses_agent (migration 0033), which a response cut to its claim leaves.
func (t *tx) AgentResponses(agentID string, limit int) ([]data.KeptResponse, error) {
	return t.keptResponses(agentResponsesSQL, agentID, limit)
}

// agentResponsesSQL selects up to $2 answers kept with agent $1.
const agentResponsesSQL = `SELECT token_id, key, ` + keptColumns + ` FROM idempotency_responses
	WHERE agent_id = $1 AND status <> 0 AND agent_id IS NOT NULL LIMIT $2`

// keptResponses runs query, which selects token_id, key and keptColumns, with args.
func (t *tx) keptResponses(query string, args ...any) ([]data.KeptResponse, error) {
	rows, err := t.query(query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []data.KeptResponse
	for rows.Next() {
		var k data.KeptResponse
		var key, header []byte
		var created time.Time
		r := &data.IdempotentResponse{}
		if err := rows.Scan(append([]any{&k.TokenID, &key}, keptInto(r, &header, &created)...)...); err != nil {
			return nil, err
		}
		if err := keptDone(r, header, created); err != nil {
			return nil, err
		}
		k.Key, k.Response = string(key), r
		out = append(out, k)
	}
	return out, rows.Err()
}

// PutIdempotentResponse implements service.AccountTx. Two replicas claiming one key at
// once both read it absent in their SERIALIZABLE transactions, so one of them fails to
// commit and runs again, then finds the other's response.
func (t *tx) PutIdempotentResponse(tokenID int64, key string, r *data.IdempotentResponse) error {
	var header any // NULL for a nil map, as the record's null
	if r.Header != nil {
		raw, err := json.Marshal(r.Header)
		if err != nil {
			return err
		}
		header = string(raw)
	}
	_, err := t.exec(`INSERT INTO idempotency_responses (token_id, key, request_hash, status, header, body, created_at, claim_id, agent_id,
			conversation_id, started_conversation_id, workspace_id)
		VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7, $8, nullif($9, ''), nullif($10, ''), nullif($11, ''), nullif($12, ''))
		ON CONFLICT (token_id, key) DO UPDATE SET request_hash = excluded.request_hash, status = excluded.status,
			header = excluded.header, body = excluded.body, created_at = excluded.created_at, claim_id = excluded.claim_id,
			agent_id = excluded.agent_id, conversation_id = excluded.conversation_id,
			started_conversation_id = excluded.started_conversation_id, workspace_id = excluded.workspace_id`,
		tokenID, []byte(key), r.RequestHash, r.Status, header, r.Body, r.CreatedAt.Time, r.ClaimID, r.AgentID, r.ConversationID,
		r.StartedConversationID, r.WorkspaceID)
	return err
}

// DeleteConversationResponses implements service.AccountTx.
func (t *tx) DeleteConversationResponses(conversationID string) (int, error) {
	tag, err := t.exec(`DELETE FROM idempotency_responses WHERE conversation_id = $1`, conversationID)
	return int(tag.RowsAffected()), err
}

// DeleteTokenResponses implements service.AccountTx, over the primary key (token_id,
// key).
func (t *tx) DeleteTokenResponses(tokenID int64, limit int) (int, error) {
	tag, err := t.exec(deleteTokenResponsesSQL, tokenID, limit)
	return int(tag.RowsAffected()), err
}

// deleteTokenResponsesSQL deletes up to $2 answers kept under token $1.
const deleteTokenResponsesSQL = `DELETE FROM idempotency_responses WHERE token_id = $1 AND key IN (
	SELECT key FROM idempotency_responses WHERE token_id = $1 LIMIT $2)`

// DeleteWorkspaceResponses implements service.AccountTx, over the partial index
// idempotency_responses_workspace (migrations 0035, 0038); a member's removal (a time)
// walks the token's answers there in key order from `from` on: a filter on the time
// alone would read again, each batch, every answer it spares (a member added again who
// kept many since).
func (t *tx) DeleteWorkspaceResponses(ws string, tokenID int64, before time.Time, from []byte, limit int) (int, []byte, error) {
	if !before.IsZero() {
		return t.deleteWorkspaceTokenResponsesBefore(ws, tokenID, before, from, limit)
	}
	query, args := deleteWorkspaceResponsesSQL, []any{ws, limit}
	if tokenID != 0 {
		query, args = deleteWorkspaceTokenResponsesSQL, []any{ws, limit, tokenID}
	}
	tag, err := t.exec(query, args...)
	n := int(tag.RowsAffected())
	if err != nil || n < limit {
		return n, nil, err
	}
	return n, []byte{}, nil // nothing passed over: the next call starts anywhere
}

// deleteWorkspaceTokenResponsesBefore walks token tokenID's answers past key from, and
// deletes those kept in ws at or before `before`, until limit are deleted or limit passed
// over, and says where it stopped.
func (t *tx) deleteWorkspaceTokenResponsesBefore(ws string, tokenID int64, before time.Time, from []byte, limit int) (int, []byte, error) {
	if from == nil {
		from = []byte{} // NULL compares to nothing
	}
	var deleted, walked, read int
	var last []byte
	if err := t.queryRow(deleteWorkspaceTokenResponsesBeforeSQL, ws, limit, tokenID, before, from).Scan(&deleted, &walked, &read, &last); err != nil {
		return 0, nil, err
	}
	if walked == read && read < 2*limit {
		return deleted, nil, nil // it read the token's last answer
	}
	return deleted, last, nil
}

// deleteWorkspaceResponsesSQL deletes up to $2 answers kept for requests made in
// workspace $1; deleteWorkspaceTokenResponsesSQL those of token $3 alone.
const (
	deleteWorkspaceResponsesSQL = `DELETE FROM idempotency_responses WHERE (token_id, key) IN (
	SELECT token_id, key FROM idempotency_responses WHERE workspace_id = $1 LIMIT $2)`
	deleteWorkspaceTokenResponsesSQL = `DELETE FROM idempotency_responses WHERE token_id = $3 AND key IN (
	SELECT key FROM idempotency_responses WHERE workspace_id = $1 AND token_id = $3 LIMIT $2)`
	// deleteWorkspaceTokenResponsesBeforeSQL reads up to twice $2 of token $3's answers
	// kept in $1 past key $5, in key order (0038's index), walks them until $2 are due
	// (kept at or before $4) or $2 are not, deletes the due (joined on the primary key:
	// key = ANY(array) was planned as a filter over every row of the token), and returns
	// how many it deleted, walked and read, and the last key it walked.
	deleteWorkspaceTokenResponsesBeforeSQL = `WITH read AS (
		SELECT key, coalesce(created_at <= $4, false) AS due FROM idempotency_responses
		WHERE workspace_id = $1 AND token_id = $3 AND key > $5 ORDER BY key LIMIT 2 * $2),
	counted AS (
		SELECT key, due, count(*) FILTER (WHERE due) OVER w AS dues, count(*) FILTER (WHERE NOT due) OVER w AS passed
		FROM read WINDOW w AS (ORDER BY key)),
	walked AS (SELECT key, due FROM counted WHERE dues <= $2 AND passed <= $2),
	gone AS (
		DELETE FROM idempotency_responses r USING walked w WHERE r.token_id = $3 AND r.key = w.key AND w.due RETURNING 1)
	SELECT (SELECT count(*) FROM gone), (SELECT count(*) FROM walked), (SELECT count(*) FROM read),
		(SELECT key FROM walked ORDER BY key DESC LIMIT 1)`
)

// WorkspaceTokens implements service.AccountTx, over api_keys_by_workspace.
func (t *tx) WorkspaceTokens(ws string) ([]int64, error) {
	rows, err := t.query(`SELECT id FROM api_keys WHERE workspace_id = $1`, ws)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[int64])
}

// DeleteIdempotentResponsesBefore implements service.AccountTx, over the index
// idempotency_responses_created_at.
func (t *tx) DeleteIdempotentResponsesBefore(before time.Time, limit int) (int, error) {
	tag, err := t.exec(`DELETE FROM idempotency_responses WHERE (token_id, key) IN (
		SELECT token_id, key FROM idempotency_responses WHERE created_at < $1 ORDER BY created_at LIMIT $2)`, before, limit)
	return int(tag.RowsAffected()), err
}

// StartsToNote implements service.AccountTx (migration 0031's list).
func (t *tx) StartsToNote(ws string, limit int) ([]data.KeptResponse, error) {
	rows, err := t.query(`SELECT token_id, key FROM idempotency_starts_to_note WHERE workspace_id = $1
		ORDER BY token_id, key LIMIT $2`, ws, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []data.KeptResponse
	for rows.Next() {
		var k data.KeptResponse
		var key []byte
		if err := rows.Scan(&k.TokenID, &key); err != nil {
			return nil, err
		}
		k.Key = string(key)
		out = append(out, k)
	}
	return out, rows.Err()
}

// StartNoted implements service.AccountTx.
func (t *tx) StartNoted(ws string, tokenID int64, key string) error {
	_, err := t.exec(`DELETE FROM idempotency_starts_to_note WHERE workspace_id = $1 AND token_id = $2 AND key = $3`, ws, tokenID, []byte(key))
	return err
}

// ListStartToNote implements service.AccountTx.
func (t *tx) ListStartToNote(ws string, tokenID int64, key string) error {
	_, err := t.exec(`INSERT INTO idempotency_starts_to_note (workspace_id, token_id, key) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`, ws, tokenID, []byte(key))
	return err
}
