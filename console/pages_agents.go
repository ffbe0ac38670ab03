package console

import (
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
	m.HandleFunc("POST /agents/{id}/delete", h.action(h.agentDelete))
	m.HandleFunc("GET /agents/{id}/diff", h.page(h.agentDiff))
	m.HandleFunc("GET /agents/{id}/versions/{n}/restore", h.page(h.agentRestoreConfirm))
	m.HandleFunc("POST /agents/{id}/versions/{n}/restore", h.action(h.agentRestore))
	m.HandleFunc("GET /agents/{id}/try", h.page(h.agentTry))
}

// perPage is the console's page size for lists; the API pages, the console follows.
const perPage = "20"

func (h *Handler) agentList(w http.ResponseWriter, r *http.Request) {
	in := r.URL.Query()
	q := url.Values{"per_page": {perPage}}
	for _, k := range []string{"status", "name", "cursor"} {
		if v := in.Get(k); v != "" {
			q.Set(k, v)
		}
	}
	res, err := h.call(r, "GET", "/api/v1/agents", q, nil)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	p := data.PrincipalFrom(r.Context())
	h.render(w, r, http.StatusOK, "agents", &view{Title: "Agents", Active: "agents", D: map[string]any{
		"Agents": res.List(), "Next": res.NextCursor(), "Status": in.Get("status"), "Name": in.Get("name"),
		"CanWrite": p.Allows(data.Write(data.ModuleAgents)) == nil,
	}})
}

func (h *Handler) agentCreate(w http.ResponseWriter, r *http.Request) {
	res, err := h.call(r, "POST", "/api/v1/agents", nil, map[string]any{"name": r.PostFormValue("name")})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	id, _ := res.Data()["id"].(string)
	http.Redirect(w, r, "/agents/"+url.PathEscape(id), http.StatusSeeOther)
}

// editorData is what the agent editor template needs.
type editorData struct {
	A        map[string]any
	ETag     string
	Catalog  map[string]any
	Tools    []any
	CanWrite bool
	LLM      []string
	STT      []string
	TTS      []string
	Types    []string
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
		CanWrite: p.Allows(data.Write(data.ModuleAgents)) == nil,
		LLM:      data.LLMProviders, STT: data.STTProviders, TTS: data.TTSProviders, Types: data.ToolTypes}
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
	q := url.Values{"per_page": {"100"}}
	if c := r.URL.Query().Get("cursor"); c != "" {
		q.Set("cursor", c)
	}
	vs, err := h.call(r, "GET", "/api/v1/agents/"+url.PathEscape(id)+"/versions", q, nil)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	p := data.PrincipalFrom(r.Context())
	name, _ := a.Data()["name"].(string)
	h.render(w, r, http.StatusOK, "versions", &view{Title: name + " · versions", Active: "agents", Notice: r.URL.Query().Get("notice"), D: map[string]any{
		"Agent": a.Data(), "Versions": vs.List(), "Next": vs.NextCursor(),
		"CanWrite": p.Allows(data.Write(data.ModuleAgents)) == nil,
	}})
}

func (h *Handler) agentDelete(w http.ResponseWriter, r *http.Request) {
	if _, err := h.call(r, "DELETE", "/api/v1/agents/"+url.PathEscape(r.PathValue("id")), nil, nil); err != nil {
		h.fail(w, r, err)
		return
	}
	http.Redirect(w, r, "/agents", http.StatusSeeOther)
}

func (h *Handler) agentPublish(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	var body map[string]any
	if d := strings.TrimSpace(r.PostFormValue("description")); d != "" {
		body = map[string]any{"description": d}
	} else {
		body = map[string]any{}
	}
	if _, err := h.call(r, "POST", "/api/v1/agents/"+url.PathEscape(id)+"/publish", nil, body); err != nil {
		h.fail(w, r, err)
		return
	}
	http.Redirect(w, r, "/agents/"+url.PathEscape(id)+"/versions?notice=Published.", http.StatusSeeOther)
}

// diffRow is one changed field, side by side.
type diffRow struct {
	Path     string
	Old, New string
}

func (h *Handler) agentDiff(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	a, b := r.URL.Query().Get("a"), r.URL.Query().Get("b")
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
		"ID": id, "Rows": rows, "A": label(a), "B": label(b),
	}})
}

func (h *Handler) agentRestoreConfirm(w http.ResponseWriter, r *http.Request) {
	h.render(w, r, http.StatusOK, "restore", &view{Title: "Restore version", Active: "agents", D: map[string]any{
		"ID": r.PathValue("id"), "N": r.PathValue("n"),
	}})
}

func (h *Handler) agentRestore(w http.ResponseWriter, r *http.Request) {
	id, n := r.PathValue("id"), r.PathValue("n")
	if _, err := h.call(r, "POST", "/api/v1/agents/"+url.PathEscape(id)+"/versions/"+url.PathEscape(n)+"/restore", nil, nil); err != nil {
		h.fail(w, r, err)
		return
	}
	http.Redirect(w, r, "/agents/"+url.PathEscape(id)+"/versions?notice="+url.QueryEscape("Restored version "+n+"."), http.StatusSeeOther)
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
