package console

import (
	"crypto/rand"
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"

	"github.com/voiceapi/voiceapi/data"
)

// The instance's pages, for instance administrators: its user accounts and its backup.
// Others are refused by the API (403), which the pages show.

func (h *Handler) userRoutes() {
	m := h.mux
	m.HandleFunc("GET /users", h.page(h.userList))
	m.HandleFunc("POST /users", h.action(h.userCreate))
	m.HandleFunc("GET /users/{id}/delete", h.page(h.userDeleteConfirm))
	m.HandleFunc("POST /users/{id}/delete", h.action(h.userDelete))
}

// userLabels are the new-user form's labels, for the API's messages.
var userLabels = fieldLabels{"name": "Name", "email": "Email", "password": "Password"}

func (h *Handler) userList(w http.ResponseWriter, r *http.Request) {
	h.renderUsers(w, r, http.StatusOK, nil)
}

func (h *Handler) renderUsers(w http.ResponseWriter, r *http.Request, status int, fail *apiError) {
	q := pageQuery(perPage, r.URL.Query().Get("cursor"))
	res, err := h.call(r, "GET", "/api/v1/users", q, nil)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	me, err := h.call(r, "GET", "/api/v1/user", nil, nil)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	r.ParseForm()
	h.render(w, r, status, "users", &view{Title: "Instance", Active: "users", Err: relabel(fail, userLabels), D: map[string]any{
		"Users": res.List(), "Pages": pagerOf(r, "cursor", res), "Me": str(me.Data()["id"]), "Form": r.PostForm,
		"NoBackups": h.noBackups,
	}})
}

// userCreate makes an account; an empty password is generated here and shown once, for
// the administrator to hand over (its owner changes it on their account page).
func (h *Handler) userCreate(w http.ResponseWriter, r *http.Request) {
	name, password := r.PostFormValue("name"), r.PostFormValue("password")
	generated := password == ""
	if generated {
		password = newPassword()
	}
	body := map[string]any{"name": name, "email": strings.TrimSpace(r.PostFormValue("email")), "password": password,
		"is_admin": r.PostFormValue("is_admin") == "on"}
	if _, err := h.create(r, "/api/v1/users", body); err != nil {
		h.renderUsers(w, r, err.(*apiError).Status, err.(*apiError))
		return
	}
	f := flash{Notice: "User " + name + " created, with a personal workspace.", At: "users-list"}
	if generated {
		f.Secrets = []secret{{Label: "The password of " + name, Value: password}}
	}
	h.done(w, r, "/users", f)
}

// newPassword is a generated password: 144 random bits, typable.
func newPassword() string {
	var b [18]byte
	rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// userDeleteConfirm names the account and what goes with it; the signed-in
// administrator's own account, which the API refuses to delete, the page refuses too.
func (h *Handler) userDeleteConfirm(w http.ResponseWriter, r *http.Request) {
	c, err := h.userDeletion(r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if c.Refused {
		h.confirmPage(w, r, "users", c, http.StatusUnprocessableEntity, ownAccountKept())
		return
	}
	h.confirmPage(w, r, "users", c, http.StatusOK, nil)
}

// userDeletion is the confirmation of the delete of the account at r's path.
func (h *Handler) userDeletion(r *http.Request) (confirmation, error) {
	id := r.PathValue("id")
	res, err := h.call(r, "GET", "/api/v1/users/"+url.PathEscape(id), nil, nil)
	if err != nil {
		return confirmation{}, err
	}
	u := res.Data()
	who := str(u["name"]) + " <" + str(u["email"]) + ">"
	return confirmation{
		Title: "Delete the account of " + who + "?",
		Lost: []string{"The account: its sign-in, its sessions and its API keys.",
			"Its personal workspace, with every agent, knowledge base, number, call and webhook in it.",
			"Its membership of every other workspace."},
		Kept:   []string{"The other workspaces it belonged to and their records (the account must not be their last owner)."},
		Button: "Delete account", Cancel: "/users", Crumb: "Instance", CrumbHref: "/users",
		Refused: data.DeletesOwnAccount(data.PrincipalFrom(r.Context()), id),
	}, nil
}

// ownAccountKept is the API's refusal of an administrator's delete of their own account.
func ownAccountKept() *apiError {
	return &apiError{Status: http.StatusUnprocessableEntity, Code: data.EINVALID, Message: data.OwnAccountKept,
		Errors: map[string][]string{"id": {data.OwnAccountKept}}}
}

// userDelete deletes the account; a refusal (the last owner of a workspace, one's own
// account) shows the confirmation again with the API's message.
func (h *Handler) userDelete(w http.ResponseWriter, r *http.Request) {
	_, err := h.call(r, "DELETE", "/api/v1/users/"+url.PathEscape(r.PathValue("id")), nil, nil)
	if err == nil {
		h.done(w, r, "/users", flash{Notice: "Account deleted.", At: "users-list"})
		return
	}
	c, readErr := h.userDeletion(r)
	if fail, ok := err.(*apiError); ok && readErr == nil && fail.Status == http.StatusUnprocessableEntity {
		h.confirmPage(w, r, "users", c, fail.Status, fail)
		return
	}
	h.fail(w, r, err)
}
