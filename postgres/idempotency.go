package postgres

import (
	"encoding/json"
	"time"

	"github.com/voiceapi/voiceapi/data"
)

// IdempotentResponse implements service.AccountTx.
func (t *tx) IdempotentResponse(tokenID int64, key string) (*data.IdempotentResponse, error) {
	var r data.IdempotentResponse
	var header []byte
	var created time.Time
	err := t.queryRow(`SELECT request_hash, status, header, body, created_at, claim_id, coalesce(agent_id, ''), coalesce(conversation_id, '')
		FROM idempotency_responses WHERE token_id = $1 AND key = $2`, tokenID, []byte(key)).
		Scan(&r.RequestHash, &r.Status, &header, &r.Body, &created, &r.ClaimID, &r.AgentID, &r.ConversationID)
	if err != nil {
		return nil, noRows(err)
	}
	if header != nil {
		if err := data.DecodeJSON(header, &r.Header); err != nil {
			return nil, err
		}
	}
	r.CreatedAt = data.NewTime(created)
	return &r, nil
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
	_, err := t.exec(`INSERT INTO idempotency_responses (token_id, key, request_hash, status, header, body, created_at, claim_id, agent_id, conversation_id)
		VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7, $8, nullif($9, ''), nullif($10, ''))
		ON CONFLICT (token_id, key) DO UPDATE SET request_hash = excluded.request_hash, status = excluded.status,
			header = excluded.header, body = excluded.body, created_at = excluded.created_at, claim_id = excluded.claim_id,
			agent_id = excluded.agent_id, conversation_id = excluded.conversation_id`,
		tokenID, []byte(key), r.RequestHash, r.Status, header, r.Body, r.CreatedAt.Time, r.ClaimID, r.AgentID, r.ConversationID)
	return err
}

// DeleteConversationResponses implements service.AccountTx.
func (t *tx) DeleteConversationResponses(conversationID string) (int, error) {
	tag, err := t.exec(`DELETE FROM idempotency_responses WHERE conversation_id = $1`, conversationID)
	return int(tag.RowsAffected()), err
}

// DeleteIdempotentResponsesBefore implements service.AccountTx, over the index
// idempotency_responses_created_at.
func (t *tx) DeleteIdempotentResponsesBefore(before time.Time, limit int) (int, error) {
	tag, err := t.exec(`DELETE FROM idempotency_responses WHERE (token_id, key) IN (
		SELECT token_id, key FROM idempotency_responses WHERE created_at < $1 ORDER BY created_at LIMIT $2)`, before, limit)
	return int(tag.RowsAffected()), err
}
