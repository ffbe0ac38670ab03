package service

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"strings"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/validate"
)

// WebhookService implements data.WebhookService: webhooks and their deliveries, in the
// caller's current workspace (conventions §14).
type WebhookService struct{ *base }

var _ data.WebhookService = (*WebhookService)(nil)

// secretBytes is the size of a signing key. Standard Webhooks asks for 24 to 64 bytes.
const secretBytes = 32

// newWebhookSecret returns a Standard Webhooks secret ("whsec_" and the base64 of the key)
// and its sealed form for storage.
func (b *base) newWebhookSecret() (secret, sealed string, err error) {
	key := make([]byte, secretBytes)
	if _, err := rand.Read(key); err != nil {
		return "", "", err
	}
	secret = "whsec_" + base64.StdEncoding.EncodeToString(key)
	sealed, err = b.sealer.Seal(secret)
	return secret, sealed, err
}

// currentWorkspace is the workspace the request acts in: webhooks and the audit log live
// in the caller's current workspace (the spec's "delete webhook" rule, applied to every
// operation).
func currentWorkspace(ctx context.Context) (string, error) {
	p := data.PrincipalFrom(ctx)
	if p == nil || p.WorkspaceID == "" {
		return "", data.Errorf(data.EFORBIDDEN, "Webhooks need a workspace to act in.")
	}
	return p.WorkspaceID, nil
}

// mayCarry refuses a caller who may not read every event of the types a webhook carries
// (visibility.go): a webhook sends every event of its types, of every agent, to its
// receiver, so only who may read them all configures, tests, replays or retries it,
// reads its deliveries (withTestEvents; conventions §6) or deletes it (which silences them:
// a narrow key must not stop the monitoring of events it could never read). The route
// admits owners and admins whose token sees every agent; a key with scopes must also
// hold the read scope of each module the types belong to, and audit:read for security
// events. The refusal names the types and the scopes the key lacks (conventions §20).
func (b *base) mayCarry(ctx context.Context, w *data.Webhook) error {
	v := b.eventVisibility(data.PrincipalFrom(ctx))
	if !v.allAgents() {
		return data.Errorf(data.EFORBIDDEN, "A webhook carries the events of every agent; this token is limited to some agents.")
	}
	var hidden []string
	for _, t := range carriable(v).Withheld {
		if w.Subscribes(t) {
			hidden = append(hidden, t)
		}
	}
	if len(hidden) == 0 {
		return nil
	}
	if lacks := v.lacks(hidden); len(lacks) > 0 {
		return data.Errorf(data.EFORBIDDEN, "This token may not read every event the webhook carries (%s): this API key lacks %s.", strings.Join(hidden, ", "), strings.Join(lacks, ", "))
	}
	return data.Errorf(data.EFORBIDDEN, "This token may not read every event the webhook carries (%s): a key with scopes needs the read scope of their module, and audit:read for security events.", strings.Join(hidden, ", "))
}

// carriable splits the event types into those v reads every event of, which a webhook
// of its caller may carry, and the rest: the one rule behind mayCarry and EventTypes, so
// what the console offers is what a create accepts.
func carriable(v visibility) *data.WebhookEventTypes {
	out := &data.WebhookEventTypes{Types: []string{}, Withheld: []string{}}
	for _, t := range data.EventTypes {
		if v.allAgents() && v.eventType(t) {
			out.Types = append(out.Types, t)
		} else {
			out.Withheld = append(out.Withheld, t)
		}
	}
	return out
}

// EventTypes implements data.WebhookService.
func (s *WebhookService) EventTypes(ctx context.Context) (*data.WebhookEventTypes, error) {
	if _, err := currentWorkspace(ctx); err != nil {
		return nil, err
	}
	return carriable(s.eventVisibility(data.PrincipalFrom(ctx))), nil
}

// loadWebhook returns a webhook of workspaceID; any other id is not found.
func loadWebhook(tx Tx, workspaceID, id string) (*data.WebhookRecord, error) {
	if !data.ValidID(data.PrefixWebhook, id) {
		return nil, data.NotFound("Webhook")
	}
	w, err := tx.Webhook(id)
	if err != nil {
		return nil, err
	}
	if w == nil || w.WorkspaceID != workspaceID {
		return nil, data.NotFound("Webhook")
	}
	return w, nil
}

// publicWebhook is the webhook as clients see it: a copy, without the secret.
func publicWebhook(w *data.WebhookRecord) *data.Webhook {
	out := w.Webhook
	return &out
}

// ListWebhooks implements data.WebhookService.
func (s *WebhookService) ListWebhooks(ctx context.Context, req data.PageRequest) ([]*data.Webhook, data.Page, error) {
	ws, err := currentWorkspace(ctx)
	if err != nil {
		return nil, data.Page{}, err
	}
	var list []*data.Webhook
	var page data.Page
	err = s.store.View(ctx, func(tx Tx) error {
		rows, pg, err := tx.Webhooks(ws, req)
		page = pg
		list = make([]*data.Webhook, 0, len(rows))
		for _, w := range rows {
			list = append(list, publicWebhook(w))
		}
		return err
	})
	return list, page, err
}

// CreateWebhook implements data.WebhookService.
func (s *WebhookService) CreateWebhook(ctx context.Context, in data.WebhookCreate) (*data.Webhook, string, error) {
	if err := checkInput(ctx, validate.WebhookCreate(in, s.urlGuard)); err != nil {
		return nil, "", err
	}
	ws, err := currentWorkspace(ctx)
	if err != nil {
		return nil, "", err
	}
	if err := s.mayCarry(ctx, &data.Webhook{Events: in.Events}); err != nil {
		return nil, "", err
	}
	secret, sealed, err := s.newWebhookSecret()
	if err != nil {
		return nil, "", err
	}
	enabled := true
	if in.Enabled != nil {
		enabled = *in.Enabled
	}
	var out *data.Webhook
	err = s.store.Update(ctx, func(tx Tx) error {
		if err := checkQuota(tx, ws, data.LimitWebhooks); err != nil {
			return err
		}
		now := s.timeNow()
		w := &data.WebhookRecord{Webhook: data.Webhook{
			ID: s.ids.New(data.PrefixWebhook), WorkspaceID: ws, URL: in.URL,
			Description: in.Description, Events: in.Events, Enabled: enabled,
			CreatedAt: now, UpdatedAt: now,
		}, SealedSecret: sealed}
		out = publicWebhook(w)
		if err := tx.PutWebhook(w); err != nil {
			return err
		}
		answerClaim(ctx, out, map[string]any{"secret": secret})
		_, err := s.record(ctx, tx, data.EventWebhookCreated, ws, out)
		return err
	})
	if err != nil {
		return nil, "", err
	}
	return out, secret, nil
}

// Webhook implements data.WebhookService.
func (s *WebhookService) Webhook(ctx context.Context, id string) (*data.Webhook, error) {
	ws, err := currentWorkspace(ctx)
	if err != nil {
		return nil, err
	}
	var out *data.Webhook
	err = s.store.View(ctx, func(tx Tx) error {
		w, err := loadWebhook(tx, ws, id)
		if err == nil {
			out = publicWebhook(w)
		}
		return err
	})
	return out, err
}

// change loads the caller's webhook id for a write, checks If-Match, lets apply change
// it, checks that the caller may read every event it then carries, stamps updated_at and
// stores it.
func (s *WebhookService) change(ctx context.Context, id, event string, apply func(w *data.WebhookRecord)) (*data.Webhook, error) {
	ws, err := currentWorkspace(ctx)
	if err != nil {
		return nil, err
	}
	var out *data.Webhook
	err = s.store.Update(ctx, func(tx Tx) error {
		w, err := loadWebhook(tx, ws, id)
		if err != nil {
			return err
		}
		if err := data.CheckIfMatch(data.IfMatch(ctx), w.Webhook); err != nil {
			return err
		}
		before := storedSnapshot(w)
		apply(w)
		if err := s.mayCarry(ctx, &w.Webhook); err != nil {
			return err
		}
		if unchangedSince(before, w) {
			out = publicWebhook(w)
			return errNothingToWrite // nothing changed: no write, no event (unchanged.go)
		}
		w.UpdatedAt = s.timeNow()
		out = publicWebhook(w)
		if err := tx.PutWebhook(w); err != nil {
			return err
		}
		_, err = s.record(ctx, tx, event, ws, out) // the record, never the secret
		return err
	})
	return out, err
}

// UpdateWebhook implements data.WebhookService.
func (s *WebhookService) UpdateWebhook(ctx context.Context, id string, in data.WebhookUpdate) (*data.Webhook, error) {
	if err := checkInput(ctx, validate.WebhookUpdate(in, s.urlGuard)); err != nil {
		return nil, err
	}
	return s.change(ctx, id, data.EventWebhookUpdated, func(w *data.WebhookRecord) {
		if in.URL.Set {
			w.URL = in.URL.V
		}
		if in.Events.Set {
			w.Events = in.Events.V
		}
		if in.Description.Set {
			w.Description = in.Description.V
		}
		if in.Enabled.Set {
			w.Enabled = in.Enabled.V
		}
	})
}

// DeleteWebhook implements data.WebhookService.
func (s *WebhookService) DeleteWebhook(ctx context.Context, id string) error {
	ws, err := currentWorkspace(ctx)
	if err != nil {
		return err
	}
	return s.store.Update(ctx, func(tx Tx) error {
		w, err := loadWebhook(tx, ws, id)
		if err != nil {
			return err
		}
		if err := data.CheckIfMatch(data.IfMatch(ctx), w.Webhook); err != nil {
			return err
		}
		// Deleting a webhook silences every event it carries: only who may read them
		// all may, as for any change of it (conventions §6, §20).
		if err := s.mayCarry(ctx, &w.Webhook); err != nil {
			return err
		}
		if err := tx.DeleteWebhook(id); err != nil {
			return err
		}
		_, err = s.record(ctx, tx, data.EventWebhookDeleted, ws, publicWebhook(w))
		return err
	})
}

// RotateWebhookSecret implements data.WebhookService. The old secret stops working at
// once: deliveries posted from now on are signed with the new one.
func (s *WebhookService) RotateWebhookSecret(ctx context.Context, id string) (*data.Webhook, string, error) {
	if _, err := currentWorkspace(ctx); err != nil {
		return nil, "", err
	}
	secret, sealed, err := s.newWebhookSecret()
	if err != nil {
		return nil, "", err
	}
	out, err := s.change(ctx, id, data.EventWebhookSecretRotated, func(w *data.WebhookRecord) { w.SealedSecret = sealed })
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
func (s *WebhookService) SendTestEvent(ctx context.Context, id string) (*data.Event, error) {
	ws, err := currentWorkspace(ctx)
	if err != nil {
		return nil, err
	}
	var out *data.Event
	err = s.store.Update(ctx, func(tx Tx) error {
		if _, err := loadWebhook(tx, ws, id); err != nil {
			return err
		}
		// The answer is the webhook.test event, and its delivery names it: the caller
		// must read such events (audit:read on a key with scopes), as it must to read or
		// retry that delivery.
		if err := s.mayCarry(ctx, &data.Webhook{Events: []string{data.EventWebhookTest}}); err != nil {
			return err
		}
		e, err := s.record(ctx, tx, data.EventWebhookTest, ws, testEventData{WebhookID: id, Message: "This is a test event from voiceapi."})
		out = e
		if err == nil {
			answerClaimAction(ctx, e)
		}
		return err
	})
	return out, err
}
