package bolt

import (
	"context"
	"crypto/rand"
	"encoding/base64"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/validate"
)

var _ data.WebhookService = (*DB)(nil)

// Buckets of webhooks and their deliveries (listed in allBuckets).
var (
	bucketWebhooks            = []byte("webhooks")              // webhook id → webhookRow
	bucketWebhooksByWS        = []byte("webhooks_by_ws")        // "<ws>\x00<webhook id>"
	bucketDeliveries          = []byte("deliveries")            // delivery id → deliveryRow
	bucketDeliveriesByWebhook = []byte("deliveries_by_webhook") // "<webhook id>\x00<delivery id>"
	bucketDeliveriesDue       = []byte("deliveries_due")        // due ms (8 bytes) + delivery id, pending only
)

// webhookRow is a webhook as stored: the signing secret sealed (conventions §9).
type webhookRow struct {
	data.Webhook
	Secret string `json:"secret"`
}

// secretBytes is the size of a signing key. Standard Webhooks asks for 24 to 64 bytes.
const secretBytes = 32

// newWebhookSecret returns a Standard Webhooks secret ("whsec_" and the base64 of the key)
// and its sealed form for storage.
func (db *DB) newWebhookSecret() (secret, sealed string, err error) {
	key := make([]byte, secretBytes)
	if _, err := rand.Read(key); err != nil {
		return "", "", err
	}
	secret = "whsec_" + base64.StdEncoding.EncodeToString(key)
	sealed, err = db.Seal(secret)
	return secret, sealed, err
}

// currentWorkspace is the workspace the request acts in: webhooks live in the caller's
// current workspace (the spec's "delete webhook" rule, applied to every operation).
func currentWorkspace(ctx context.Context) (string, error) {
	p := data.PrincipalFrom(ctx)
	if p == nil || p.WorkspaceID == "" {
		return "", data.Errorf(data.EFORBIDDEN, "Webhooks need a workspace to act in.")
	}
	return p.WorkspaceID, nil
}

// loadWebhook returns a webhook of workspaceID; any other id is not found.
func loadWebhook(tx *bbolt.Tx, workspaceID, id string) (*webhookRow, error) {
	if !data.ValidID(data.PrefixWebhook, id) {
		return nil, data.NotFound("Webhook")
	}
	var row webhookRow
	found, err := getJSON(tx.Bucket(bucketWebhooks), []byte(id), &row)
	if err != nil {
		return nil, err
	}
	if !found || row.WorkspaceID != workspaceID {
		return nil, data.NotFound("Webhook")
	}
	return &row, nil
}

// ListWebhooks implements data.WebhookService.
func (db *DB) ListWebhooks(ctx context.Context, req data.PageRequest) ([]*data.Webhook, data.Page, error) {
	ws, err := currentWorkspace(ctx)
	if err != nil {
		return nil, data.Page{}, err
	}
	var list []*data.Webhook
	var page data.Page
	err = db.view(func(tx *bbolt.Tx) error {
		ids, pg, err := db.page(tx, bucketWebhooksByWS, ws, req)
		if err != nil {
			return err
		}
		page = pg
		list = make([]*data.Webhook, 0, len(ids))
		for _, id := range ids {
			row, err := loadWebhook(tx, ws, id)
			if err != nil {
				return err
			}
			w := row.Webhook
			list = append(list, &w)
		}
		return nil
	})
	return list, page, err
}

// CreateWebhook implements data.WebhookService.
func (db *DB) CreateWebhook(ctx context.Context, in data.WebhookCreate) (*data.Webhook, string, error) {
	if err := validate.WebhookCreate(in); err != nil {
		return nil, "", err
	}
	ws, err := currentWorkspace(ctx)
	if err != nil {
		return nil, "", err
	}
	secret, sealed, err := db.newWebhookSecret()
	if err != nil {
		return nil, "", err
	}
	enabled := true
	if in.Enabled != nil {
		enabled = *in.Enabled
	}
	var out *data.Webhook
	err = db.update(func(tx *bbolt.Tx) error {
		if err := db.checkQuota(tx, ws, quotaWebhooks); err != nil {
			return err
		}
		now := db.timeNow()
		row := webhookRow{Webhook: data.Webhook{
			ID: db.ids.New(data.PrefixWebhook), WorkspaceID: ws, URL: in.URL,
			Description: in.Description, Events: in.Events, Enabled: enabled,
			CreatedAt: now, UpdatedAt: now,
		}, Secret: sealed}
		if err := putJSON(tx.Bucket(bucketWebhooks), []byte(row.ID), row); err != nil {
			return err
		}
		if err := indexPut(tx.Bucket(bucketWebhooksByWS), ws, row.ID); err != nil {
			return err
		}
		w := row.Webhook
		out = &w
		return nil
	})
	if err != nil {
		return nil, "", err
	}
	return out, secret, nil
}

// Webhook implements data.WebhookService.
func (db *DB) Webhook(ctx context.Context, id string) (*data.Webhook, error) {
	ws, err := currentWorkspace(ctx)
	if err != nil {
		return nil, err
	}
	var out *data.Webhook
	err = db.view(func(tx *bbolt.Tx) error {
		row, err := loadWebhook(tx, ws, id)
		if err == nil {
			w := row.Webhook
			out = &w
		}
		return err
	})
	return out, err
}

// UpdateWebhook implements data.WebhookService.
func (db *DB) UpdateWebhook(ctx context.Context, id string, in data.WebhookUpdate) (*data.Webhook, error) {
	if err := validate.WebhookUpdate(in); err != nil {
		return nil, err
	}
	ws, err := currentWorkspace(ctx)
	if err != nil {
		return nil, err
	}
	var out *data.Webhook
	err = db.update(func(tx *bbolt.Tx) error {
		row, err := loadWebhook(tx, ws, id)
		if err != nil {
			return err
		}
		if err := data.CheckIfMatch(data.IfMatch(ctx), row.Webhook); err != nil {
			return err
		}
		if in.URL.Set {
			row.URL = in.URL.V
		}
		if in.Events.Set {
			row.Events = in.Events.V
		}
		if in.Description.Set {
			row.Description = in.Description.V
		}
		if in.Enabled.Set {
			row.Enabled = in.Enabled.V
		}
		row.UpdatedAt = db.timeNow()
		if err := putJSON(tx.Bucket(bucketWebhooks), []byte(id), row); err != nil {
			return err
		}
		w := row.Webhook
		out = &w
		return nil
	})
	return out, err
}

// DeleteWebhook implements data.WebhookService.
func (db *DB) DeleteWebhook(ctx context.Context, id string) error {
	ws, err := currentWorkspace(ctx)
	if err != nil {
		return err
	}
	return db.update(func(tx *bbolt.Tx) error {
		row, err := loadWebhook(tx, ws, id)
		if err != nil {
			return err
		}
		if err := data.CheckIfMatch(data.IfMatch(ctx), row.Webhook); err != nil {
			return err
		}
		return deleteWebhookTx(tx, row)
	})
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

// RotateWebhookSecret implements data.WebhookService. The old secret stops working at
// once: deliveries posted from now on are signed with the new one.
func (db *DB) RotateWebhookSecret(ctx context.Context, id string) (*data.Webhook, string, error) {
	ws, err := currentWorkspace(ctx)
	if err != nil {
		return nil, "", err
	}
	secret, sealed, err := db.newWebhookSecret()
	if err != nil {
		return nil, "", err
	}
	var out *data.Webhook
	err = db.update(func(tx *bbolt.Tx) error {
		row, err := loadWebhook(tx, ws, id)
		if err != nil {
			return err
		}
		if err := data.CheckIfMatch(data.IfMatch(ctx), row.Webhook); err != nil {
			return err
		}
		row.Secret = sealed
		row.UpdatedAt = db.timeNow()
		if err := putJSON(tx.Bucket(bucketWebhooks), []byte(id), row); err != nil {
			return err
		}
		w := row.Webhook
		out = &w
		return nil
	})
	if err != nil {
		return nil, "", err
	}
	return out, secret, nil
}

// testEventData is the data of a webhook.test event: the fan-out reads webhook_id to send
// it to that webhook alone.
type testEventData struct {
	WebhookID string `json:"webhook_id"`
	Message   string `json:"message"`
}

// SendTestEvent implements data.WebhookService.
func (db *DB) SendTestEvent(ctx context.Context, id string) (*data.Event, error) {
	ws, err := currentWorkspace(ctx)
	if err != nil {
		return nil, err
	}
	var out *data.Event
	err = db.update(func(tx *bbolt.Tx) error {
		if _, err := loadWebhook(tx, ws, id); err != nil {
			return err
		}
		e, err := db.recordEvent(ctx, tx, data.EventWebhookTest, ws, testEventData{WebhookID: id, Message: "This is a test event from voiceapi."})
		out = e
		return err
	})
	return out, err
}
