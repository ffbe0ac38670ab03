package console

import (
	"net/http"
	"net/url"
	"strings"
)

func (h *Handler) keyRoutes() {
	h.mux.HandleFunc("GET /api-keys", h.page(h.keyList))
	h.mux.HandleFunc("POST /api-keys", h.action(h.keyCreate))
	h.mux.HandleFunc("POST /api-keys/{id}/revoke", h.action(h.keyRevoke))
}

func (h *Handler) keyList(w http.ResponseWriter, r *http.Request) {
	h.renderKeys(w, r, http.StatusOK, "", nil, r.URL.Query().Get("notice"))
}

// renderKeys shows the caller's keys; token is a just-created key's secret, shown once.
func (h *Handler) renderKeys(w http.ResponseWriter, r *http.Request, status int, token string, fail *apiError, notice string) {
	q := url.Values{"per_page": {perPage}}
	if c := r.URL.Query().Get("cursor"); c != "" {
		q.Set("cursor", c)
	}
	res, err := h.call(r, "GET", "/api/v1/api-keys", q, nil)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.render(w, r, status, "keys", &view{Title: "API keys", Active: "api-keys", Err: fail, Notice: notice, D: map[string]any{
		"Keys": res.List(), "Next": res.NextCursor(), "Token": token,
		"Name": r.PostFormValue("name"), "Expiration": r.PostFormValue("expiration"),
	}})
}

func (h *Handler) keyCreate(w http.ResponseWriter, r *http.Request) {
	body := map[string]any{"name": r.PostFormValue("name")}
	if e := strings.TrimSpace(r.PostFormValue("expiration")); e != "" {
		body["expiration"] = e
	}
	res, err := h.call(r, "POST", "/api/v1/api-keys", nil, body)
	if err != nil {
		h.renderKeys(w, r, err.(*apiError).Status, "", err.(*apiError), "")
		return
	}
	tok, _ := res.Body["token"].(string)
	h.renderKeys(w, r, http.StatusCreated, tok, nil, "")
}

func (h *Handler) keyRevoke(w http.ResponseWriter, r *http.Request) {
	if _, err := h.call(r, "DELETE", "/api/v1/api-keys/"+url.PathEscape(r.PathValue("id")), nil, nil); err != nil {
		h.fail(w, r, err)
		return
	}
	http.Redirect(w, r, "/api-keys?notice=Revoked.", http.StatusSeeOther)
}
