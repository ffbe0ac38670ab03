package console

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/voiceapi/voiceapi/data"
)

func (h *Handler) keyRoutes() {
	h.mux.HandleFunc("GET /api-keys", h.page(h.keyList))
	h.mux.HandleFunc("POST /api-keys", h.action(h.keyCreate))
	h.mux.HandleFunc("GET /api-keys/{id}/revoke", h.page(h.keyRevokeConfirm))
	h.mux.HandleFunc("POST /api-keys/{id}/revoke", h.action(h.keyRevoke))
}

func (h *Handler) keyList(w http.ResponseWriter, r *http.Request) {
	h.renderKeys(w, r, http.StatusOK, nil)
}

// keyLabels are the key form's labels, for the API's messages.
var keyLabels = fieldLabels{"name": "Name", "expiration": "Expires on", "scopes": "Scopes", "scopes.#": "Scope #",
	"agent_ids": "Agents", "agent_ids.#": "Agent #"}

// renderKeys shows the caller's keys and the form for a new one; a refused form keeps
// what was typed and checked.
func (h *Handler) renderKeys(w http.ResponseWriter, r *http.Request, status int, fail *apiError) {
	q := pageQuery(perPage, r.URL.Query().Get("cursor"))
	res, err := h.call(r, "GET", "/api/v1/api-keys", q, nil)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	r.ParseForm()
	form := r.PostForm
	if picking(r.URL.Query()) {
		form = r.URL.Query() // a picker's round-trip: the form as it was typed
	}
	agents := h.agentPicker(r, "agent_ids", form["agent_ids"]...)
	agents.Multiple = true
	held, withheld := h.heldScopes(r)
	h.render(w, r, status, "keys", &view{Title: "API keys", Active: "api-keys", Err: relabel(fail, keyLabels), D: map[string]any{
		"Keys": res.List(), "Pages": pagerOf(r, "cursor", res), "Form": form,
		"Scopes": scopeGroups(held), "Withheld": withheld, "AgentPick": agents,
		"AgentNames": h.agentNames(r, agents.records, listIDs(res.List(), "agent_ids")...),
	}})
}

// scopeGroup is one row of the scopes picker: a module's read and write, or the others.
type scopeGroup struct {
	Label  string
	Scopes []string
}

// scopeGroups lays the scopes of held (data.Scopes the user could give a key) out by
// what they are about; a group with none of them is left out.
func scopeGroups(held []string) []scopeGroup {
	var all []scopeGroup
	for _, m := range data.Modules {
		all = append(all, scopeGroup{label(m), []string{data.ReadScope(m), data.WriteScope(m)}})
	}
	all = append(all,
		scopeGroup{"Webhooks", []string{data.ScopeWebhooksRead, data.ScopeWebhooksWrite}},
		scopeGroup{"Workspace", []string{data.ScopeAuditRead, data.ScopeWorkspaceAdmin}},
		scopeGroup{"Voice runtime", []string{data.ScopeCallsRuntime}},
		scopeGroup{"Conversations", []string{data.ScopeConversationsWrite}})
	var out []scopeGroup
	for _, g := range all {
		g.Scopes = slices.DeleteFunc(g.Scopes, func(s string) bool { return !slices.Contains(held, s) })
		if len(g.Scopes) > 0 {
			out = append(out, g)
		}
	}
	return out
}

func (h *Handler) keyCreate(w http.ResponseWriter, r *http.Request) {
	r.ParseForm()
	name := r.PostFormValue("name")
	body := map[string]any{"name": name}
	if e := strings.TrimSpace(r.PostFormValue("expiration")); e != "" {
		body["expiration"] = e
	}
	// No scope checked is a key with the user's full rights: the field is left out.
	if scopes := r.PostForm["scopes"]; len(scopes) > 0 {
		body["scopes"] = scopes
	}
	if ids := r.PostForm["agent_ids"]; len(ids) > 0 {
		body["agent_ids"] = ids
	}
	res, err := h.create(r, "/api/v1/api-keys", body)
	if err != nil {
		h.renderKeys(w, r, err.(*apiError).Status, err.(*apiError))
		return
	}
	tok, _ := res.Body["token"].(string)
	h.done(w, r, "/api-keys", flash{Notice: "Key " + name + " created.", Secrets: []secret{{Label: "The token of " + name, Value: tok}}})
}

// findKey walks the caller's keys for id (a few pages: a person's keys are few).
func (h *Handler) findKey(r *http.Request, id string) (map[string]any, error) {
	q := url.Values{"per_page": {"100"}}
	for range 10 {
		res, err := h.call(r, "GET", "/api/v1/api-keys", q, nil)
		if err != nil {
			return nil, err
		}
		for _, k := range res.List() {
			if m, _ := k.(map[string]any); str(m["id"]) == id {
				return m, nil
			}
		}
		if res.NextCursor() == "" {
			break
		}
		q.Set("cursor", res.NextCursor())
	}
	return nil, &apiError{Status: http.StatusNotFound, Code: data.ENOTFOUND, Message: "No such API key."}
}

// keyRevokeConfirm names the key and what stops working with it.
func (h *Handler) keyRevokeConfirm(w http.ResponseWriter, r *http.Request) {
	k, err := h.findKey(r, r.PathValue("id"))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	used := "It has never been used."
	if t, err := time.Parse(time.RFC3339Nano, str(k["last_used_at"])); err == nil {
		used = "It was last used on " + t.UTC().Format(whenLayout) + "."
	}
	h.confirmPage(w, r, "api-keys", confirmation{
		Title:  "Revoke the API key " + str(k["name"]) + "?",
		Lost:   []string{"Every program using this key gets 401 Unauthenticated from the next request on. " + used},
		Button: "Revoke key", Cancel: "/api-keys", Crumb: "API keys", CrumbHref: "/api-keys",
	}, http.StatusOK, nil)
}

func (h *Handler) keyRevoke(w http.ResponseWriter, r *http.Request) {
	if _, err := h.call(r, "DELETE", "/api/v1/api-keys/"+url.PathEscape(r.PathValue("id")), nil, nil); err != nil {
		h.fail(w, r, err)
		return
	}
	h.done(w, r, "/api-keys", flash{Notice: "Revoked."})
}
