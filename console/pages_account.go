package console

import (
	"net/http"
)

func (h *Handler) accountRoutes() {
	m := h.mux
	m.HandleFunc("GET /account", h.page(h.accountPage))
	m.HandleFunc("POST /account/profile", h.action(h.accountProfile))
	m.HandleFunc("POST /account/password", h.action(h.accountPassword))
}

// accountLabels are the account forms' labels, for the API's messages.
var accountLabels = fieldLabels{"name": "Name", "email": "Email", "password": "New password", "current_password": "Current password"}

func (h *Handler) accountPage(w http.ResponseWriter, r *http.Request) {
	h.renderAccount(w, r, http.StatusOK, "", nil)
}

// renderAccount shows the signed-in user's own profile; form names the form a refusal
// belongs to ("profile" or "password"), which shows it beside its fields.
func (h *Handler) renderAccount(w http.ResponseWriter, r *http.Request, status int, form string, fail *apiError) {
	me, err := h.call(r, "GET", "/api/v1/user", nil, nil)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.render(w, r, status, "account", &view{Title: "Your account", Active: "account", Err: relabel(fail, accountLabels), D: map[string]any{
		"Me": me.Data(), "ETag": me.ETag, "Form": form, "Values": r.PostForm, "NoBackups": h.noBackups,
	}})
}

func (h *Handler) accountProfile(w http.ResponseWriter, r *http.Request) {
	body := map[string]any{"name": r.PostFormValue("name"), "email": r.PostFormValue("email")}
	if _, err := h.callIfMatch(r, "PUT", "/api/v1/user", r.PostFormValue("etag"), body); err != nil {
		h.renderAccount(w, r, err.(*apiError).Status, "profile", err.(*apiError))
		return
	}
	h.done(w, r, "/account", flash{Notice: "Profile saved.", At: "profile"})
}

// accountPassword changes the password. The new one is typed twice: a mistyped new
// password would lock its owner out, so the two must match before the API is asked.
func (h *Handler) accountPassword(w http.ResponseWriter, r *http.Request) {
	if r.PostFormValue("password") != r.PostFormValue("password_again") {
		fail := &apiError{Status: http.StatusUnprocessableEntity, Code: "validation_failed", Message: "The two new passwords differ.",
			Errors: map[string][]string{"password_again": {"Type the same new password twice."}}}
		h.renderAccount(w, r, fail.Status, "password", fail)
		return
	}
	body := map[string]any{"password": r.PostFormValue("password"), "current_password": r.PostFormValue("current_password")}
	if _, err := h.call(r, "PUT", "/api/v1/user", nil, body); err != nil {
		h.renderAccount(w, r, err.(*apiError).Status, "password", err.(*apiError))
		return
	}
	h.done(w, r, "/account", flash{Notice: "Password changed. Your other sessions are signed out; this one stays.", At: "password"})
}
