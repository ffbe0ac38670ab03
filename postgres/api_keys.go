package postgres

import (
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/voiceapi/voiceapi/data"
)

// apiKeyPageKey is the text key of token pages: the id as 16 hex digits, which orders as
// the number does. The api_keys_by_* indexes hold this very expression.
const apiKeyPageKey = `(lpad(to_hex(id), 16, '0') COLLATE "C")`

// apiKeyCols are the columns scanAPIKey reads, in its order.
const apiKeyCols = `id, user_id, workspace_id, kind, name, secret_hash, created_at, expires_at, last_used_at, scopes, agent_ids`

// scanAPIKey reads one row of apiKeyCols followed by the columns of extra, if any.
func scanAPIKey(row pgx.Row, extra ...any) (*data.APIKeyRecord, error) {
	var k data.APIKeyRecord
	var created time.Time
	var expires, used *time.Time
	dest := append([]any{&k.ID, &k.UserID, &k.WorkspaceID, &k.Kind, &k.Name, &k.SecretHash, &created, &expires, &used, &k.Scopes, &k.AgentIDs}, extra...)
	if err := row.Scan(dest...); err != nil {
		return nil, err
	}
	k.CreatedAt = data.NewTime(created)
	k.ExpiresAt, k.LastUsedAt = keyTimeOf(expires), keyTimeOf(used)
	return &k, nil
}

// keyTimeOf converts a nullable timestamp column (expires_at, last_used_at).
func keyTimeOf(t *time.Time) *data.Time {
	if t == nil {
		return nil
	}
	v := data.NewTime(*t)
	return &v
}

// keyTimeArg is a nullable timestamp as a query argument.
func keyTimeArg(t *data.Time) any {
	if t == nil {
		return nil
	}
	return t.Time
}

// apiKeys reads every row of a query of apiKeyCols.
func apiKeys(rows pgx.Rows, err error) ([]*data.APIKeyRecord, error) {
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (*data.APIKeyRecord, error) { return scanAPIKey(row) })
}

// APIKey implements service.AccountTx.
func (t *tx) APIKey(id int64) (*data.APIKeyRecord, error) {
	k, err := scanAPIKey(t.queryRow(`SELECT `+apiKeyCols+` FROM api_keys WHERE id = $1`, id))
	if err != nil {
		return nil, noRows(err)
	}
	return k, nil
}

// InsertAPIKey implements service.AccountTx: the identity column gives the next id,
// unique across replicas (a retried transaction may leave a gap, which nothing minds).
func (t *tx) InsertAPIKey(k *data.APIKeyRecord) error {
	secret := k.SecretHash
	if secret == nil {
		secret = []byte{}
	}
	return t.queryRow(`INSERT INTO api_keys (user_id, workspace_id, kind, name, secret_hash, created_at, expires_at, last_used_at, scopes, agent_ids)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id`,
		k.UserID, k.WorkspaceID, k.Kind, k.Name, secret, k.CreatedAt.Time, keyTimeArg(k.ExpiresAt), keyTimeArg(k.LastUsedAt), k.Scopes, k.AgentIDs).
		Scan(&k.ID)
}

// PutAPIKey implements service.AccountTx: the token under its own id (a moved
// installation's), then the identity sequence moved past it, so that InsertAPIKey's next
// id is greater. setval is not undone by a rollback; a sequence ahead of the ids only
// leaves a gap.
func (t *tx) PutAPIKey(k *data.APIKeyRecord) error {
	secret := k.SecretHash
	if secret == nil {
		secret = []byte{}
	}
	_, err := t.exec(`INSERT INTO api_keys (`+apiKeyCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
		ON CONFLICT (id) DO UPDATE SET user_id = excluded.user_id, workspace_id = excluded.workspace_id,
			kind = excluded.kind, name = excluded.name, secret_hash = excluded.secret_hash,
			created_at = excluded.created_at, expires_at = excluded.expires_at, last_used_at = excluded.last_used_at,
			scopes = excluded.scopes, agent_ids = excluded.agent_ids, revision = nextval('account_revisions')`,
		k.ID, k.UserID, k.WorkspaceID, k.Kind, k.Name, secret, k.CreatedAt.Time, keyTimeArg(k.ExpiresAt), keyTimeArg(k.LastUsedAt), k.Scopes, k.AgentIDs)
	if err != nil {
		return err
	}
	_, err = t.exec(`SELECT setval(seq, $1) FROM (SELECT pg_get_serial_sequence('api_keys', 'id')::regclass AS seq) AS s
		WHERE coalesce(pg_sequence_last_value(seq), 0) < $1`, k.ID)
	return err
}

// DeleteAPIKey implements service.AccountTx.
func (t *tx) DeleteAPIKey(id int64) error {
	_, err := t.exec(`DELETE FROM api_keys WHERE id = $1`, id)
	return err
}

// apiKeyPage pages the API keys (not login tokens) whose scope column equals scope.
func (t *tx) apiKeyPage(list, column, scope string, req data.PageRequest) ([]*data.APIKeyRecord, data.Page, error) {
	return pageRows(t, apiKeyList(list, column, scope), req, func(rows pgx.Rows) (*data.APIKeyRecord, string, error) {
		var key string
		k, err := scanAPIKey(rows, &key)
		return k, key, err
	})
}

// apiKeyList is the keyset of the API keys whose scope column equals scope, in the order
// of the index on (column, kind, key), the scope compared as a range (keyset.within): a
// generic plan otherwise walked the primary key past other scopes' keys for a cursor's
// check (TestAgentAndAccountListsSeekTheScope). Pinned (pinned), so that the kind ends
// the scan rather than the scope's end, past its login tokens (TestAPIKeyPagesStopAtTheirKind).
func apiKeyList(list, column, scope string) keyset {
	return keyset{
		binding: binding(list, scope),
		cols:    apiKeyCols + `, ` + apiKeyPageKey,
		from:    `api_keys WHERE ` + pinned(column, "$1") + ` AND kind = '` + data.TokenAPIKey + `'`,
		key:     apiKeyPageKey,
		within:  column,
		args:    []any{scope},
	}
}

// APIKeyPage implements service.AccountTx.
func (t *tx) APIKeyPage(userID string, req data.PageRequest) ([]*data.APIKeyRecord, data.Page, error) {
	return t.apiKeyPage("api_keys_by_user", "user_id", userID, req)
}

// WorkspaceAPIKeyPage implements service.AccountTx.
func (t *tx) WorkspaceAPIKeyPage(workspaceID string, req data.PageRequest) ([]*data.APIKeyRecord, data.Page, error) {
	return t.apiKeyPage("api_keys_by_workspace", "workspace_id", workspaceID, req)
}

// UserTokens implements service.AccountTx (oldest first).
func (t *tx) UserTokens(userID, kind string) ([]*data.APIKeyRecord, error) {
	return apiKeys(t.query(`SELECT `+apiKeyCols+` FROM api_keys WHERE user_id = $1 AND kind = $2 ORDER BY id`, userID, kind))
}

// APIKeyRevision implements service.AccountTx. Recording last_used_at leaves it as it
// is: authentication's cache holds nothing of last_used_at, and a revision moved by every
// use would make each replica reload every busy key every few seconds.
func (t *tx) APIKeyRevision(id int64) (uint64, error) {
	return t.accountRevision(`SELECT revision FROM api_keys WHERE id = $1`, id)
}

// LiveAPIKeys implements service.AccountTx, over the index api_keys_by_user. An API
// key's create records its event, so it holds the workspace's lock (locks.go) and writes
// SERIALIZABLE: two creates racing for the last slot, on any replicas, do not both commit.
func (t *tx) LiveAPIKeys(userID, workspaceID string, now time.Time, limit int) (int, error) {
	var n int
	err := t.queryRow(`SELECT count(*) FROM (SELECT 1 FROM api_keys WHERE user_id = $1 AND kind = '`+data.TokenAPIKey+`'
		AND workspace_id = $2 AND (expires_at IS NULL OR expires_at > $3) LIMIT $4) AS live`, userID, workspaceID, now, limit).Scan(&n)
	return n, err
}

// DeleteExpiredTokens implements service.AccountTx, over the index api_keys_by_expiry
// (migration 0024).
func (t *tx) DeleteExpiredTokens(kind string, before time.Time, limit int) ([]*data.APIKeyRecord, error) {
	return apiKeys(t.query(deleteExpiredTokensSQL, kind, before, limit))
}

// deleteExpiredTokensSQL deletes up to $3 tokens of kind $1 expiring at or before $2,
// earliest first, and returns them.
const deleteExpiredTokensSQL = `DELETE FROM api_keys WHERE id IN (SELECT id FROM api_keys
	WHERE kind = $1 AND expires_at IS NOT NULL AND expires_at <= $2 ORDER BY expires_at LIMIT $3)
	RETURNING ` + apiKeyCols

// OldestTokens implements service.AccountTx, over the index api_keys_by_user: the newest
// keep are read from its end, then up to limit from its start.
func (t *tx) OldestTokens(userID, kind string, keep, limit int) ([]int64, error) {
	rows, err := t.query(`SELECT id FROM api_keys WHERE user_id = $1 AND kind = $2
		AND id NOT IN (SELECT id FROM api_keys WHERE user_id = $1 AND kind = $2 ORDER BY `+apiKeyPageKey+` DESC LIMIT $3)
		ORDER BY `+apiKeyPageKey+` LIMIT $4`, userID, kind, keep, limit)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[int64])
}
