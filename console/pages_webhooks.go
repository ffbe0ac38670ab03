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
	m.HandleFunc("GET /webhooks/{id}/delete", h.page(h.webhookDeleteConfirm))
	m.HandleFunc("POST /webhooks/{id}/delete", h.action(h.webhookDelete))
	m.HandleFunc("POST /webhooks/{id}/test", h.action(h.webhookTest))
	m.HandleFunc("GET /webhooks/{id}/rotate", h.page(h.webhookRotateConfirm))
	m.HandleFunc("POST /webhooks/{id}/rotate", h.action(h.webhookRotate))
	m.HandleFunc("POST /webhooks/{id}/replay", h.action(h.webhookReplay))
	m.HandleFunc("POST /webhooks/{id}/deliveries/{did}/retry", h.action(h.webhookRetry))
}

// webhookLabels are the webhook forms' labels, for the API's messages.
var webhookLabels = fieldLabels{"url": "URL", "description": "Description", "events": "Events", "events.#": "Event #",
	"from": "From", "to": "To"}

func (h *Handler) webhookList(w http.ResponseWriter, r *http.Request) {
	h.renderWebhooks(w, r, http.StatusOK, nil)
}

func (h *Handler) renderWebhooks(w http.ResponseWriter, r *http.Request, status int, fail *apiError) {
	q := pageQuery(perPage, r.URL.Query().Get("cursor"))
	res, err := h.call(r, "GET", "/api/v1/webhooks", q, nil)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	picker, err := h.eventPicker(r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	r.ParseForm()
	h.render(w, r, status, "webhooks", &view{Title: "Webhooks", Active: "webhooks", Err: relabel(fail, webhookLabels), D: map[string]any{
		"Webhooks": res.List(), "Pages": pagerOf(r, "cursor", res), "Picker": picker.with(checked(r.PostForm["events"])), "Form": r.PostForm,
	}})
}

// eventGroup is the event types of one resource, for the grouped picker.
type eventGroup struct {
	Label string
	Types []string
}

// eventResources name the resources of the event types, for the picker's groups.
var eventResources = map[string]string{
	"agent": "Agents", "knowledge_base": "Knowledge bases", "number": "Numbers", "call": "Calls",
	"webhook": "Webhooks", "workspace": "Workspace", "member": "Members", "api_key": "API keys",
	"user": "Accounts", "subscription": "Subscription", "backup": "Backups", "retention": "Retention",
}

// eventPicker is what the webhook forms offer: the event types the API lets this
// sign-in subscribe to, grouped, and those it withholds (the caller's modules or agents
// do not read every event of them), so the form never offers what a save refuses.
type eventPicker struct {
	Groups   []eventGroup
	Withheld []string
	// On are the types the form shows checked.
	On map[string]bool
}

func (h *Handler) eventPicker(r *http.Request) (eventPicker, error) {
	res, err := h.call(r, "GET", "/api/v1/webhooks/event-types", nil, nil)
	if err != nil {
		return eventPicker{}, err
	}
	d := res.Data()
	return eventPicker{Groups: eventGroups(strs(d["types"])), Withheld: strs(d["withheld"])}, nil
}

func (p eventPicker) with(on map[string]bool) eventPicker {
	p.On = on
	return p
}

// eventGroups groups types (in data.EventTypes' order) by their resource (the part
// before the dot), in the order the list first names each.
func eventGroups(types []string) []eventGroup {
	var out []eventGroup
	at := map[string]int{}
	for _, t := range types {
		res, _, _ := strings.Cut(t, ".")
		i, ok := at[res]
		if !ok {
			i = len(out)
			at[res] = i
			name, ok := eventResources[res]
			if !ok {
				name = humanize(res)
			}
			out = append(out, eventGroup{Label: name})
		}
		out[i].Types = append(out[i].Types, t)
	}
	return out
}

func checked(values []string) map[string]bool {
	out := map[string]bool{}
	for _, v := range values {
		out[v] = true
	}
	return out
}

// webhookBody reads the create and edit forms.
func webhookBody(r *http.Request) map[string]any {
	events := r.PostForm["events"]
	if has(events, "*") {
		events = []string{"*"} // every event, those added later included
	}
	if events == nil {
		events = []string{}
	}
	return map[string]any{"url": strings.TrimSpace(r.PostFormValue("url")), "description": r.PostFormValue("description"), "events": events}
}

func (h *Handler) webhookCreate(w http.ResponseWriter, r *http.Request) {
	r.ParseForm()
	res, err := h.create(r, "/api/v1/webhooks", webhookBody(r))
	if err != nil {
		h.renderWebhooks(w, r, err.(*apiError).Status, err.(*apiError))
		return
	}
	// The secret is in this answer only: the next page shows it once.
	h.done(w, r, "/webhooks/"+url.PathEscape(str(res.Data()["id"])), flash{Notice: "Webhook created.",
		Secrets: []secret{{Label: "The signing secret", Value: str(res.Body["secret"])}}})
}

func (h *Handler) webhookShow(w http.ResponseWriter, r *http.Request) {
	h.renderWebhook(w, r, http.StatusOK, nil)
}

func (h *Handler) renderWebhook(w http.ResponseWriter, r *http.Request, status int, fail *apiError) {
	id := r.PathValue("id")
	res, err := h.call(r, "GET", "/api/v1/webhooks/"+url.PathEscape(id), nil, nil)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	q := pageQuery(perPage, r.URL.Query().Get("cursor"))
	// A token that may not read every event the webhook carries (a key with scopes in
	// the session) sees it without its deliveries, and the API's reason; the API lists
	// a token that may only the deliveries it reads.
	var deliveries []any
	var pages pager
	withheld := ""
	dl, err := h.call(r, "GET", "/api/v1/webhooks/"+url.PathEscape(id)+"/deliveries", q, nil)
	if ae, ok := err.(*apiError); ok && ae.Status == http.StatusForbidden {
		withheld = ae.Message
	} else if err != nil {
		h.fail(w, r, err)
		return
	} else {
		deliveries, pages = dl.List(), pagerOf(r, "cursor", dl)
	}
	picker, err := h.eventPicker(r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	wh := res.Data()
	now := time.Now().UTC()
	from, to := now.Add(-24*time.Hour).Format("2006-01-02T15:04"), now.Add(time.Minute).Format("2006-01-02T15:04")
	if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/replay") {
		// A refused replay shows the range as typed (it came back as the last day's).
		zone := r.PostFormValue("tz")
		from, to = typedUTC(r.PostFormValue("from"), zone), typedUTC(r.PostFormValue("to"), zone)
	}
	h.render(w, r, status, "webhook", &view{Title: "Webhook", Active: "webhooks", Err: relabel(fail, webhookLabels), D: map[string]any{
		"W": wh, "ETag": res.ETag, "Picker": picker.with(checked(strs(wh["events"]))),
		"Deliveries": deliveries, "Pages": pages, "DeliveriesWithheld": withheld,
		// A test event is a webhook.test event, which the token must read to send one.
		"CanTest": !has(picker.Withheld, "webhook.test"),
		// Its changes, replay, rotation and delete need a token that reads every event
		// it carries (the API's rule, 403 otherwise): not offered to any other.
		"Uncarried": strings.Join(uncarried(strs(wh["events"]), picker.Withheld), ", "),
		"From":      from, "To": to,
	}})
}

// uncarried are the types of withheld (event-types' answer: those the token may not
// read every event of) that a webhook of events carries; none when the token may manage it.
func uncarried(events, withheld []string) []string {
	var out []string
	wh := &data.Webhook{Events: events} // which types it carries is data's rule
	for _, t := range withheld {
		if wh.Subscribes(t) {
			out = append(out, t)
		}
	}
	return out
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

// webhookBack ends a webhook form's POST on its page, with notice beside the form at.
func (h *Handler) webhookBack(w http.ResponseWriter, r *http.Request, at, notice string) {
	h.done(w, r, "/webhooks/"+url.PathEscape(r.PathValue("id")), flash{Notice: notice, At: at})
}

// webhookFailed shows the webhook's page again with a form's refusal.
func (h *Handler) webhookFailed(w http.ResponseWriter, r *http.Request, err error) {
	h.renderWebhook(w, r, err.(*apiError).Status, err.(*apiError))
}

func (h *Handler) webhookUpdate(w http.ResponseWriter, r *http.Request) {
	r.ParseForm()
	body := webhookBody(r)
	body["enabled"] = r.PostFormValue("enabled") == "on"
	if _, err := h.callIfMatch(r, "PUT", "/api/v1/webhooks/"+url.PathEscape(r.PathValue("id")), r.PostFormValue("etag"), body); err != nil {
		h.webhookFailed(w, r, err)
		return
	}
	h.webhookBack(w, r, "wh-settings", "Saved.")
}

// webhookConfirmed loads the webhook a confirmation names; nil when it has failed. The
// confirmed actions (delete, secret rotation) need a token that reads every event the
// webhook carries, as the API asks (mayCarry): any other is refused here, not offered a
// button the API answers 403.
func (h *Handler) webhookConfirmed(w http.ResponseWriter, r *http.Request) map[string]any {
	res, err := h.call(r, "GET", "/api/v1/webhooks/"+url.PathEscape(r.PathValue("id")), nil, nil)
	if err != nil {
		h.fail(w, r, err)
		return nil
	}
	picker, err := h.eventPicker(r)
	if err != nil {
		h.fail(w, r, err)
		return nil
	}
	if u := uncarried(strs(res.Data()["events"]), picker.Withheld); len(u) > 0 {
		h.fail(w, r, &apiError{Status: http.StatusForbidden, Code: data.EFORBIDDEN,
			Message: "This webhook carries events your token may not read (" + strings.Join(u, ", ") +
				"): only a token that reads every event it carries rotates the secret of or deletes it."})
		return nil
	}
	return res.Data()
}

func (h *Handler) webhookDeleteConfirm(w http.ResponseWriter, r *http.Request) {
	wh := h.webhookConfirmed(w, r)
	if wh == nil {
		return
	}
	h.confirmPage(w, r, "webhooks", confirmation{
		Title: "Delete the webhook to " + str(wh["url"]) + "?", Need: needOf(data.NeedWebhooks(true)),
		Lost: []string{"Deliveries to " + str(wh["url"]) + " stop, those waiting for a retry included.",
			"Its delivery log and its signing secret."},
		Button: "Delete webhook", Cancel: "/webhooks/" + url.PathEscape(str(wh["id"])), Crumb: "Webhooks", CrumbHref: "/webhooks",
	}, http.StatusOK, nil)
}

func (h *Handler) webhookDelete(w http.ResponseWriter, r *http.Request) {
	if _, err := h.call(r, "DELETE", "/api/v1/webhooks/"+url.PathEscape(r.PathValue("id")), nil, nil); err != nil {
		h.fail(w, r, err)
		return
	}
	h.done(w, r, "/webhooks", flash{Notice: "Webhook deleted."})
}

func (h *Handler) webhookTest(w http.ResponseWriter, r *http.Request) {
	if _, err := h.send(r, apiCall{Method: "POST", Path: "/api/v1/webhooks/" + url.PathEscape(r.PathValue("id")) + "/test",
		IdempotencyKey: r.PostFormValue(idempotencyField)}); err != nil {
		h.fail(w, r, err)
		return
	}
	h.webhookBack(w, r, "deliveries", "Test event queued; its delivery shows below.")
}

func (h *Handler) webhookRotateConfirm(w http.ResponseWriter, r *http.Request) {
	wh := h.webhookConfirmed(w, r)
	if wh == nil {
		return
	}
	h.confirmPage(w, r, "webhooks", confirmation{
		Title: "Rotate the signing secret of " + str(wh["url"]) + "?", Need: needOf(data.NeedWebhooks(true)),
		Lost: []string{"The current secret stops signing at once: the receiver rejects every delivery until it has the new one.",
			"The new secret is shown once, on the next page."},
		Button: "Rotate secret", Cancel: "/webhooks/" + url.PathEscape(str(wh["id"])), Crumb: "Webhooks", CrumbHref: "/webhooks",
	}, http.StatusOK, nil)
}

func (h *Handler) webhookRotate(w http.ResponseWriter, r *http.Request) {
	res, err := h.call(r, "POST", "/api/v1/webhooks/"+url.PathEscape(r.PathValue("id"))+"/rotate-secret", nil, nil)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.done(w, r, "/webhooks/"+url.PathEscape(r.PathValue("id")), flash{Notice: "Secret rotated.",
		Secrets: []secret{{Label: "The new signing secret", Value: str(res.Body["secret"])}}})
}

// typedTime reads a datetime-local field in zone, the browser's time zone its form names
// (patterns.js fills it), or in UTC when it names none (the page without script, whose
// labels say UTC) or one this binary does not know.
func typedTime(s, zone string) string {
	loc := time.UTC
	if zone != "" {
		if l, err := time.LoadLocation(zone); err == nil {
			loc = l
		}
	}
	t, err := time.ParseInLocation("2006-01-02T15:04", s, loc)
	if err != nil {
		return s // the API says what is wrong with it
	}
	return t.Format(time.RFC3339)
}

// typedUTC is a typed datetime-local value as the field holds it (data-utc: in UTC, which
// patterns.js shows in the browser's zone again); a value it cannot read, as typed.
func typedUTC(s, zone string) string {
	t, err := time.Parse(time.RFC3339, typedTime(s, zone))
	if err != nil {
		return s
	}
	return t.UTC().Format("2006-01-02T15:04")
}

func (h *Handler) webhookReplay(w http.ResponseWriter, r *http.Request) {
	zone := r.PostFormValue("tz")
	body := map[string]any{"from": typedTime(r.PostFormValue("from"), zone), "to": typedTime(r.PostFormValue("to"), zone)}
	if _, err := h.create(r, "/api/v1/webhooks/"+url.PathEscape(r.PathValue("id"))+"/replay", body); err != nil {
		h.webhookFailed(w, r, err)
		return
	}
	h.webhookBack(w, r, "replay", "Replay queued.")
}

func (h *Handler) webhookRetry(w http.ResponseWriter, r *http.Request) {
	path := "/api/v1/webhooks/" + url.PathEscape(r.PathValue("id")) + "/deliveries/" + url.PathEscape(r.PathValue("did")) + "/retry"
	if _, err := h.call(r, "POST", path, nil, nil); err != nil {
		h.fail(w, r, err)
		return
	}
	h.webhookBack(w, r, "deliveries", "Retry queued.")
}
