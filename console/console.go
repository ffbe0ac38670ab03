// Package console is voiceapi's web dashboard: server-rendered html/template pages with
// embedded static files, served by `voiceapi serve` at / on the API's own listener.
//
// The console holds no rule of its own. Its pages read and write through the REST API in
// process, as the signed-in user (api.go); the agent editor's script sends JSON to the same
// REST endpoints from the browser, with the session cookie and its CSRF token. What the
// API refuses, the console shows refused.
package console

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"strings"

	"github.com/voiceapi/voiceapi/data"
)

// Options configure the console.
type Options struct {
	// API serves the REST API; the console's pages call it in process.
	API http.Handler
	// Secure reports whether a request reached us over TLS, for the cookies' Secure flag;
	// r.TLS != nil when nil.
	Secure func(r *http.Request) bool
	// NoBackups says the server takes no backups (GET /api/v1/admin/backup answers 404: it
	// keeps its records in PostgreSQL, which its own tools back up), so the instance page
	// says how to back up instead of offering a download that would fail.
	NoBackups bool
}

// Handler serves the console's pages and static files.
type Handler struct {
	api       http.Handler
	secure    func(*http.Request) bool
	assets    *assets
	pages     map[string]*template.Template
	mux       *http.ServeMux
	noBackups bool
}

// ContentSecurityPolicy is the policy of every console page: scripts and styles only from
// this origin (no inline script), and no framing.
const ContentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; form-action 'self'; base-uri 'none'; object-src 'none'; frame-ancestors 'none'"

// New builds the console.
func New(o Options) *Handler {
	h := &Handler{api: o.API, secure: o.Secure, assets: loadAssets(), noBackups: o.NoBackups}
	if h.secure == nil {
		h.secure = func(r *http.Request) bool { return r.TLS != nil }
	}
	h.pages = h.parsePages()
	h.mux = http.NewServeMux()
	h.routes()
	return h
}

// apiRootPaths are the server's own paths outside /api: they keep their meaning (and
// their JSON 404 and 405) whatever the console serves.
var apiRootPaths = []string{"/healthz", "/readyz", "/metrics"}

// Owns reports whether path is the console's: every path but the API's (/api and below,
// and apiRootPaths). So an unknown URL outside the API gets the console's HTML 404 page,
// while the API keeps its JSON one.
func Owns(path string) bool {
	if path == "/api" || strings.HasPrefix(path, "/api/") {
		return false
	}
	return !has(apiRootPaths, path)
}

// ServeHTTP serves one console request.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	setPageHeaders(w.Header())
	h.mux.ServeHTTP(w, r)
}

// Starting answers a console request while the server opens its database: the static
// files as ever, so that every other path gets a page in the console's look saying the
// server is starting, 503 with Retry-After, which reloads itself after as many seconds
// (a meta refresh: no script needed).
func (h *Handler) Starting(w http.ResponseWriter, r *http.Request, retryAfter string) {
	setPageHeaders(w.Header())
	if r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/static/") {
		h.assets.ServeHTTP(w, r)
		return
	}
	w.Header().Set("Retry-After", retryAfter)
	// No session is read (a principal needs the database) and a flash is left for the page
	// it was meant for.
	h.render(w, r, http.StatusServiceUnavailable, "starting", &view{Title: "Starting", Refresh: retryAfter, Flash: &flash{}, Narrow: true})
}

func setPageHeaders(hd http.Header) {
	hd.Set("Content-Security-Policy", ContentSecurityPolicy)
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "same-origin")
}

// parsePages parses each page with the layout: every page defines "content".
func (h *Handler) parsePages() map[string]*template.Template {
	layout := template.Must(template.New("layout.html").Funcs(h.templateFuncs()).ParseFS(files, "templates/layout.html"))
	names, err := fs.Glob(files, "templates/*.html")
	if err != nil {
		panic(err)
	}
	out := map[string]*template.Template{}
	for _, n := range names {
		base := strings.TrimSuffix(strings.TrimPrefix(n, "templates/"), ".html")
		if base == "layout" {
			continue
		}
		out[base] = template.Must(template.Must(layout.Clone()).ParseFS(files, n))
	}
	return out
}

// view is what every page template gets.
type view struct {
	Title  string
	P      *data.Principal
	User   map[string]any
	CSRF   string
	Nav    []navItem
	Active string
	Notice string
	// Flash is what the POST before this page's redirect left for it (flash.go).
	Flash   *flash
	Err     *apiError
	D       any
	Narrow  bool
	Compact bool
	// Refresh, when set, reloads the page after so many seconds (a meta refresh).
	Refresh string
}

type navItem struct{ Key, Label, Href string }

// nav lists the sections p may open: a module's section only for a member holding it.
func nav(p *data.Principal) []navItem {
	if p == nil {
		return nil
	}
	var out []navItem
	add := func(module, key, label string) {
		if module == "" || has(p.Modules, module) {
			out = append(out, navItem{key, label, "/" + key})
		}
	}
	add(data.ModuleAgents, "agents", "Agents")
	add(data.ModuleKnowledgeBase, "knowledge-bases", "Knowledge bases")
	add(data.ModulePhoneNumbers, "numbers", "Numbers")
	add(data.ModuleCallHistory, "calls", "Calls")
	if mayReadConversations(p) { // the API's gate (data.ConversationNeed)
		add("", "conversations", "Conversations")
	}
	add(data.ModuleCallHistory, "campaigns", "Campaigns")
	add(data.ModuleAnalytics, "analytics", "Analytics")
	if mayReadJobs(p) {
		add("", "jobs", "Jobs")
	}
	if p.Allows(data.NeedWebhooks(false)) == nil { // the API's rule (conventions §6)
		add("", "webhooks", "Webhooks")
	}
	add("", "api-keys", "API keys")
	return out
}

// render writes a page, gzipped when the client takes it.
func (h *Handler) render(w http.ResponseWriter, r *http.Request, status int, name string, v *view) {
	v.P = data.PrincipalFrom(r.Context())
	if v.P != nil {
		v.CSRF = CSRFToken(SessionToken(r))
		v.Nav = nav(v.P)
	}
	if v.Flash == nil {
		v.Flash = h.takeFlash(w, r)
	}
	if f := v.Flash; f != nil && v.Notice == "" && f.At == "" {
		v.Notice = f.Notice
	}
	var buf bytes.Buffer
	if err := h.pages[name].ExecuteTemplate(&buf, "layout", v); err != nil {
		panic(fmt.Errorf("console: page %s: %w", name, err)) // a template bug; observe masks it
	}
	hd := w.Header()
	hd.Set("Content-Type", "text/html; charset=utf-8")
	hd.Set("Cache-Control", "no-store")
	hd.Add("Vary", "Accept-Encoding")
	if acceptsGzip(r) {
		hd.Set("Content-Encoding", "gzip")
		w.WriteHeader(status)
		zw := gzip.NewWriter(w)
		zw.Write(buf.Bytes())
		zw.Close()
		return
	}
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// Unavailable shows the error page with 503 and Retry-After: the page cannot be served
// now (the database is unreachable), and message says so.
func (h *Handler) Unavailable(w http.ResponseWriter, r *http.Request, message string) {
	h.fail(w, r, &apiError{Status: http.StatusServiceUnavailable, Code: data.EUNAVAILABLE, Message: message})
}

// renderPart writes one named template of a page alone: a fragment a page's script
// swaps in.
func (h *Handler) renderPart(w http.ResponseWriter, r *http.Request, page, name string, d any) {
	var buf bytes.Buffer
	if err := h.pages[page].ExecuteTemplate(&buf, name, d); err != nil {
		panic(fmt.Errorf("console: %s/%s: %w", page, name, err))
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Write(buf.Bytes())
}

// refuse writes a console failure in the API's error shape.
func refuse(w http.ResponseWriter, status int, code, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"message": message, "code": code})
}

func has(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
