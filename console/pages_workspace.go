package console

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/voiceapi/voiceapi/data"
)

func (h *Handler) workspaceRoutes() {
	m := h.mux
	m.HandleFunc("GET /workspace", h.page(h.workspacePage))
	m.HandleFunc("POST /workspace/settings", h.action(h.workspaceSettings))
	m.HandleFunc("POST /workspace/members", h.action(h.memberAdd))
	m.HandleFunc("POST /workspace/members/{user}", h.action(h.memberUpdate))
	m.HandleFunc("POST /workspace/members/{user}/remove", h.action(h.memberRemove))
	m.HandleFunc("GET /workspace/audit", h.page(h.auditPage))
}

// usageBar is one subscription limit with its use.
type usageBar struct {
	Name        string
	Used, Limit int64
	Unlimited   bool
	Percent     int
}

func (h *Handler) workspacePage(w http.ResponseWriter, r *http.Request) {
	h.renderWorkspace(w, r, http.StatusOK, nil)
}

func (h *Handler) renderWorkspace(w http.ResponseWriter, r *http.Request, status int, fail *apiError) {
	p := data.PrincipalFrom(r.Context())
	ws := "/api/v1/workspaces/" + url.PathEscape(p.WorkspaceID)
	mine, err := h.call(r, "GET", "/api/v1/workspaces", url.Values{"per_page": {"100"}}, nil)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	me, err := h.call(r, "GET", "/api/v1/user", nil, nil)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	cur, err := h.call(r, "GET", ws, nil, nil)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	mq := url.Values{"per_page": {perPage}}
	if c := r.URL.Query().Get("cursor"); c != "" {
		mq.Set("cursor", c)
	}
	members, err := h.call(r, "GET", ws+"/users", mq, nil)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	var bars []usageBar
	if sub, err := h.call(r, "GET", "/api/v1/subscription", nil, nil); err == nil {
		d := sub.Data()
		limits, _ := d["limits"].(map[string]any)
		usage, _ := d["usage"].(map[string]any)
		for _, k := range sortedKeys(limits) {
			b := usageBar{Name: k, Used: int64(num(usage[k]))}
			if l, ok := limits[k].(float64); ok {
				b.Limit = int64(l)
				if l > 0 {
					b.Percent = min(100, int(100*float64(b.Used)/l))
				}
			} else {
				b.Unlimited = true
			}
			bars = append(bars, b)
		}
	}
	admin := data.RoleAtLeast(p.Role, data.RoleAdmin)
	h.render(w, r, status, "workspace", &view{Title: "Workspace", Active: "workspace", Err: fail, Notice: r.URL.Query().Get("notice"), D: map[string]any{
		"Workspaces": mine.List(), "Current": p.WorkspaceID, "WS": cur.Data(), "WSETag": cur.ETag, "Me": me.Data(),
		"Role": p.Role, "Modules": p.Modules, "Members": members.List(), "Next": members.NextCursor(),
		"Usage": bars, "Admin": admin, "Owner": p.Role == data.RoleOwner,
		"Roles": data.Roles, "AllModules": data.Modules, "Agents": h.agentChoices(r),
	}})
}

func sortedKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

func (h *Handler) wsPath(r *http.Request) string {
	return "/api/v1/workspaces/" + url.PathEscape(data.PrincipalFrom(r.Context()).WorkspaceID)
}

func (h *Handler) workspaceBack(w http.ResponseWriter, r *http.Request, notice string) {
	http.Redirect(w, r, "/workspace?notice="+url.QueryEscape(notice), http.StatusSeeOther)
}

func (h *Handler) workspaceSettings(w http.ResponseWriter, r *http.Request) {
	body := map[string]any{"name": r.PostFormValue("name"), "description": r.PostFormValue("description")}
	if _, err := h.callIfMatch(r, "PUT", h.wsPath(r), r.PostFormValue("etag"), body); err != nil {
		h.renderWorkspace(w, r, err.(*apiError).Status, err.(*apiError))
		return
	}
	h.workspaceBack(w, r, "Workspace saved.")
}

// memberBody reads a member form: role, the modules checked, the agents chosen.
func memberBody(r *http.Request) map[string]any {
	r.ParseForm()
	mods := r.PostForm["modules"]
	if mods == nil {
		mods = []string{}
	}
	agents := []string{}
	for _, a := range r.PostForm["agent_ids"] {
		if a = strings.TrimSpace(a); a != "" {
			agents = append(agents, a)
		}
	}
	return map[string]any{"role": r.PostFormValue("role"), "modules": mods, "agent_ids": agents}
}

func (h *Handler) memberAdd(w http.ResponseWriter, r *http.Request) {
	body := memberBody(r)
	body["id"] = strings.TrimSpace(r.PostFormValue("id"))
	if _, err := h.call(r, "POST", h.wsPath(r)+"/users", nil, body); err != nil {
		h.renderWorkspace(w, r, err.(*apiError).Status, err.(*apiError))
		return
	}
	h.workspaceBack(w, r, "Member added.")
}

func (h *Handler) memberUpdate(w http.ResponseWriter, r *http.Request) {
	if _, err := h.call(r, "PUT", h.wsPath(r)+"/users/"+url.PathEscape(r.PathValue("user")), nil, memberBody(r)); err != nil {
		h.renderWorkspace(w, r, err.(*apiError).Status, err.(*apiError))
		return
	}
	h.workspaceBack(w, r, "Member saved.")
}

func (h *Handler) memberRemove(w http.ResponseWriter, r *http.Request) {
	if _, err := h.call(r, "DELETE", h.wsPath(r)+"/users/"+url.PathEscape(r.PathValue("user")), nil, nil); err != nil {
		// The last owner's removal is refused with the API's own message.
		h.renderWorkspace(w, r, err.(*apiError).Status, err.(*apiError))
		return
	}
	h.workspaceBack(w, r, "Member removed.")
}

// auditPage is the audit log with the API's filters (owners and admins; the API refuses
// others).
func (h *Handler) auditPage(w http.ResponseWriter, r *http.Request) {
	in := r.URL.Query()
	list, next, fail, ok := h.filteredList(w, r, "/api/v1/audit-log", "type", "actor")
	if !ok {
		return
	}
	// The chain's verification, as the API recomputes it; a failure to ask is shown as
	// no result rather than failing the page.
	var verified map[string]any
	if v, err := h.call(r, "GET", "/api/v1/audit-log/verify", nil, nil); err == nil {
		verified = v.Data()
	}
	h.render(w, r, http.StatusOK, "audit", &view{Title: "Audit log", Active: "workspace", Err: fail, D: map[string]any{
		"Events": list, "Next": next, "Q": in, "Types": data.EventTypes, "Verified": verified,
	}})
}
