package console

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/voiceapi/voiceapi/data"
)

func (h *Handler) kbRoutes() {
	m := h.mux
	m.HandleFunc("GET /knowledge-bases", h.page(h.kbList))
	m.HandleFunc("POST /knowledge-bases", h.action(h.kbCreate))
	m.HandleFunc("GET /knowledge-bases/{id}", h.page(h.kbShow))
	m.HandleFunc("GET /knowledge-bases/{id}/sources", h.page(h.kbSources))
	m.HandleFunc("POST /knowledge-bases/{id}/rename", h.action(h.kbRename))
	m.HandleFunc("POST /knowledge-bases/{id}/delete", h.action(h.kbDelete))
	m.HandleFunc("POST /knowledge-bases/{id}/texts", h.action(h.kbAddText))
	m.HandleFunc("POST /knowledge-bases/{id}/urls", h.action(h.kbAddURL))
	m.HandleFunc("POST /knowledge-bases/{id}/query", h.action(h.kbQuery))
}

func (h *Handler) kbList(w http.ResponseWriter, r *http.Request) {
	h.renderKBList(w, r, http.StatusOK, nil)
}

func (h *Handler) renderKBList(w http.ResponseWriter, r *http.Request, status int, fail *apiError) {
	q := url.Values{"per_page": {perPage}}
	if c := r.URL.Query().Get("cursor"); c != "" {
		q.Set("cursor", c)
	}
	res, err := h.call(r, "GET", "/api/v1/knowledge-bases", q, nil)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	p := data.PrincipalFrom(r.Context())
	h.render(w, r, status, "kbs", &view{Title: "Knowledge bases", Active: "knowledge-bases", Err: fail, Notice: r.URL.Query().Get("notice"), D: map[string]any{
		"KBs": res.List(), "Next": res.NextCursor(), "CanWrite": p.Allows(data.Write(data.ModuleKnowledgeBase)) == nil,
	}})
}

func (h *Handler) kbCreate(w http.ResponseWriter, r *http.Request) {
	res, err := h.call(r, "POST", "/api/v1/knowledge-bases", nil, map[string]any{"name": r.PostFormValue("name")})
	if err != nil {
		h.renderKBList(w, r, err.(*apiError).Status, err.(*apiError))
		return
	}
	http.Redirect(w, r, "/knowledge-bases/"+url.PathEscape(str(res.Data()["id"])), http.StatusSeeOther)
}

// kbView is the knowledge base page's data.
type kbView struct {
	KB       map[string]any
	ETag     string
	Sources  []source
	Pending  bool
	CanWrite bool
	Query    string
	Chunks   []any
	Tried    bool
}

// source is one row of the sources table, whatever its type.
type source struct {
	Type, ID, Name, Status, Error string
	Download                      string
}

func (h *Handler) loadKB(r *http.Request) (*kbView, error) {
	res, err := h.call(r, "GET", "/api/v1/knowledge-bases/"+url.PathEscape(r.PathValue("id")), nil, nil)
	if err != nil {
		return nil, err
	}
	kb := res.Data()
	p := data.PrincipalFrom(r.Context())
	v := &kbView{KB: kb, ETag: res.ETag, CanWrite: p.Allows(data.Write(data.ModuleKnowledgeBase)) == nil}
	add := func(typ, list, nameKey string) {
		items, _ := kb[list].([]any)
		for _, it := range items {
			m, _ := it.(map[string]any)
			s := source{Type: typ, ID: str(m["id"]), Name: str(m[nameKey]), Status: str(m["status"]), Error: str(m["error"])}
			if s.Status == "" {
				s.Status = data.SourceIndexed // texts are indexed as they are added
			}
			if s.Name == "" {
				s.Name = "(untitled)"
			}
			if typ == "file" {
				s.Download = "/api/v1/knowledge-bases/" + url.PathEscape(str(kb["id"])) + "/sources/files/" + url.PathEscape(s.ID) + "/content"
			}
			v.Pending = v.Pending || s.Status == data.SourcePending
			v.Sources = append(v.Sources, s)
		}
	}
	add("text", "texts", "title")
	add("url", "urls", "url")
	add("file", "files", "filename")
	return v, nil
}

func (h *Handler) kbShow(w http.ResponseWriter, r *http.Request) {
	h.renderKB(w, r, http.StatusOK, nil, nil)
}

func (h *Handler) renderKB(w http.ResponseWriter, r *http.Request, status int, fail *apiError, with func(*kbView)) {
	v, err := h.loadKB(r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if with != nil {
		with(v)
	}
	h.render(w, r, status, "kb", &view{Title: str(v.KB["name"]), Active: "knowledge-bases", Err: fail, Notice: r.URL.Query().Get("notice"), D: v})
}

// kbSources is the sources table alone, which the page polls while a source is pending.
func (h *Handler) kbSources(w http.ResponseWriter, r *http.Request) {
	v, err := h.loadKB(r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.renderPart(w, r, "kb", "sources", v)
}

func (h *Handler) kbBack(w http.ResponseWriter, r *http.Request, notice string) {
	http.Redirect(w, r, "/knowledge-bases/"+url.PathEscape(r.PathValue("id"))+"?notice="+url.QueryEscape(notice), http.StatusSeeOther)
}

func (h *Handler) kbRename(w http.ResponseWriter, r *http.Request) {
	_, err := h.callIfMatch(r, "PUT", "/api/v1/knowledge-bases/"+url.PathEscape(r.PathValue("id")), r.PostFormValue("etag"), map[string]any{"name": r.PostFormValue("name")})
	if err != nil {
		h.renderKB(w, r, err.(*apiError).Status, err.(*apiError), nil)
		return
	}
	h.kbBack(w, r, "Renamed.")
}

func (h *Handler) kbDelete(w http.ResponseWriter, r *http.Request) {
	if _, err := h.call(r, "DELETE", "/api/v1/knowledge-bases/"+url.PathEscape(r.PathValue("id")), nil, nil); err != nil {
		h.fail(w, r, err)
		return
	}
	http.Redirect(w, r, "/knowledge-bases?notice=Knowledge+base+deleted.", http.StatusSeeOther)
}

func (h *Handler) kbAddText(w http.ResponseWriter, r *http.Request) {
	body := map[string]any{"texts": []map[string]string{{"title": r.PostFormValue("title"), "content": r.PostFormValue("content")}}}
	if _, err := h.call(r, "POST", "/api/v1/knowledge-bases/"+url.PathEscape(r.PathValue("id"))+"/sources/add", nil, body); err != nil {
		h.renderKB(w, r, err.(*apiError).Status, err.(*apiError), nil)
		return
	}
	h.kbBack(w, r, "Text added.")
}

func (h *Handler) kbAddURL(w http.ResponseWriter, r *http.Request) {
	body := map[string]any{"urls": []string{strings.TrimSpace(r.PostFormValue("url"))}}
	if _, err := h.call(r, "POST", "/api/v1/knowledge-bases/"+url.PathEscape(r.PathValue("id"))+"/sources/add", nil, body); err != nil {
		h.renderKB(w, r, err.(*apiError).Status, err.(*apiError), nil)
		return
	}
	h.kbBack(w, r, "URL added; it is fetched in the background.")
}

// kbQuery is the test-retrieval box: the chunks and scores the query endpoint returns.
func (h *Handler) kbQuery(w http.ResponseWriter, r *http.Request) {
	query := r.PostFormValue("query")
	body := map[string]any{"query": query}
	if n, err := strconv.Atoi(r.PostFormValue("chunks_to_retrieve")); err == nil {
		body["chunks_to_retrieve"] = n
	}
	res, err := h.call(r, "POST", "/api/v1/knowledge-bases/"+url.PathEscape(r.PathValue("id"))+"/query", nil, body)
	if err != nil {
		h.renderKB(w, r, err.(*apiError).Status, err.(*apiError), func(v *kbView) { v.Query = query })
		return
	}
	h.renderKB(w, r, http.StatusOK, nil, func(v *kbView) { v.Query, v.Chunks, v.Tried = query, res.List(), true })
}
