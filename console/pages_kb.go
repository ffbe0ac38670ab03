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
	m.HandleFunc("GET /knowledge-bases/{id}/delete", h.page(h.kbDeleteConfirm))
	m.HandleFunc("POST /knowledge-bases/{id}/delete", h.action(h.kbDelete))
	m.HandleFunc("POST /knowledge-bases/{id}/texts", h.action(h.kbAddText))
	m.HandleFunc("POST /knowledge-bases/{id}/urls", h.action(h.kbAddURL))
	m.HandleFunc("GET /knowledge-bases/{id}/sources/{type}/{sid}/delete", h.page(h.sourceDeleteConfirm))
	m.HandleFunc("POST /knowledge-bases/{id}/sources/{type}/{sid}/delete", h.action(h.sourceDelete))
	m.HandleFunc("POST /knowledge-bases/{id}/sources/urls/{sid}/refetch", h.action(h.sourceRefetch))
}

func (h *Handler) kbList(w http.ResponseWriter, r *http.Request) {
	h.renderKBList(w, r, http.StatusOK, nil)
}

func (h *Handler) renderKBList(w http.ResponseWriter, r *http.Request, status int, fail *apiError) {
	res, err := h.call(r, "GET", "/api/v1/knowledge-bases", pageQuery(perPage, r.URL.Query().Get("cursor")), nil)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	p := data.PrincipalFrom(r.Context())
	h.render(w, r, status, "kbs", &view{Title: "Knowledge bases", Active: "knowledge-bases", Err: relabel(fail, fieldLabels{"name": "Name"}), D: map[string]any{
		"KBs": res.List(), "Pages": pagerOf(r, "cursor", res), "CanWrite": p.Allows(data.Write(data.ModuleKnowledgeBase)) == nil,
	}})
}

func (h *Handler) kbCreate(w http.ResponseWriter, r *http.Request) {
	res, err := h.create(r, "/api/v1/knowledge-bases", map[string]any{"name": r.PostFormValue("name")})
	if err != nil {
		h.renderKBList(w, r, err.(*apiError).Status, err.(*apiError))
		return
	}
	h.done(w, r, "/knowledge-bases/"+url.PathEscape(str(res.Data()["id"])), flash{Notice: "Knowledge base created. Add texts, URLs or files to it."})
}

// kbView is the knowledge base page's data.
type kbView struct {
	KB       map[string]any
	ETag     string
	Sources  []source
	Pending  bool
	CanWrite bool
	// Embeddings is where the knowledge base stands with its vectors (the record's
	// embeddings: status, model, progress, error), shown above the sources; the table
	// polls while it is "embedding", as while a source is pending.
	Embeddings map[string]any
	Embedding  bool
	// OthersAgent: an agent the user does not see uses the knowledge base, so it is
	// read-only to them (the API's access.write, canWrite).
	OthersAgent bool
	// The test-retrieval box: the question asked, the chunks found, each with the name
	// of the source it came from.
	Query  string
	Chunks []any
	Tried  bool
	Titles names
	// CSRF is the session's token for the forms of the sources table, which is also
	// rendered alone (kbSources).
	CSRF string
}

// source is one row of the sources table, whatever its type.
type source struct {
	Type, ID, Name, Status, Error string
	Download                      string
	Added, Indexed                any
}

// canWrite reads the access a single-record answer carries beside its record: whether
// the user may change it (the API's rule, service fillKnowledgeBaseAccess; for a knowledge base, no
// agent the user does not see uses it, which the console cannot tell, those agents being
// hidden from it). A read says it, so no page writes to find out.
func canWrite(res *reply) bool {
	access, _ := res.Body["access"].(map[string]any)
	return access["write"] == true
}

func (h *Handler) loadKB(r *http.Request) (*kbView, error) {
	res, err := h.call(r, "GET", "/api/v1/knowledge-bases/"+url.PathEscape(r.PathValue("id")), nil, nil)
	if err != nil {
		return nil, err
	}
	kb := res.Data()
	p := data.PrincipalFrom(r.Context())
	v := &kbView{KB: kb, ETag: res.ETag, CanWrite: canWrite(res), Titles: names{}, CSRF: CSRFToken(SessionToken(r))}
	v.Embeddings, _ = kb["embeddings"].(map[string]any)
	v.Embedding = str(v.Embeddings["status"]) == data.EmbeddingsInProgress
	// Refused although the role may write knowledge bases: an agent the user does not see
	// uses it, which the page says (without naming the agent).
	v.OthersAgent = !v.CanWrite && len(p.AgentIDs) > 0 && p.Allows(data.Write(data.ModuleKnowledgeBase)) == nil
	add := func(typ, nameKey string) {
		for _, it := range asList(kb[typ]) {
			m, _ := it.(map[string]any)
			s := source{Type: typ, ID: str(m["id"]), Name: str(m[nameKey]), Status: str(m["status"]), Error: str(m["error"]),
				Added: m["created_at"], Indexed: m["indexed_at"]}
			if s.Status == "" {
				s.Status = data.SourceIndexed // texts are indexed as they are added
			}
			if s.Name == "" {
				s.Name = "(untitled)"
			}
			if typ == data.SourceFiles {
				s.Download = "/api/v1/knowledge-bases/" + url.PathEscape(str(kb["id"])) + "/sources/files/" + url.PathEscape(s.ID) + "/content"
			}
			v.Pending = v.Pending || s.Status == data.SourcePending
			v.Sources = append(v.Sources, s)
			v.Titles[s.ID] = s.Name
		}
	}
	add(data.SourceTexts, "title")
	add(data.SourceURLs, "url")
	add(data.SourceFiles, "filename")
	return v, nil
}

// kbShow is a knowledge base's page; with ?q= it also runs the test-retrieval box (a GET,
// so that the question is in the URL and a reload asks again without a POST).
func (h *Handler) kbShow(w http.ResponseWriter, r *http.Request) {
	in := r.URL.Query()
	query := strings.TrimSpace(in.Get("q"))
	if query == "" {
		h.renderKB(w, r, http.StatusOK, nil, nil)
		return
	}
	body := map[string]any{"query": query}
	if n, err := strconv.Atoi(in.Get("n")); err == nil {
		body["chunks_to_retrieve"] = n
	}
	res, err := h.call(r, "POST", "/api/v1/knowledge-bases/"+url.PathEscape(r.PathValue("id"))+"/query", nil, body)
	if err != nil {
		fail := relabel(err.(*apiError), fieldLabels{"query": "Question", "chunks_to_retrieve": "Chunks"})
		h.renderKB(w, r, fail.Status, fail, func(v *kbView) { v.Query = query })
		return
	}
	h.renderKB(w, r, http.StatusOK, nil, func(v *kbView) { v.Query, v.Chunks, v.Tried = query, res.List(), true })
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
	h.render(w, r, status, "kb", &view{Title: str(v.KB["name"]), Active: "knowledge-bases", Err: fail, D: v})
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

// kbBack ends a knowledge base form's POST on the knowledge base's page, with notice
// beside the form at (an element id).
func (h *Handler) kbBack(w http.ResponseWriter, r *http.Request, at, notice string) {
	h.done(w, r, "/knowledge-bases/"+url.PathEscape(r.PathValue("id")), flash{Notice: notice, At: at})
}

// kbFormFailed shows the page again with a form's refusal in the words of its labels.
func (h *Handler) kbFormFailed(w http.ResponseWriter, r *http.Request, err error, labels fieldLabels) {
	fail := relabel(err.(*apiError), labels)
	h.renderKB(w, r, fail.Status, fail, nil)
}

func (h *Handler) kbRename(w http.ResponseWriter, r *http.Request) {
	_, err := h.callIfMatch(r, "PUT", "/api/v1/knowledge-bases/"+url.PathEscape(r.PathValue("id")), r.PostFormValue("etag"), map[string]any{"name": r.PostFormValue("name")})
	if err != nil {
		h.kbFormFailed(w, r, err, fieldLabels{"name": "Name"})
		return
	}
	h.kbBack(w, r, "kb-settings", "Renamed.")
}

// kbDeleteConfirm names what deleting the knowledge base loses: its sources, and the
// retrieval of the agents that use it.
func (h *Handler) kbDeleteConfirm(w http.ResponseWriter, r *http.Request) {
	v, err := h.loadKB(r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if h.refusedByAccess(w, r, data.Write(data.ModuleKnowledgeBase), v.CanWrite, data.KnowledgeBaseOfHiddenAgent) {
		return
	}
	id, name := str(v.KB["id"]), str(v.KB["name"])
	lost := []string{"Its " + plural(float64(len(v.Sources)), "source", "sources") + ", with their extracted text, chunks and uploaded files."}
	// The agents that use it, by the agents list's knowledge_base_id= (their configuration
	// or a stored version names it), as the user sees them: the first page named, the
	// others counted. The count walks at most kbUsersPages pages.
	var users []string
	counted, more := 0, false
	q := pageQuery(pickPage, "")
	q.Set("knowledge_base_id", id)
	for range kbUsersPages {
		res, err := h.call(r, "GET", "/api/v1/agents", q, nil)
		if err != nil {
			break
		}
		for _, a := range res.List() {
			if len(users) < 100 {
				users = append(users, str(a.(map[string]any)["name"]))
			}
			counted++
		}
		next := res.NextCursor()
		if next == "" {
			more = false
			break
		}
		q.Set("cursor", next)
		more = true
	}
	if len(users) > 0 {
		who := strings.Join(users, ", ")
		switch others := counted - len(users); {
		case more && others > 0:
			who += " and at least " + plural(float64(others), "other agent", "other agents")
		case more:
			who += " and maybe other agents"
		case others > 0:
			who += " and " + plural(float64(others), "other agent", "other agents")
		}
		lost = append(lost, "Retrieval from it for "+who+" (by their configuration or a published version): the knowledge base is taken off those agents.")
	} else if more {
		lost = append(lost, "Retrieval from it for any agent that uses it: none was found among the agents looked at here, not all of them.")
	}
	h.confirmPage(w, r, "knowledge-bases", confirmation{
		Title: "Delete the knowledge base " + name + "?", Lost: lost, Need: needOf(data.Write(data.ModuleKnowledgeBase)),
		Button: "Delete knowledge base", Cancel: "/knowledge-bases/" + url.PathEscape(id),
		Crumb: "Knowledge bases", CrumbHref: "/knowledge-bases",
	}, http.StatusOK, nil)
}

// kbUsersPages bounds the pages of agents a knowledge base's delete confirmation reads to
// count those using it (each page looks at no more than 5,000 agents on bbolt).
const kbUsersPages = 20

func (h *Handler) kbDelete(w http.ResponseWriter, r *http.Request) {
	if _, err := h.call(r, "DELETE", "/api/v1/knowledge-bases/"+url.PathEscape(r.PathValue("id")), nil, nil); err != nil {
		h.fail(w, r, err)
		return
	}
	h.done(w, r, "/knowledge-bases", flash{Notice: "Knowledge base deleted."})
}

func (h *Handler) kbAddText(w http.ResponseWriter, r *http.Request) {
	body := map[string]any{"texts": []map[string]string{{"title": r.PostFormValue("title"), "content": r.PostFormValue("content")}}}
	if _, err := h.create(r, "/api/v1/knowledge-bases/"+url.PathEscape(r.PathValue("id"))+"/sources/add", body); err != nil {
		h.kbFormFailed(w, r, err, fieldLabels{"texts.#.title": "Title", "texts.#.content": "Content"})
		return
	}
	h.kbBack(w, r, "sources-box", "Text added.")
}

func (h *Handler) kbAddURL(w http.ResponseWriter, r *http.Request) {
	body := map[string]any{"urls": []string{strings.TrimSpace(r.PostFormValue("url"))}}
	if _, err := h.create(r, "/api/v1/knowledge-bases/"+url.PathEscape(r.PathValue("id"))+"/sources/add", body); err != nil {
		h.kbFormFailed(w, r, err, fieldLabels{"urls.#": "URL"})
		return
	}
	h.kbBack(w, r, "sources-box", "URL added; it is fetched in the background.")
}

// sourceDeleteConfirm names the source a deletion removes.
func (h *Handler) sourceDeleteConfirm(w http.ResponseWriter, r *http.Request) {
	v, err := h.loadKB(r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if h.refusedByAccess(w, r, data.Write(data.ModuleKnowledgeBase), v.CanWrite, data.KnowledgeBaseOfHiddenAgent) {
		return
	}
	sid := r.PathValue("sid")
	name, ok := v.Titles[sid]
	if !ok {
		h.fail(w, r, &apiError{Status: http.StatusNotFound, Code: data.ENOTFOUND, Message: "No such source."})
		return
	}
	lost := []string{"Its extracted text and chunks: retrieval stops returning them at once."}
	if r.PathValue("type") == data.SourceFiles {
		lost = append(lost, "The uploaded file itself.")
	}
	h.confirmPage(w, r, "knowledge-bases", confirmation{
		Title: "Remove " + name + " from " + str(v.KB["name"]) + "?", Lost: lost, Need: needOf(data.Write(data.ModuleKnowledgeBase)),
		Button: "Remove source", Cancel: "/knowledge-bases/" + url.PathEscape(str(v.KB["id"])),
		Crumb: "Knowledge bases", CrumbHref: "/knowledge-bases",
	}, http.StatusOK, nil)
}

func (h *Handler) sourceDelete(w http.ResponseWriter, r *http.Request) {
	path := "/api/v1/knowledge-bases/" + url.PathEscape(r.PathValue("id")) + "/sources/delete/" + url.PathEscape(r.PathValue("type")) + "/" + url.PathEscape(r.PathValue("sid"))
	if _, err := h.call(r, "DELETE", path, nil, nil); err != nil {
		h.fail(w, r, err)
		return
	}
	h.kbBack(w, r, "sources-box", "Source removed.")
}

// sourceRefetch fetches a URL source again (its page changed, or the fetch failed).
func (h *Handler) sourceRefetch(w http.ResponseWriter, r *http.Request) {
	path := "/api/v1/knowledge-bases/" + url.PathEscape(r.PathValue("id")) + "/sources/urls/" + url.PathEscape(r.PathValue("sid")) + "/refetch"
	if _, err := h.call(r, "POST", path, nil, nil); err != nil {
		h.fail(w, r, err)
		return
	}
	h.kbBack(w, r, "sources-box", "The URL is fetched again in the background.")
}

// strs reads a decoded JSON array of strings.
func strs(v any) []string {
	l, _ := v.([]any)
	out := make([]string, 0, len(l))
	for _, x := range l {
		out = append(out, str(x))
	}
	return out
}
