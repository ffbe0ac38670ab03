package server

import (
	"net/http"

	"github.com/gorilla/mux"

	"github.com/voiceapi/voiceapi/data"
)

// webhookRoutes are gated by role, not by a module (conventions §6, §14): a webhook
// carries every event of the workspace, security events included, so only owners and
// admins whose token sees every agent manage them, reading and writing alike. The
// service also refuses a key with scopes that may not read every event a webhook carries.
func (s *Server) webhookRoutes() []route {
	const base = "/api/v1/webhooks"
	need, change := data.NeedWebhooks(false), data.NeedWebhooks(true)
	return []route{
		{Method: "GET", Path: base, Need: need, handle: s.handleWebhookList},
		// Before {webhook_id}, which would otherwise take "event-types" as an id.
		{Method: "GET", Path: base + "/event-types", Need: need, handle: s.handleWebhookEventTypes},
		{Method: "POST", Path: base, Need: change, Idempotent: true, handle: s.handleWebhookCreate},
		{Method: "GET", Path: base + "/{webhook_id}", Need: need, handle: s.handleWebhookShow},
		{Method: "PUT", Path: base + "/{webhook_id}", Need: change, handle: s.handleWebhookUpdate},
		{Method: "DELETE", Path: base + "/{webhook_id}", Need: change, handle: s.handleWebhookDelete},
		{Method: "POST", Path: base + "/{webhook_id}/rotate-secret", Need: change, NoBody: true, handle: s.handleWebhookRotateSecret},
		{Method: "POST", Path: base + "/{webhook_id}/test", Need: change, NoBody: true, Idempotent: true, handle: s.handleWebhookTest},
		{Method: "POST", Path: base + "/{webhook_id}/replay", Need: change, Idempotent: true, handle: s.handleWebhookReplay},
		{Method: "GET", Path: base + "/{webhook_id}/deliveries", Need: need, handle: s.handleDeliveryList},
		{Method: "POST", Path: base + "/{webhook_id}/deliveries/{delivery_id}/retry", Need: change, NoBody: true, Idempotent: true, handle: s.handleDeliveryRetry},
	}
}

// handleWebhookList: GET /api/v1/webhooks — the current workspace's webhooks.
func (s *Server) handleWebhookList(w http.ResponseWriter, r *http.Request) error {
	req, err := pageRequest(r)
	if err != nil {
		return err
	}
	list, page, err := s.svc.Webhooks.ListWebhooks(r.Context(), req)
	if err != nil {
		return err
	}
	return writeList(w, list, page)
}

// handleWebhookEventTypes: GET /api/v1/webhooks/event-types — the types the caller may
// subscribe a webhook to, and those withheld from it.
func (s *Server) handleWebhookEventTypes(w http.ResponseWriter, r *http.Request) error {
	types, err := s.svc.Webhooks.EventTypes(r.Context())
	if err != nil {
		return err
	}
	return writeRecord(w, http.StatusOK, types, nil)
}

// handleWebhookCreate: POST /api/v1/webhooks — 201 with the secret, once, top-level.
func (s *Server) handleWebhookCreate(w http.ResponseWriter, r *http.Request) error {
	var in data.WebhookCreate
	ctx, err := decodeInput(r, &in)
	if err != nil {
		return err
	}
	wh, secret, err := s.svc.Webhooks.CreateWebhook(ctx, in)
	if err != nil {
		return err
	}
	return writeRecord(w, http.StatusCreated, wh, map[string]any{"secret": secret})
}

// handleWebhookShow: GET /api/v1/webhooks/{webhook_id}.
func (s *Server) handleWebhookShow(w http.ResponseWriter, r *http.Request) error {
	wh, err := s.svc.Webhooks.Webhook(r.Context(), mux.Vars(r)["webhook_id"])
	if err != nil {
		return err
	}
	return writeRecord(w, http.StatusOK, wh, nil)
}

// handleWebhookUpdate: PUT /api/v1/webhooks/{webhook_id} — url, events, description, enabled.
func (s *Server) handleWebhookUpdate(w http.ResponseWriter, r *http.Request) error {
	var in data.WebhookUpdate
	ctx, err := decodeInput(r, &in)
	if err != nil {
		return err
	}
	wh, err := s.svc.Webhooks.UpdateWebhook(ctx, mux.Vars(r)["webhook_id"], in)
	if err != nil {
		return err
	}
	return writeRecord(w, http.StatusOK, wh, nil)
}

// handleWebhookDelete: DELETE /api/v1/webhooks/{webhook_id} — 204; current workspace only.
func (s *Server) handleWebhookDelete(w http.ResponseWriter, r *http.Request) error {
	if err := s.svc.Webhooks.DeleteWebhook(r.Context(), mux.Vars(r)["webhook_id"]); err != nil {
		return err
	}
	return writeNoContent(w)
}

// handleWebhookRotateSecret: POST /api/v1/webhooks/{webhook_id}/rotate-secret — 200 with the new
// secret top-level.
func (s *Server) handleWebhookRotateSecret(w http.ResponseWriter, r *http.Request) error {
	wh, secret, err := s.svc.Webhooks.RotateWebhookSecret(r.Context(), mux.Vars(r)["webhook_id"])
	if err != nil {
		return err
	}
	return writeRecord(w, http.StatusOK, wh, map[string]any{"secret": secret})
}

// handleWebhookTest: POST /api/v1/webhooks/{webhook_id}/test — 202 with the webhook.test event,
// which is delivered to this webhook only.
func (s *Server) handleWebhookTest(w http.ResponseWriter, r *http.Request) error {
	e, err := s.svc.Webhooks.SendTestEvent(r.Context(), mux.Vars(r)["webhook_id"])
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusAccepted, map[string]any{"data": e})
	return nil
}

// handleWebhookReplay: POST /api/v1/webhooks/{webhook_id}/replay {"from", "to"} — 202 with how
// many events were queued again.
func (s *Server) handleWebhookReplay(w http.ResponseWriter, r *http.Request) error {
	var in data.WebhookReplay
	ctx, err := decodeInput(r, &in)
	if err != nil {
		return err
	}
	n, err := s.svc.Webhooks.ReplayEvents(ctx, mux.Vars(r)["webhook_id"], in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusAccepted, map[string]any{"data": data.WebhookReplayed{Count: n, From: in.From, To: in.To}})
	return nil
}

// handleDeliveryList: GET /api/v1/webhooks/{webhook_id}/deliveries — every attempt, newest first.
func (s *Server) handleDeliveryList(w http.ResponseWriter, r *http.Request) error {
	req, err := pageRequest(r)
	if err != nil {
		return err
	}
	list, page, err := s.svc.Webhooks.ListDeliveries(r.Context(), mux.Vars(r)["webhook_id"], req)
	if err != nil {
		return err
	}
	return writeList(w, list, page)
}

// handleDeliveryRetry: POST /api/v1/webhooks/{webhook_id}/deliveries/{delivery_id}/retry — 202
// with the new pending delivery.
func (s *Server) handleDeliveryRetry(w http.ResponseWriter, r *http.Request) error {
	v := mux.Vars(r)
	d, err := s.svc.Webhooks.RetryDelivery(r.Context(), v["webhook_id"], v["delivery_id"])
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusAccepted, map[string]any{"data": d})
	return nil
}
