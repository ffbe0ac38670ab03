package console

import (
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/voiceapi/voiceapi/data"
)

func (h *Handler) webhookRoutes() {
	m := h.mux
	m.HandleFunc("GET /webhooks", h.page(h.webhookList))
	m.HandleFunc("POST /webhooks", h.action(h.webhookCreate))
	m.HandleFunc("GET /webhooks/{id}", h.page(h.webhookShow))
	m.HandleFunc("POST /webhooks/{id}", h.action(h.webhookUpdate))
	m.HandleFunc("POST /webhooks/{id}/delete", h.action(h.webhookDelete))
	m.HandleFunc("POST /webhooks/{id}/test", h.action(h.webhookTest))
	m.HandleFunc("POST /webhooks/{id}/rotate", h.action(h.webhookRotate))
	m.HandleFunc("POST /webhooks/{id}/replay", h.action(h.webhookReplay))
	m.HandleFunc("POST /webhooks/{id}/deliveries/{did}/retry", h.action(h.webhookRetry))
}

func (h *Handler) webhookList(w http.ResponseWriter, r *http.Request) {
	h.renderWebhooks(w, r, http.StatusOK, nil)
}

func (h *Handler) renderWebhooks(w http.ResponseWriter, r *http.Request, status int, fail *apiError) {
	q := url.Values{"per_page": {perPage}}
	if c := r.URL.Query().Get("cursor"); c != "" {
		q.Set("cursor", c)
	}
	res, err := h.call(r, "GET", "/api/v1/webhooks", q, nil)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.render(w, r, status, "webhooks", &view{Title: "Webhooks", Active: "webhooks", Err: fail, Notice: r.URL.Query().Get("notice"), D: map[string]any{
		"Webhooks": res.List(), "Next": res.NextCursor(), "Events": data.EventTypes, "Form": r.PostForm,
	}})
}

// webhookBody reads the create and edit forms.
func webhookBody(r *http.Request) map[string]any {
	events := r.PostForm["events"]
	if events == nil {
		events = []string{}
	}
	return map[string]any{"url": strings.TrimSpace(r.PostFormValue("url")), "description": r.PostFormValue("description"), "events": events}
}

func (h *Handler) webhookCreate(w http.ResponseWriter, r *http.Request) {
	r.ParseForm()
	res, err := h.call(r, "POST", "/api/v1/webhooks", nil, webhookBody(r))
	if err != nil {
		h.renderWebhooks(w, r, err.(*apiError).Status, err.(*apiError))
		return
	}
	// The secret is in this answer only: shown now, never again.
	h.renderWebhook(w, r, http.StatusCreated, str(res.Data()["id"]), str(res.Body["secret"]), nil, "Webhook created.")
}

func (h *Handler) webhookShow(w http.ResponseWriter, r *http.Request) {
	h.renderWebhook(w, r, http.StatusOK, r.PathValue("id"), "", nil, r.URL.Query().Get("notice"))
}

func (h *Handler) renderWebhook(w http.ResponseWriter, r *http.Request, status int, id, secret string, fail *apiError, notice string) {
	res, err := h.call(r, "GET", "/api/v1/webhooks/"+url.PathEscape(id), nil, nil)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	q := url.Values{"per_page": {perPage}}
	if c := r.URL.Query().Get("cursor"); c != "" {
		q.Set("cursor", c)
	}
	dl, err := h.call(r, "GET", "/api/v1/webhooks/"+url.PathEscape(id)+"/deliveries", q, nil)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	wh := res.Data()
	subscribed := map[string]bool{}
	for _, e := range asList(wh["events"]) {
		subscribed[str(e)] = true
	}
	now := time.Now().UTC()
	h.render(w, r, status, "webhook", &view{Title: "Webhook", Active: "webhooks", Err: fail, Notice: notice, D: map[string]any{
		"W": wh, "ETag": res.ETag, "Secret": secret, "Events": data.EventTypes, "Subscribed": subscribed,
		"Deliveries": dl.List(), "Next": dl.NextCursor(),
		"From": now.Add(-24 * time.Hour).Format("2006-01-02T15:04"), "To": now.Add(time.Minute).Format("2006-01-02T15:04"),
	}})
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

func (h *Handler) webhookBack(w http.ResponseWriter, r *http.Request, notice string) {
	http.Redirect(w, r, "/webhooks/"+url.PathEscape(r.PathValue("id"))+"?notice="+url.QueryEscape(notice), http.StatusSeeOther)
}

func (h *Handler) webhookUpdate(w http.ResponseWriter, r *http.Request) {
	r.ParseForm()
	body := webhookBody(r)
	body["enabled"] = r.PostFormValue("enabled") == "on"
	if _, err := h.callIfMatch(r, "PUT", "/api/v1/webhooks/"+url.PathEscape(r.PathValue("id")), r.PostFormValue("etag"), body); err != nil {
		h.renderWebhook(w, r, err.(*apiError).Status, r.PathValue("id"), "", err.(*apiError), "")
		return
	}
	h.webhookBack(w, r, "Saved.")
}

func (h *Handler) webhookDelete(w http.ResponseWriter, r *http.Request) {
	if _, err := h.call(r, "DELETE", "/api/v1/webhooks/"+url.PathEscape(r.PathValue("id")), nil, nil); err != nil {
		h.fail(w, r, err)
		return
	}
	http.Redirect(w, r, "/webhooks?notice=Webhook+deleted.", http.StatusSeeOther)
}

func (h *Handler) webhookTest(w http.ResponseWriter, r *http.Request) {
	if _, err := h.call(r, "POST", "/api/v1/webhooks/"+url.PathEscape(r.PathValue("id"))+"/test", nil, map[string]any{}); err != nil {
		h.fail(w, r, err)
		return
	}
	h.webhookBack(w, r, "Test event queued; its delivery shows below.")
}

func (h *Handler) webhookRotate(w http.ResponseWriter, r *http.Request) {
	res, err := h.call(r, "POST", "/api/v1/webhooks/"+url.PathEscape(r.PathValue("id"))+"/rotate-secret", nil, map[string]any{})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.renderWebhook(w, r, http.StatusOK, r.PathValue("id"), str(res.Body["secret"]), nil, "Secret rotated.")
}

// localTime reads a datetime-local field as UTC.
func localTime(s string) string {
	t, err := time.Parse("2006-01-02T15:04", s)
	if err != nil {
		return s // the API says what is wrong with it
	}
	return t.Format(time.RFC3339)
}

func (h *Handler) webhookReplay(w http.ResponseWriter, r *http.Request) {
	body := map[string]any{"from": localTime(r.PostFormValue("from")), "to": localTime(r.PostFormValue("to"))}
	if _, err := h.call(r, "POST", "/api/v1/webhooks/"+url.PathEscape(r.PathValue("id"))+"/replay", nil, body); err != nil {
		h.renderWebhook(w, r, err.(*apiError).Status, r.PathValue("id"), "", err.(*apiError), "")
		return
	}
	h.webhookBack(w, r, "Replay queued.")
}

func (h *Handler) webhookRetry(w http.ResponseWriter, r *http.Request) {
	path := "/api/v1/webhooks/" + url.PathEscape(r.PathValue("id")) + "/deliveries/" + url.PathEscape(r.PathValue("did")) + "/retry"
	if _, err := h.call(r, "POST", path, nil, map[string]any{}); err != nil {
		h.fail(w, r, err)
		return
	}
	h.webhookBack(w, r, "Retry queued.")
}
