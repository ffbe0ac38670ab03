package postgres

import (
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/voiceapi/voiceapi/data"
)

// webhookCols are the columns a webhook is read from, in scanWebhook's order.
const webhookCols = `id, workspace_id, url, description, events, enabled, sealed_secret, created_at, updated_at`

func scanWebhook(row pgx.Row) (*data.WebhookRecord, error) {
	var w data.WebhookRecord
	var created, updated time.Time
	err := row.Scan(&w.ID, &w.WorkspaceID, &w.URL, &w.Description, &w.Events, &w.Enabled, &w.SealedSecret, &created, &updated)
	if err != nil {
		return nil, err
	}
	w.CreatedAt, w.UpdatedAt = data.NewTime(created), data.NewTime(updated)
	return &w, nil
}

// Webhook implements service.WebhookTx.
func (t *tx) Webhook(id string) (*data.WebhookRecord, error) {
	w, err := scanWebhook(t.queryRow(`SELECT `+webhookCols+` FROM webhooks WHERE id = $1`, id))
	if err != nil {
		return nil, noRows(err)
	}
	return w, nil
}

// Webhooks implements service.WebhookTx.
func (t *tx) Webhooks(workspaceID string, req data.PageRequest) ([]*data.WebhookRecord, data.Page, error) {
	return pageRows(t, inWorkspace("webhooks", webhookCols, workspaceID), req, func(rows pgx.Rows) (*data.WebhookRecord, string, error) {
		w, err := scanWebhook(rows)
		if err != nil {
			return nil, "", err
		}
		return w, w.ID, nil
	})
}

// WorkspaceWebhooks implements service.WebhookTx: oldest first, as the bbolt engine's
// index walk gives them.
func (t *tx) WorkspaceWebhooks(workspaceID string) ([]*data.WebhookRecord, error) {
	rows, err := t.query(`SELECT `+webhookCols+` FROM webhooks WHERE workspace_id = $1 ORDER BY id`, workspaceID)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (*data.WebhookRecord, error) { return scanWebhook(row) })
}

// PutWebhook implements service.WebhookTx.
func (t *tx) PutWebhook(w *data.WebhookRecord) error {
	events := w.Events
	if events == nil {
		events = []string{}
	}
	_, err := t.exec(`INSERT INTO webhooks (`+webhookCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
		ON CONFLICT (id) DO UPDATE SET workspace_id = excluded.workspace_id, url = excluded.url,
			description = excluded.description, events = excluded.events, enabled = excluded.enabled,
			sealed_secret = excluded.sealed_secret, created_at = excluded.created_at, updated_at = excluded.updated_at`,
		w.ID, w.WorkspaceID, w.URL, w.Description, events, w.Enabled, w.SealedSecret, w.CreatedAt.Time, w.UpdatedAt.Time)
	return err
}

// DeleteWebhook implements service.WebhookTx: its deliveries go with it (the foreign
// key's cascade), pending ones included, so nothing is posted to a deleted webhook.
func (t *tx) DeleteWebhook(id string) error {
	_, err := t.exec(`DELETE FROM webhooks WHERE id = $1`, id)
	return err
}

// deleteWorkspaceWebhooks is the workspace cascade of webhooks and their deliveries.
func deleteWorkspaceWebhooks(t *tx, workspaceID string) error {
	_, err := t.exec(`DELETE FROM webhooks WHERE workspace_id = $1`, workspaceID)
	return err
}

func init() {
	workspaceCascades = append(workspaceCascades, deleteWorkspaceWebhooks)
	quotaCounters[data.LimitWebhooks] = func(t *tx, workspaceID string, upTo int64) (int64, error) {
		return countUpTo(t, "webhooks", workspaceID, upTo)
	}
}

// countUpTo counts table's rows of the workspace, stopping at upTo when upTo >= 0 (a
// quota check needs no more), over the table's (workspace_id, id) index.
func countUpTo(t *tx, table, workspaceID string, upTo int64) (int64, error) {
	var limit any // NULL: LIMIT ALL
	if upTo >= 0 {
		limit = upTo
	}
	var n int64
	err := t.queryRow(`SELECT count(*) FROM (SELECT 1 FROM `+table+` WHERE workspace_id = $1 LIMIT $2) s`, workspaceID, limit).Scan(&n)
	return n, err
}
