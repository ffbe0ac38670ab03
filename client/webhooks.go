package client

import (
	"context"
	"iter"

	"github.com/voiceapi/voiceapi/data"
)

// WebhooksService calls the webhook and delivery routes.
type WebhooksService struct{ c *Client }

// WebhookWithSecret is a webhook with its signing secret ("whsec_…"), which the server
// shows only on create and rotate.
type WebhookWithSecret struct {
	Webhook *data.Webhook
	Secret  string
	ETag    string
}

// ReplayResult is how many events a replay queued again, and the range.
type ReplayResult struct {
	Count int       `json:"count"`
	From  data.Time `json:"from"`
	To    data.Time `json:"to"`
}

// List returns one page of webhooks, newest first.
func (s *WebhooksService) List(ctx context.Context, p data.PageRequest, opts ...RequestOption) ([]*data.Webhook, data.Page, error) {
	res, err := s.c.do(ctx, request{op: "webhookList", query: pageQuery(nil, p), opts: opts})
	if err != nil {
		return nil, data.Page{}, err
	}
	return list[data.Webhook](res)
}

// All iterates over every webhook.
func (s *WebhooksService) All(ctx context.Context, opts ...RequestOption) iter.Seq2[*data.Webhook, error] {
	return all(ctx, s.c, func(ctx context.Context, p data.PageRequest) ([]*data.Webhook, data.Page, error) {
		return s.List(ctx, p, opts...)
	})
}

// EventTypes returns the event types this token may subscribe a webhook to, and those
// withheld from it (a create or update naming one is 403).
func (s *WebhooksService) EventTypes(ctx context.Context, opts ...RequestOption) (*data.WebhookEventTypes, error) {
	var out data.WebhookEventTypes
	if err := s.c.dataOf(ctx, request{op: "webhookEventTypes", opts: opts}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Create makes a webhook and returns it with its signing secret.
func (s *WebhooksService) Create(ctx context.Context, in data.WebhookCreate, opts ...RequestOption) (*WebhookWithSecret, error) {
	return s.withSecret(ctx, "webhookCreate", nil, in, opts)
}

func (s *WebhooksService) withSecret(ctx context.Context, op string, args []string, body any, opts []RequestOption) (*WebhookWithSecret, error) {
	req := request{op: op, pathArgs: args, opts: opts}
	if body != nil {
		b, err := jsonBody(body)
		if err != nil {
			return nil, err
		}
		req.body, req.contentType = b, "application/json"
	}
	res, err := s.c.do(ctx, req)
	if err != nil {
		return nil, err
	}
	out := &WebhookWithSecret{}
	out.Webhook, out.ETag, err = recordWith[data.Webhook](res, "secret", &out.Secret)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Get returns a webhook.
func (s *WebhooksService) Get(ctx context.Context, id string, opts ...RequestOption) (*data.Webhook, string, error) {
	return getRecord[data.Webhook](ctx, s.c, "webhookShow", []string{id}, opts)
}

// Update changes the set fields.
func (s *WebhooksService) Update(ctx context.Context, id string, in data.WebhookUpdate, opts ...RequestOption) (*data.Webhook, string, error) {
	return sendRecord[data.Webhook](ctx, s.c, "webhookUpdate", []string{id}, in, opts)
}

// Delete removes a webhook and its deliveries.
func (s *WebhooksService) Delete(ctx context.Context, id string, opts ...RequestOption) error {
	return s.c.noContent(ctx, "webhookDelete", []string{id}, nil, opts)
}

// RotateSecret replaces the signing secret and returns the new one.
func (s *WebhooksService) RotateSecret(ctx context.Context, id string, opts ...RequestOption) (*WebhookWithSecret, error) {
	return s.withSecret(ctx, "webhookRotateSecret", []string{id}, nil, opts)
}

// Test sends a webhook.test event to this webhook only and returns the event.
func (s *WebhooksService) Test(ctx context.Context, id string, opts ...RequestOption) (*data.Event, error) {
	var out data.Event
	if err := s.c.dataOf(ctx, request{op: "webhookTest", pathArgs: []string{id}, opts: opts}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Replay queues again, for this webhook, every event created in [in.From, in.To).
func (s *WebhooksService) Replay(ctx context.Context, id string, in data.WebhookReplay, opts ...RequestOption) (*ReplayResult, error) {
	b, err := jsonBody(in)
	if err != nil {
		return nil, err
	}
	var out ReplayResult
	err = s.c.dataOf(ctx, request{op: "webhookReplay", pathArgs: []string{id}, body: b, contentType: "application/json", opts: opts}, &out)
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// ListDeliveries returns one page of the webhook's delivery attempts, newest first.
func (s *WebhooksService) ListDeliveries(ctx context.Context, id string, p data.PageRequest, opts ...RequestOption) ([]*data.Delivery, data.Page, error) {
	res, err := s.c.do(ctx, request{op: "deliveryList", pathArgs: []string{id}, query: pageQuery(nil, p), opts: opts})
	if err != nil {
		return nil, data.Page{}, err
	}
	return list[data.Delivery](res)
}

// AllDeliveries iterates over every delivery attempt of the webhook.
func (s *WebhooksService) AllDeliveries(ctx context.Context, id string, opts ...RequestOption) iter.Seq2[*data.Delivery, error] {
	return all(ctx, s.c, func(ctx context.Context, p data.PageRequest) ([]*data.Delivery, data.Page, error) {
		return s.ListDeliveries(ctx, id, p, opts...)
	})
}

// RetryDelivery queues a delivery's event again and returns the new pending delivery.
func (s *WebhooksService) RetryDelivery(ctx context.Context, id, deliveryID string, opts ...RequestOption) (*data.Delivery, error) {
	var out data.Delivery
	if err := s.c.dataOf(ctx, request{op: "deliveryRetry", pathArgs: []string{id, deliveryID}, opts: opts}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
