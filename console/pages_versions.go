package console

import (
	"net/http"
	"net/url"

	"github.com/voiceapi/voiceapi/data"
)

// versionsInUse are the agent's versions the versions page offers no Delete for, keyed
// as the page writes numbers: the published one and the rollout's variants. The API
// refuses those, and versions an open call or conversation runs on (docs/agents.md
// "Deleting a version"), which the confirmation's answer then names.
func (h *Handler) versionsInUse(r *http.Request, id string, agent map[string]any) map[string]bool {
	inUse := map[string]bool{}
	if agent["published_version"] != nil {
		inUse[str(agent["published_version"])] = true
	}
	// No rollout is 404; any failure offers no more than the API would take.
	if res, err := h.call(r, "GET", "/api/v1/agents/"+url.PathEscape(id)+"/rollout", nil, nil); err == nil {
		variants, _ := res.Data()["variants"].([]any)
		for _, v := range variants {
			m, _ := v.(map[string]any)
			inUse[str(m["version"])] = true
		}
	}
	return inUse
}

// agentVersionDeleteConfirm names what deleting a version takes and what stays.
func (h *Handler) agentVersionDeleteConfirm(w http.ResponseWriter, r *http.Request) {
	id, n := r.PathValue("id"), r.PathValue("n")
	a, err := h.call(r, "GET", "/api/v1/agents/"+url.PathEscape(id), nil, nil)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if _, err := h.call(r, "GET", "/api/v1/agents/"+url.PathEscape(id)+"/versions/"+url.PathEscape(n), nil, nil); err != nil {
		h.fail(w, r, err)
		return
	}
	h.confirmPage(w, r, "agents", confirmation{
		Title: "Delete version " + n + " of " + str(a.Data()["name"]) + "?", Need: needOf(data.Write(data.ModuleAgents)),
		Lost: []string{"Version " + n + "'s configuration: it can no longer be restored or compared."},
		Kept: []string{"The calls made on it, which keep its number, and their analysis.",
			"Its number: no later version takes it."},
		Button: "Delete version " + n, Cancel: "/agents/" + url.PathEscape(id) + "/versions",
		Crumb: "Agents", CrumbHref: "/agents",
	}, http.StatusOK, nil)
}

func (h *Handler) agentVersionDelete(w http.ResponseWriter, r *http.Request) {
	id, n := r.PathValue("id"), r.PathValue("n")
	if _, err := h.call(r, "DELETE", "/api/v1/agents/"+url.PathEscape(id)+"/versions/"+url.PathEscape(n), nil, nil); err != nil {
		h.fail(w, r, err)
		return
	}
	h.done(w, r, "/agents/"+url.PathEscape(id)+"/versions", flash{Notice: "Deleted version " + n + "."})
}
