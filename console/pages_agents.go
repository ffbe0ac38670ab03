package console

import (
	"maps"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/voiceapi/voiceapi/data"
)

func (h *Handler) agentRoutes() {
	m := h.mux
	m.HandleFunc("GET /agents", h.page(h.agentList))
	m.HandleFunc("POST /agents", h.action(h.agentCreate))
	m.HandleFunc("GET /agents/{id}", h.page(h.agentEditor))
	m.HandleFunc("GET /agents/{id}/versions", h.page(h.agentVersions))
	m.HandleFunc("POST /agents/{id}/publish", h.action(h.agentPublish))
	m.HandleFunc("GET /agents/{id}/delete", h.page(h.agentDeleteConfirm))
	m.HandleFunc("POST /agents/{id}/delete", h.action(h.agentDelete))
	m.HandleFunc("GET /agents/{id}/diff", h.page(h.agentDiff))
	m.HandleFunc("GET /agents/{id}/versions/{n}/restore", h.page(h.agentRestoreConfirm))
	m.HandleFunc("POST /agents/{id}/versions/{n}/restore", h.action(h.agentRestore))
	m.HandleFunc("GET /agents/{id}/versions/{n}/delete", h.page(h.agentVersionDeleteConfirm))
	m.HandleFunc("POST /agents/{id}/versions/{n}/delete", h.action(h.agentVersionDelete))
	m.HandleFunc("GET /agents/{id}/try", h.page(h.agentTry))
}

func (h *Handler) agentList(w http.ResponseWriter, r *http.Request) {
	h.renderAgents(w, r, http.StatusOK, nil)
}

func (h *Handler) renderAgents(w http.ResponseWriter, r *http.Request, status int, fail *apiError) {
	in := r.URL.Query()
	q := pageQuery(perPage, in.Get("cursor"))
	for _, k := range []string{"status", "name"} {
		if v := in.Get(k); v != "" {
			q.Set(k, v)
		}
	}
	res, err := h.call(r, "GET", "/api/v1/agents", q, nil)
	var (
		list       []any
		pages      pager
		filterFail *apiError
	)
	if err == nil {
		list, pages = res.List(), pagerOf(r, "cursor", res)
	} else if e, ok := err.(*apiError); ok && e.Status == http.StatusUnprocessableEntity {
		// A hand-edited filter or page is the API's 422, shown above the list as on the
		// other lists: it was an error page, and beside the create form's name field
		// when it was the name's.
		filterFail = relabel(e, fieldLabels{"name": "Name", "status": "Status", "cursor": "Page"})
	} else {
		h.fail(w, r, err)
		return
	}
	p := data.PrincipalFrom(r.Context())
	h.render(w, r, status, "agents", &view{Title: "Agents", Active: "agents", Err: relabel(fail, fieldLabels{"name": "Name"}), D: map[string]any{
		"Agents": list, "Pages": pages, "FilterErr": filterFail, "Status": in.Get("status"), "Name": in.Get("name"),
		"CanWrite": p.Allows(data.Write(data.ModuleAgents)) == nil,
		// A member limited to some agents may change those, not add one (the API's rule).
		"CanCreate": p.Allows(data.NeedAgentCreate()) == nil,
	}})
}

func (h *Handler) agentCreate(w http.ResponseWriter, r *http.Request) {
	res, err := h.create(r, "/api/v1/agents", map[string]any{"name": r.PostFormValue("name")})
	if err != nil {
		h.renderAgents(w, r, err.(*apiError).Status, err.(*apiError))
		return
	}
	id, _ := res.Data()["id"].(string)
	h.done(w, r, "/agents/"+url.PathEscape(id), flash{Notice: "Agent created. It is a draft: try it, then publish it from Versions."})
}

// editorData is what the agent editor template needs.
type editorData struct {
	A        map[string]any
	ETag     string
	Catalog  map[string]any
	Tools    []any
	CanWrite bool
	// CanAnalyze tells whether the user holds the analytics module, which the agent's
	// analysis page reads.
	CanAnalyze bool
	LLM        []string
	STT        []string
	TTS        []string
	Types      []string
	// KBs are the knowledge bases the picker offers; KBsOK is false when the user may
	// not list them (the picker then takes ids).
	KBs     []any
	KBNames names
	KBsOK   bool
	// KBChosen are the agent's knowledge bases past the page of KBs, named when the user
	// may read them; KBMore is the list's next cursor, for the picker's More button.
	KBChosen []pickChoice
	KBMore   string
}

func (h *Handler) agentEditor(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	res, err := h.call(r, "GET", "/api/v1/agents/"+url.PathEscape(id), nil, nil)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	cat, err := h.call(r, "GET", "/api/v1/catalog", nil, nil)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	a := res.Data()
	tools, _ := lookup(a, "llm_config.tools").([]any)
	p := data.PrincipalFrom(r.Context())
	d := editorData{A: a, ETag: res.ETag, Catalog: cat.Data(), Tools: tools,
		CanWrite: p.Allows(data.Write(data.ModuleAgents)) == nil, CanAnalyze: p.Allows(data.Read(data.ModuleAnalytics)) == nil,
		LLM: data.LLMProviders, STT: data.STTProviders, TTS: data.TTSProviders, Types: data.ToolTypes}
	if kbs, err := h.call(r, "GET", "/api/v1/knowledge-bases", url.Values{"per_page": {"100"}}, nil); err == nil {
		d.KBs, d.KBsOK, d.KBMore = kbs.List(), true, kbs.NextCursor()
		d.KBNames = recordNames(d.KBs, "name")
		chosen := strs(lookup(a, "llm_config.knowledge_base_ids"))
		shown := names{}
		maps.Copy(shown, d.KBNames)
		h.nameMissing(r, shown, "/api/v1/knowledge-bases/", "name", chosen)
		for _, id := range chosen {
			if _, onPage := d.KBNames[id]; !onPage {
				d.KBChosen = append(d.KBChosen, pickChoice{ID: id, Name: shown[id]})
			}
		}
	}
	name, _ := a["name"].(string)
	h.render(w, r, http.StatusOK, "agent", &view{Title: name, Active: "agents", D: d})
}

func (h *Handler) agentVersions(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	a, err := h.call(r, "GET", "/api/v1/agents/"+url.PathEscape(id), nil, nil)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	q := r.URL.Query()
	vs, err := h.call(r, "GET", "/api/v1/agents/"+url.PathEscape(id)+"/versions", pageQuery(pickPage, q.Get("cursor")), nil)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	// The comparison's pickers start from the list's read when it is the newest page.
	var firstPage *reply
	if q.Get("cursor") == "" {
		firstPage = vs
	}
	gate, err := h.call(r, "GET", "/api/v1/agents/"+url.PathEscape(id)+"/publish-gate", nil, nil)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	p := data.PrincipalFrom(r.Context())
	name, _ := a.Data()["name"].(string)
	canWrite := p.Allows(data.Write(data.ModuleAgents)) == nil
	var inUse map[string]bool
	if canWrite {
		inUse = h.versionsInUse(r, id, a.Data())
	}
	h.render(w, r, http.StatusOK, "versions", &view{Title: name + " · versions", Active: "agents", D: map[string]any{
		"Agent": a.Data(), "Versions": vs.List(), "Pages": pagerOf(r, "cursor", vs), "Gate": gate.Data(),
		"DiffA": h.versionPicker(r, id, "a", q.Get("a"), firstPage), "DiffB": h.versionPicker(r, id, "b", q.Get("b"), firstPage),
		"CanWrite": canWrite, "CanForce": data.RoleAtLeast(p.Role, data.RoleAdmin), "InUse": inUse,
		"CanAnalyze": p.Allows(data.Read(data.ModuleAnalytics)) == nil,
	}})
}

// agentDeleteConfirm names what deleting the agent takes with it: its versions and its
// place on numbers and in members' agent lists; its calls stay.
func (h *Handler) agentDeleteConfirm(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	res, err := h.call(r, "GET", "/api/v1/agents/"+url.PathEscape(id), nil, nil)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	a := res.Data()
	name := str(a["name"])
	lost := []string{"Its draft and every published version (" + plural(num(a["published_version"]), "version", "versions") + ")."}
	if nums, err := h.call(r, "GET", "/api/v1/numbers", url.Values{"agent_id": {id}, "per_page": {"100"}}, nil); err == nil && len(nums.List()) > 0 {
		var phones []string
		for _, n := range nums.List() {
			m, _ := n.(map[string]any)
			phones = append(phones, numberLabel(m))
		}
		lost = append(lost, "Calls to "+strings.Join(phones, ", ")+" stop reaching it: those numbers are left without this agent.")
	}
	h.confirmPage(w, r, "agents", confirmation{
		Title: "Delete the agent " + name + "?", Lost: lost, Need: needOf(data.Write(data.ModuleAgents)),
		Kept:   []string{"Its call history: calls keep their transcripts and analysis."},
		Button: "Delete agent", Cancel: "/agents/" + url.PathEscape(id), Crumb: "Agents", CrumbHref: "/agents",
	}, http.StatusOK, nil)
}

func (h *Handler) agentDelete(w http.ResponseWriter, r *http.Request) {
	if _, err := h.call(r, "DELETE", "/api/v1/agents/"+url.PathEscape(r.PathValue("id")), nil, nil); err != nil {
		h.fail(w, r, err)
		return
	}
	h.done(w, r, "/agents", flash{Notice: "Agent deleted."})
}

func (h *Handler) agentPublish(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	body := map[string]any{}
	if d := strings.TrimSpace(r.PostFormValue("description")); d != "" {
		body["description"] = d
	}
	if r.PostFormValue("force") != "" {
		body["force"] = true // past the publish gate: owners and admins, audited
	}
	if _, err := h.call(r, "POST", "/api/v1/agents/"+url.PathEscape(id)+"/publish", nil, body); err != nil {
		h.fail(w, r, err)
		return
	}
	h.done(w, r, "/agents/"+url.PathEscape(id)+"/versions", flash{Notice: "Published: this version is what calls run now."})
}

// diffRow is one changed field, side by side.
type diffRow struct {
	Path     string
	Old, New string
}

func (h *Handler) agentDiff(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	a, b := r.URL.Query().Get("a"), r.URL.Query().Get("b")
	if b == "" {
		b = "current" // the form's "Draft"
	}
	// Each side is a version's number or the draft: anything else (an address cut short,
	// a hand-edited one) asked the API for a route it has not and showed its "No route
	// matches GET /api/v1/…" on the page.
	for _, v := range []string{a, b} {
		if n, err := strconv.Atoi(v); v != "current" && (err != nil || n < 1) {
			h.notFound(w, r)
			return
		}
	}
	// The API diffs an older version against a newer one or the draft ("current").
	if b != "current" && a != "current" {
		if x, _ := strconv.Atoi(a); x > 0 {
			if y, _ := strconv.Atoi(b); y > 0 && y < x {
				a, b = b, a
			}
		}
	} else if a == "current" {
		a, b = b, a
	}
	res, err := h.call(r, "GET", "/api/v1/agents/"+url.PathEscape(id)+"/versions/"+url.PathEscape(a)+"/diff/"+url.PathEscape(b), nil, nil)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	var rows []diffRow
	for _, c := range res.List() {
		m, _ := c.(map[string]any)
		path, _ := m["path"].(string)
		rows = append(rows, diffRow{Path: path, Old: pretty(m["old"]), New: pretty(m["new"])})
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Path < rows[j].Path })
	label := func(s string) string {
		if s == "current" {
			return "Draft"
		}
		return "Version " + s
	}
	h.render(w, r, http.StatusOK, "diff", &view{Title: "Diff", Active: "agents", D: map[string]any{
		"ID": id, "Name": h.agentNames(r, nil, id).Of(id), "Rows": rows, "A": label(a), "B": label(b),
	}})
}

func (h *Handler) agentRestoreConfirm(w http.ResponseWriter, r *http.Request) {
	id, n := r.PathValue("id"), r.PathValue("n")
	a, err := h.call(r, "GET", "/api/v1/agents/"+url.PathEscape(id), nil, nil)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	lost := []string{"Changes to the draft that are not published."}
	if str(a.Data()["status"]) == data.AgentStatusPublished {
		lost = nil // the draft is the published version: nothing unpublished to lose
	}
	h.confirmPage(w, r, "agents", confirmation{
		Title: "Restore version " + n + " of " + str(a.Data()["name"]) + "?", Need: needOf(data.Write(data.ModuleAgents)),
		Lost: lost,
		Kept: []string{"Every version: restoring creates none and deletes none.",
			"Calls from now on run version " + n + "; the draft becomes version " + n + "'s configuration."},
		Button: "Restore version " + n, Cancel: "/agents/" + url.PathEscape(id) + "/versions",
		Crumb: "Agents", CrumbHref: "/agents", Undoable: true,
	}, http.StatusOK, nil)
}

func (h *Handler) agentRestore(w http.ResponseWriter, r *http.Request) {
	id, n := r.PathValue("id"), r.PathValue("n")
	if _, err := h.call(r, "POST", "/api/v1/agents/"+url.PathEscape(id)+"/versions/"+url.PathEscape(n)+"/restore", nil, nil); err != nil {
		h.fail(w, r, err)
		return
	}
	h.done(w, r, "/agents/"+url.PathEscape(id)+"/versions", flash{Notice: "Restored version " + n + "."})
}

// plural writes a count with its noun: "1 version", "3 versions".
func plural(n float64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return count(n) + " " + many
}

// lookup walks a dot path through decoded JSON; nil when a step is missing.
func lookup(v any, path string) any {
	for _, k := range strings.Split(path, ".") {
		switch x := v.(type) {
		case map[string]any:
			v = x[k]
		case []any:
			i, err := strconv.Atoi(k)
			if err != nil || i < 0 || i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}

// pretty shows a diff value: strings bare, absent as an em dash, the rest as JSON.
func pretty(v any) string {
	if v == nil {
		return "—"
	}
	if s, ok := v.(string); ok {
		return s
	}
	return toJSON(v)
}
