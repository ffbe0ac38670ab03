package bolt

import (
	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
)

// Buckets of webhooks and their deliveries (listed in allBuckets).
var (
	bucketWebhooks            = []byte("webhooks")              // webhook id → webhookRow
	bucketWebhooksByWS        = []byte("webhooks_by_ws")        // "<ws>\x00<webhook id>"
	bucketDeliveries          = []byte("deliveries")            // delivery id → data.Delivery
	bucketDeliveriesByWebhook = []byte("deliveries_by_webhook") // "<webhook id>\x00<delivery id>"
	bucketDeliveriesDue       = []byte("deliveries_due")        // due ms (8 bytes) + delivery id, pending only
)

// webhookRow is a webhook as stored: the signing secret sealed (conventions §9).
type webhookRow struct {
	data.Webhook
	Secret string `json:"secret"`
}

// record is the row as the service layer sees it.
func (r *webhookRow) record() *data.WebhookRecord {
	return &data.WebhookRecord{Webhook: r.Webhook, SealedSecret: r.Secret}
}

// getWebhook reads a webhook row, nil when there is none.
func getWebhook(tx *bbolt.Tx, id string) (*webhookRow, error) {
	var row webhookRow
	found, err := getJSON(tx.Bucket(bucketWebhooks), []byte(id), &row)
	if err != nil || !found {
		return nil, err
	}
	return &row, nil
}

// loadWebhook returns a webhook of workspaceID; any other id is not found.
func loadWebhook(tx *bbolt.Tx, workspaceID, id string) (*webhookRow, error) {
	if !data.ValidID(data.PrefixWebhook, id) {
		return nil, data.NotFound("Webhook")
	}
	row, err := getWebhook(tx, id)
	if err != nil {
		return nil, err
	}
	if row == nil || row.WorkspaceID != workspaceID {
		return nil, data.NotFound("Webhook")
	}
	return row, nil
}

// Webhook implements service.WebhookTx.
func (t tx) Webhook(id string) (*data.WebhookRecord, error) {
	row, err := getWebhook(t.b, id)
	if err != nil || row == nil {
		return nil, err
	}
	return row.record(), nil
}

// Webhooks implements service.WebhookTx.
func (t tx) Webhooks(workspaceID string, req data.PageRequest) ([]*data.WebhookRecord, data.Page, error) {
	ids, page, err := t.db.page(t.b, bucketWebhooksByWS, workspaceID, req)
	if err != nil {
		return nil, page, err
	}
	list, err := t.webhooks(workspaceID, ids)
	return list, page, err
}

// WorkspaceWebhooks implements service.WebhookTx.
func (t tx) WorkspaceWebhooks(workspaceID string) ([]*data.WebhookRecord, error) {
	return t.webhooks(workspaceID, scopeIDs(t.b.Bucket(bucketWebhooksByWS), workspaceID))
}

// webhooks reads the webhooks of workspaceID named by ids.
func (t tx) webhooks(workspaceID string, ids []string) ([]*data.WebhookRecord, error) {
	list := make([]*data.WebhookRecord, 0, len(ids))
	for _, id := range ids {
		row, err := loadWebhook(t.b, workspaceID, id)
		if err != nil {
			return nil, err
		}
		list = append(list, row.record())
	}
	return list, nil
}

// PutWebhook implements service.WebhookTx.
func (t tx) PutWebhook(w *data.WebhookRecord) error {
	row := webhookRow{Webhook: w.Webhook, Secret: w.SealedSecret}
	if err := putJSON(t.b.Bucket(bucketWebhooks), []byte(w.ID), row); err != nil {
		return err
	}
	return indexPut(t.b.Bucket(bucketWebhooksByWS), w.WorkspaceID, w.ID)
}

// DeleteWebhook implements service.WebhookTx.
func (t tx) DeleteWebhook(id string) error {
	row, err := getWebhook(t.b, id)
	if err != nil || row == nil {
		return err
	}
	return deleteWebhookTx(t.b, row)
}

// deleteWebhookTx removes a webhook with its deliveries, pending ones included: nothing is
// posted to a deleted webhook.
func deleteWebhookTx(tx *bbolt.Tx, row *webhookRow) error {
	if err := deleteWebhookDeliveries(tx, row.ID); err != nil {
		return err
	}
	if err := indexDelete(tx.Bucket(bucketWebhooksByWS), row.WorkspaceID, row.ID); err != nil {
		return err
	}
	return tx.Bucket(bucketWebhooks).Delete([]byte(row.ID))
}

// deleteWorkspaceWebhooks is the workspace cascade of webhooks.
func deleteWorkspaceWebhooks(tx *bbolt.Tx, workspaceID string) error {
	for _, id := range scopeIDs(tx.Bucket(bucketWebhooksByWS), workspaceID) {
		row, err := loadWebhook(tx, workspaceID, id)
		if err != nil {
			return err
		}
		if err := deleteWebhookTx(tx, row); err != nil {
			return err
		}
	}
	return nil
}
