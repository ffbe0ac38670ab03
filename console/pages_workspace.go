package console

import (
	"html/template"
	"maps"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/voiceapi/voiceapi/data"
)

func (h *Handler) workspaceRoutes() {
	m := h.mux
	m.HandleFunc("GET /workspace", h.page(h.workspacePage))
	m.HandleFunc("POST /workspace/settings", h.action(h.workspaceSettings))
	m.HandleFunc("POST /workspace/members", h.action(h.memberAdd))
	m.HandleFunc("POST /workspace/members/{user}", h.action(h.memberUpdate))
	m.HandleFunc("GET /workspace/members/{user}/remove", h.page(h.memberRemoveConfirm))
	m.HandleFunc("POST /workspace/members/{user}/remove", h.action(h.memberRemove))
	m.HandleFunc("GET /workspace/audit", h.page(h.auditPage))
	h.workspacesRoutes()
	h.privacyRoutes()
	h.priceRoutes()
}

// usageBar is one subscription limit with its use.
type usageBar struct {
	Name        string
	Used, Limit int64
	Unlimited   bool
	Percent     int
}

// workspaceLabels are the workspace page's form labels, for the API's messages.
var workspaceLabels = fieldLabels{"name": "Name", "description": "Description", "id": "User", "email": "Email",
	"role": "Role", "modules": "Modules", "modules.#": "Module #", "agent_ids": "Agents", "agent_ids.#": "Agent #",
	"password": "Your password", "workspace_id": "Workspace", "embeddings.vector_share": "Vector share"}

func (h *Handler) workspacePage(w http.ResponseWriter, r *http.Request) {
	h.renderWorkspace(w, r, http.StatusOK, "", nil)
}

// renderWorkspace shows the workspace page; form names the form a refusal belongs to,
// which shows it beside that form.
func (h *Handler) renderWorkspace(w http.ResponseWriter, r *http.Request, status int, form string, fail *apiError) {
	p := data.PrincipalFrom(r.Context())
	ws := h.wsPath(r)
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
	members, err := h.call(r, "GET", ws+"/users", pageQuery(perPage, r.URL.Query().Get("cursor")), nil)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	r.ParseForm()
	values := r.PostForm
	picked := pickedKey(r.URL.Query())
	if picked != "" {
		values = r.URL.Query() // a picker's round-trip: its form as it was typed
		if picked == "new" {
			form = "add-member"
		}
	}
	forms, agentNames := h.memberForms(r, members.List(), form, picked, values)
	h.render(w, r, status, "workspace", &view{Title: "Workspace", Active: "workspace", Err: relabel(fail, workspaceLabels), D: map[string]any{
		"WorkspacePick": h.workspacePicker(r, "workspace_id", p.WorkspaceID), "Current": p.WorkspaceID, "WS": cur.Data(), "WSETag": cur.ETag, "Me": me.Data(),
		"Personal": str(me.Data()["personal_workspace_id"]) == p.WorkspaceID,
		"Role":     p.Role, "Modules": p.Modules, "Members": members.List(), "Pages": pagerOf(r, "cursor", members),
		"Usage": h.usage(r), "Owner": p.Role == data.RoleOwner,
		// Each offer under the rule of the API's route it leads to, which reads a key's
		// scopes and agent_ids as well as the role.
		"CanSettings": p.Allows(data.NeedWorkspaceAdmin()) == nil,
		"CanPrice":    p.Allows(data.NeedWorkspaceAdmin()) == nil,
		"CanAudit":    p.Allows(data.NeedAuditLog()) == nil,
		"CanMembers":  p.Allows(data.NeedMemberChange()) == nil,
		"CanExport":   p.Allows(data.NeedWorkspaceExport()) == nil,
		// Only an owner may grant the owner role or change an owner (the API's 403).
		"Roles": data.GrantableRoles(p.Role), "TouchOwners": data.MayTouchOwners(p.Role), "AllModules": data.Modules,
		"MemberForms": forms, "AgentNames": agentNames,
		"Form": form, "Values": values, "Cursor": r.URL.Query().Get("cursor"),
	}})
}

// memberForm is what a member form shows: the add form's ("new") or a member's ("m-<id>").
type memberForm struct {
	Role   string
	Mods   []string
	Agents *picker
	Open   bool // its picker was used: the form is shown unfolded
}

// memberForms are the member forms of the page: one read of the agents serves every
// form's picker but the one searched or paged, which reads its own. values are what
// the form named by form (a refusal) or picked (a picker's round-trip) was sent with.
func (h *Handler) memberForms(r *http.Request, members []any, form, picked string, values url.Values) (map[string]memberForm, names) {
	base := h.agentPickerKeyed(r, "agent_ids", "", nil)
	n := h.agentNames(r, base.records, append(listIDs(members, "agent_ids"), values["agent_ids"]...)...)
	out := map[string]memberForm{}
	add := func(key string, f memberForm, chosen []string, typed bool) {
		if typed && values.Has("role") { // the form as sent (an address edited by hand may lack it)
			f.Role, f.Mods, chosen = values.Get("role"), values["modules"], values["agent_ids"]
		}
		if key == picked {
			f.Agents, f.Open = h.agentPickerKeyed(r, "agent_ids", key, chosen), true
		} else {
			f.Agents = base.copyFor(key, chosen, n)
		}
		f.Agents.Multiple = true
		out[key] = f
	}
	add("new", memberForm{Role: data.RoleMember}, nil, form == "add-member")
	for _, it := range members {
		m, _ := it.(map[string]any)
		key := "m-" + str(m["id"])
		add(key, memberForm{Role: str(m["role"]), Mods: strs(m["modules"])}, strs(m["agent_ids"]), key == picked)
	}
	return out, n
}

// usage reads the subscription's limits with their use, one bar each; none when the
// subscription cannot be read.
func (h *Handler) usage(r *http.Request) []usageBar {
	sub, err := h.call(r, "GET", "/api/v1/subscription", nil, nil)
	if err != nil {
		return nil
	}
	d := sub.Data()
	limits, _ := d["limits"].(map[string]any)
	used, _ := d["usage"].(map[string]any)
	var bars []usageBar
	for _, k := range data.LimitNames {
		if _, ok := limits[k]; !ok {
			continue
		}
		b := usageBar{Name: k, Used: int64(num(used[k]))}
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
	return bars
}

func (h *Handler) wsPath(r *http.Request) string {
	return "/api/v1/workspaces/" + url.PathEscape(data.PrincipalFrom(r.Context()).WorkspaceID)
}

// workspaceBack ends a workspace form's POST on the workspace page, beside the form at.
func (h *Handler) workspaceBack(w http.ResponseWriter, r *http.Request, at, notice string) {
	h.done(w, r, "/workspace", flash{Notice: notice, At: at})
}

func (h *Handler) workspaceSettings(w http.ResponseWriter, r *http.Request) {
	body := map[string]any{"name": r.PostFormValue("name"), "description": r.PostFormValue("description"),
		"embeddings": map[string]any{"vector_share": vectorShareValue(r.PostFormValue("vector_share")),
			"enabled": r.PostFormValue("embeddings_enabled") == "true"}}
	if _, err := h.callIfMatch(r, "PUT", h.wsPath(r), r.PostFormValue("etag"), body); err != nil {
		h.renderWorkspace(w, r, err.(*apiError).Status, "settings", err.(*apiError))
		return
	}
	h.workspaceBack(w, r, "ws-settings", "Workspace saved.")
}

// vectorShareValue is the vector share field as the API takes it: empty is null (the
// default), a number its value, anything else as typed, for the API to refuse on its field.
func vectorShareValue(v string) any {
	v = strings.TrimSpace(v)
	if v == "" {
		return nil
	}
	if f, err := strconv.ParseFloat(v, 64); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
		return f
	}
	return v
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

// memberAdd adds a member by email (or by user id, for those who have one at hand).
func (h *Handler) memberAdd(w http.ResponseWriter, r *http.Request) {
	body := memberBody(r)
	who := strings.TrimSpace(r.PostFormValue("email"))
	if strings.HasPrefix(who, data.PrefixUser+"_") {
		body["id"] = who
	} else {
		body["email"] = who
	}
	if _, err := h.create(r, h.wsPath(r)+"/users", body); err != nil {
		h.renderWorkspace(w, r, err.(*apiError).Status, "add-member", err.(*apiError))
		return
	}
	h.workspaceBack(w, r, "members", "Member "+who+" added.")
}

func (h *Handler) memberUpdate(w http.ResponseWriter, r *http.Request) {
	if _, err := h.call(r, "PUT", h.wsPath(r)+"/users/"+url.PathEscape(r.PathValue("user")), nil, memberBody(r)); err != nil {
		h.renderWorkspace(w, r, err.(*apiError).Status, "members", err.(*apiError))
		return
	}
	h.workspaceBack(w, r, "members", "Member saved.")
}

// memberRemoveConfirm names the member and what they lose.
func (h *Handler) memberRemoveConfirm(w http.ResponseWriter, r *http.Request) {
	res, err := h.call(r, "GET", h.wsPath(r)+"/users/"+url.PathEscape(r.PathValue("user")), nil, nil)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	m := res.Data()
	if str(m["role"]) == data.RoleOwner && !data.MayTouchOwners(data.PrincipalFrom(r.Context()).Role) {
		// Its removal is the API's 403: the confirmation, opened by its address, says so.
		h.fail(w, r, &apiError{Status: http.StatusForbidden, Code: "forbidden", Message: data.OwnersOnly})
		return
	}
	ws, _ := h.call(r, "GET", h.wsPath(r), nil, nil)
	wsName := "this workspace"
	if ws != nil {
		wsName = str(ws.Data()["name"])
	}
	h.confirmPage(w, r, "workspace", confirmation{
		Title: "Remove " + str(m["name"]) + " <" + str(m["email"]) + "> from " + wsName + "?", Need: needOf(data.NeedMemberChange()),
		Lost: []string{"Their access to " + wsName + ": their sessions and API keys in it stop working.",
			"Their role (" + label(m["role"]) + ") and modules here: adding them again starts afresh."},
		Kept:   []string{"Their account, their personal workspace, and what they made here."},
		Button: "Remove member", Cancel: "/workspace#members", Crumb: "Workspace", CrumbHref: "/workspace",
	}, http.StatusOK, nil)
}

func (h *Handler) memberRemove(w http.ResponseWriter, r *http.Request) {
	if _, err := h.call(r, "DELETE", h.wsPath(r)+"/users/"+url.PathEscape(r.PathValue("user")), nil, nil); err != nil {
		// The last owner's removal is refused with the API's own message.
		h.renderWorkspace(w, r, err.(*apiError).Status, "members", err.(*apiError))
		return
	}
	h.workspaceBack(w, r, "members", "Member removed.")
}

// auditPage is the audit log with the API's filters (owners and admins; the API refuses
// others). Actors are named: members by name, the rest by what they are.
func (h *Handler) auditPage(w http.ResponseWriter, r *http.Request) {
	// The chain is verified on demand (verify=1), not on every view: it recomputes the
	// whole history, seconds for a year's events. The filters' and pages' links are
	// made without verify, so a filter or a page turn does not verify again.
	in := r.URL.Query()
	verify := in.Get("verify") != ""
	in.Del("verify")
	u := *r.URL
	u.RawQuery = in.Encode()
	r = r.WithContext(r.Context())
	r.URL = &u
	list, pages, fail, ok := h.filteredList(w, r, "/api/v1/audit-log", "type", "actor")
	if !ok {
		return
	}
	// The chain's verification, as the API recomputes it, for a caller who may read
	// every event (the API's rule: a key that reads only some modules or agents is not
	// told of the others' events); a failure to ask is shown as no result rather than
	// failing the page.
	var verified map[string]any
	canVerify := data.PrincipalFrom(r.Context()).Allows(data.NeedAuditChain()) == nil
	if canVerify && verify {
		if v, err := h.call(r, "GET", "/api/v1/audit-log/verify", nil, nil); err == nil {
			verified = v.Data()
		}
	}
	vq := maps.Clone(in)
	vq.Set("verify", "1")
	// Actors are named from the picker's page of members and, for the rest of the page's
	// actors, one read each: a member past that page is named, a former one is not found.
	pick := h.memberPicker(r, "actor", in.Get("actor"))
	members := recordNames(pick.records, "name")
	var actors []string
	for _, ev := range list {
		a, _ := ev.(map[string]any)["actor"].(map[string]any)
		actors = append(actors, str(a["user_id"]))
	}
	h.nameMissing(r, members, h.wsPath(r)+"/users/", "name", actors)
	h.render(w, r, http.StatusOK, "audit", &view{Title: "Audit log", Active: "workspace",
		Err: relabel(fail, fieldLabels{"type": "Event", "actor": "Who", "from": "From", "to": "To"}), D: map[string]any{
			"Events": list, "Pages": pages, "Q": in, "Types": data.EventTypes, "Verified": verified,
			"CanVerify": canVerify, "VerifyLink": template.URL("?" + vq.Encode()),
			"Members": members, "ActorPick": pick,
		}})
}
