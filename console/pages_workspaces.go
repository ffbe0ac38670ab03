package console

import (
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/voiceapi/voiceapi/data"
)

// The workspaces a user has: switch between them, create one, delete the current one,
// and import a workspace document into it (an export is a plain download link).

func (h *Handler) workspacesRoutes() {
	m := h.mux
	m.HandleFunc("POST /workspace/switch", h.action(h.workspaceSwitch))
	m.HandleFunc("POST /workspace/create", h.action(h.workspaceCreate))
	m.HandleFunc("GET /workspace/delete", h.page(h.workspaceDeleteConfirm))
	m.HandleFunc("POST /workspace/delete", h.action(h.workspaceDelete))
	m.HandleFunc("POST /workspace/import", h.workspaceImport) // multipart: its CSRF field is read in order
}

// signIn logs the session's user in again, into workspaceID ("" for the personal one):
// a login token is bound to one workspace. It returns the new token.
func (h *Handler) signIn(r *http.Request, password, workspaceID string) (string, error) {
	me, err := h.call(r, "GET", "/api/v1/user", nil, nil)
	if err != nil {
		return "", err
	}
	res, err := h.call(r, "POST", "/api/v1/auth/login", nil, loginBody(str(me.Data()["email"]), password, strings.TrimSpace(workspaceID)))
	if err != nil {
		return "", relabel(err.(*apiError), fieldLabels{"email": "Your password"})
	}
	return str(res.Body["token"]), nil
}

// workspaceSwitch signs in again into another workspace and revokes the old token.
func (h *Handler) workspaceSwitch(w http.ResponseWriter, r *http.Request) {
	tok, err := h.signIn(r, r.PostFormValue("password"), r.PostFormValue("workspace_id"))
	if err != nil {
		h.renderWorkspace(w, r, err.(*apiError).Status, "switch", err.(*apiError))
		return
	}
	h.call(r, "POST", "/api/v1/auth/logout", nil, nil) // the old token; a failure leaves it to expire
	setSession(w, r, h.secure, tok)
	h.doneFor(w, r, tok, "/workspace", flash{Notice: "Switched workspace."})
}

func (h *Handler) workspaceCreate(w http.ResponseWriter, r *http.Request) {
	body := map[string]any{"name": r.PostFormValue("name"), "description": r.PostFormValue("description")}
	res, err := h.create(r, "/api/v1/workspaces", body)
	if err != nil {
		h.renderWorkspace(w, r, err.(*apiError).Status, "create", err.(*apiError))
		return
	}
	h.workspaceBack(w, r, "switch", "Workspace "+str(res.Data()["name"])+" created: switch to it to work there.")
}

// workspaceDeleteConfirm asks the owner to type the workspace's name and their password:
// everything in it goes, and the session, bound to it, signs in again into the personal
// workspace.
func (h *Handler) workspaceDeleteConfirm(w http.ResponseWriter, r *http.Request) {
	h.renderWorkspaceDelete(w, r, http.StatusOK, nil)
}

func (h *Handler) renderWorkspaceDelete(w http.ResponseWriter, r *http.Request, status int, fail *apiError) {
	res, err := h.call(r, "GET", h.wsPath(r), nil, nil)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	ws := res.Data()
	lost := []string{"Everything in it: " + h.workspaceContents(r) + ".",
		"Its members' access to it, their sessions and API keys in it."}
	h.confirmPage(w, r, "workspace", confirmation{
		Title: "Delete the workspace " + str(ws["name"]) + "?", Lost: lost, Need: needOf(data.NeedWorkspaceDelete()),
		Kept:   []string{"Its members' accounts and their other workspaces.", "Exports of it you have downloaded."},
		Button: "Delete workspace", Cancel: "/workspace", Crumb: "Workspace", CrumbHref: "/workspace",
		TypeName: str(ws["name"]), Password: true,
	}, status, fail)
}

// workspaceContents counts what the workspace holds, for its deletion's confirmation.
func (h *Handler) workspaceContents(r *http.Request) string {
	var parts []string
	for _, c := range []struct{ path, one, many string }{
		{"/api/v1/agents", "agent", "agents"}, {"/api/v1/knowledge-bases", "knowledge base", "knowledge bases"},
		{"/api/v1/numbers", "number", "numbers"}, {"/api/v1/campaigns", "campaign", "campaigns"},
		{"/api/v1/webhooks", "webhook", "webhooks"},
	} {
		res, err := h.call(r, "GET", c.path, map[string][]string{"per_page": {"100"}}, nil)
		if err != nil {
			continue
		}
		n := plural(float64(len(res.List())), c.one, c.many)
		if res.NextCursor() != "" {
			n = "over " + n
		}
		parts = append(parts, n)
	}
	return strings.Join(append(parts, "its calls, tests and their runs, suppression list, analytics and audit log"), ", ")
}

func (h *Handler) workspaceDelete(w http.ResponseWriter, r *http.Request) {
	res, err := h.call(r, "GET", h.wsPath(r), nil, nil)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	name := str(res.Data()["name"])
	if !typedNameMatches(r, name) {
		h.renderWorkspaceDelete(w, r, http.StatusUnprocessableEntity, &apiError{Status: http.StatusUnprocessableEntity,
			Code: data.EINVALID, Message: "Type the workspace's name exactly as shown to delete it."})
		return
	}
	// Sign in to the personal workspace first: a wrong password deletes nothing.
	tok, err := h.signIn(r, r.PostFormValue("password"), "")
	if err != nil {
		h.renderWorkspaceDelete(w, r, err.(*apiError).Status, err.(*apiError))
		return
	}
	if _, err := h.call(r, "DELETE", h.wsPath(r), nil, nil); err != nil {
		h.send(r, apiCall{Method: "POST", Path: "/api/v1/auth/logout", Token: tok}) // the new token is not needed
		h.renderWorkspaceDelete(w, r, err.(*apiError).Status, err.(*apiError))
		return
	}
	setSession(w, r, h.secure, tok)
	h.doneFor(w, r, tok, "/workspace", flash{Notice: "Workspace " + name + " deleted. You are in your personal workspace."})
}

// workspaceImport creates what a workspace document describes in the current workspace.
// The form is multipart with its CSRF token first: the token is checked before the
// document is read, and the document goes to the API as it streams in.
func (h *Handler) workspaceImport(w http.ResponseWriter, r *http.Request) {
	tok := SessionToken(r)
	if tok == "" || data.PrincipalFrom(r.Context()) == nil {
		refuse(w, http.StatusUnauthorized, data.EUNAUTHORIZED, "Sign in first.")
		return
	}
	mr, err := r.MultipartReader()
	if err != nil {
		refuse(w, http.StatusUnsupportedMediaType, data.EMEDIATYPE, "The import form must be sent as multipart/form-data.")
		return
	}
	fields := map[string]string{}
	for range maxImportFields + 1 {
		part, err := mr.NextPart()
		if err != nil {
			break
		}
		if part.FormName() != "document" {
			b, _ := io.ReadAll(io.LimitReader(part, 256))
			fields[part.FormName()] = string(b)
			continue
		}
		if !validFieldCSRF(fields[csrfField], tok) {
			refuse(w, http.StatusForbidden, data.EFORBIDDEN, "The form's CSRF token is missing or wrong; reload the page and try again.")
			return
		}
		res, err := h.send(r, apiCall{Method: "POST", Path: h.wsPath(r) + "/import", Raw: part, ContentType: "application/json",
			IdempotencyKey: fields[idempotencyField]})
		if err != nil {
			h.renderWorkspace(w, r, err.(*apiError).Status, "import", err.(*apiError))
			return
		}
		h.importDone(w, r, res)
		return
	}
	refuse(w, http.StatusUnprocessableEntity, data.EINVALID, "The import form has no document.")
}

// maxImportFields bounds the small fields read before an import form's document.
const maxImportFields = 4

// LongRequest reports whether r may take longer than the server's read and write timeouts
// (as the API's long routes may): the import form, which carries a whole workspace
// document.
func LongRequest(r *http.Request) bool {
	return r.Method == http.MethodPost && r.URL.Path == "/workspace/import"
}

// importDone tells what an import created, with each new webhook's secret shown once.
func (h *Handler) importDone(w http.ResponseWriter, r *http.Request, res *reply) {
	d := res.Data()
	f := flash{At: "import", Notice: fmt.Sprintf("Imported %s, %s, %s and %s.",
		plural(float64(len(asList(d["agents"]))), "agent", "agents"), plural(float64(len(asList(d["knowledge_bases"]))), "knowledge base", "knowledge bases"),
		plural(float64(len(asList(d["numbers"]))), "number", "numbers"), plural(float64(len(asList(d["webhooks"]))), "webhook", "webhooks"))}
	if sup, _ := d["suppressions"].(map[string]any); num(sup["rows"]) > 0 {
		f.Notice += fmt.Sprintf(" Added %s to the suppression list (%s listed already).",
			plural(num(sup["added"]), "number", "numbers"), plural(num(sup["duplicates"]), "was", "were"))
	}
	if missing := strs(d["missing_secrets"]); len(missing) > 0 {
		f.Notice += " Set these credentials again, the document had them masked: " + strings.Join(missing, ", ") + "."
	}
	for _, s := range asList(res.Body["webhook_secrets"]) {
		m, _ := s.(map[string]any)
		f.Secrets = append(f.Secrets, secret{Label: "The signing secret of the webhook to " + str(m["url"]), Value: str(m["secret"])})
	}
	if !h.done(w, r, "/workspace", f) {
		// Too many secrets for the flash cookie: shown on this answer instead. A reload
		// sends the form again with the same Idempotency-Key, which replays this answer.
		f.Path = "/workspace"
		h.render(w, r, http.StatusCreated, "imported", &view{Title: "Imported", Active: "workspace", Flash: &f, Notice: f.Notice})
	}
}
