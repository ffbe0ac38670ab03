package console

import (
	"net/http"
	"net/url"
	"strings"
	"unicode"

	"github.com/voiceapi/voiceapi/data"
)

func (h *Handler) routes() {
	m := h.mux
	m.Handle("GET /static/", h.assets)
	m.HandleFunc("GET /login", h.loginPage)
	m.HandleFunc("POST /login", h.loginSubmit)
	m.HandleFunc("POST /logout", h.action(h.logout))
	m.HandleFunc("GET /favicon.ico", h.favicon)
	m.HandleFunc("GET /{$}", h.page(h.home))
	h.workspaceRoutes()
	h.agentRoutes()
	h.testRoutes()
	h.rolloutRoutes()
	h.analysisRoutes()
	h.keyRoutes()
	h.numberRoutes()
	h.kbRoutes()
	h.webhookRoutes()
	h.callRoutes()
	h.conversationRoutes()
	h.campaignRoutes()
	h.suppressionRoutes()
	h.jobRoutes()
	h.accountRoutes()
	h.userRoutes()
	// Any other URL: the HTML 404 page, signed in or not (the API keeps its JSON 404).
	m.HandleFunc("/", h.notFound)
}

// notFound is the console's 404 page.
func (h *Handler) notFound(w http.ResponseWriter, r *http.Request) {
	h.render(w, r, http.StatusNotFound, "notfound", &view{Title: "Page not found", Narrow: data.PrincipalFrom(r.Context()) == nil})
}

// favicon answers browsers that ask for /favicon.ico before reading the page's icon link.
func (h *Handler) favicon(w http.ResponseWriter, r *http.Request) {
	http.Redirect(w, r, h.assets.URL("favicon.svg"), http.StatusMovedPermanently)
}

// page serves fn to a signed-in user and sends anyone else to the sign-in page.
func (h *Handler) page(fn http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if data.PrincipalFrom(r.Context()) == nil {
			http.Redirect(w, r, "/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
			return
		}
		// A POST form's picker buttons read its page again by GET (pickers.go), which
		// sends every field of the form: the CSRF token and the Idempotency-Key are taken
		// off the URL, so neither stays in the browser's history.
		if q := r.URL.Query(); q.Has(csrfField) || q.Has(idempotencyField) {
			q.Del(csrfField)
			q.Del(idempotencyField)
			http.Redirect(w, r, r.URL.Path+"?"+q.Encode(), http.StatusSeeOther)
			return
		}
		fn(w, r)
	}
}

// action serves a state-changing form post: a session and its CSRF token are required,
// else 403 in the API's error shape.
func (h *Handler) action(fn http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		tok := SessionToken(r)
		if tok == "" || data.PrincipalFrom(r.Context()) == nil {
			refuse(w, http.StatusUnauthorized, data.EUNAUTHORIZED, "Sign in first.")
			return
		}
		if !ValidCSRF(r, tok) {
			refuse(w, http.StatusForbidden, data.EFORBIDDEN, "The form's CSRF token is missing or wrong; reload the page and try again.")
			return
		}
		fn(w, r)
	}
}

// unavailableRetryAfter is the Retry-After, in seconds, of a page answered 503, as the
// API's.
const unavailableRetryAfter = "2"

// fail shows an API failure on the error page.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	e, ok := err.(*apiError)
	if !ok {
		panic(err) // not an API answer: a bug, which observe turns into a masked 500
	}
	if e.Status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", unavailableRetryAfter)
	}
	h.render(w, r, e.Status, "error", &view{Title: errorTitle(e.Status), Err: e})
}

// errorTitle names a refusal by what it means to the reader, as the 404 page does.
func errorTitle(status int) string {
	switch status {
	case http.StatusNotFound:
		return "Not found"
	case http.StatusForbidden:
		return "Not allowed"
	case http.StatusUnauthorized:
		return "Signed out"
	case http.StatusServiceUnavailable:
		return "Unavailable for now"
	}
	return "Something went wrong"
}

type loginView struct {
	Email, Workspace, Next, CSRF string
}

func (h *Handler) loginPage(w http.ResponseWriter, r *http.Request) {
	v := loginView{Next: safeNext(r.URL.Query().Get("next")), CSRF: loginCSRF(w, r, h.secure)}
	h.render(w, r, http.StatusOK, "login", &view{Title: "Sign in", D: v, Narrow: true})
}

// loginBody is the body of POST /api/v1/auth/login; a workspace left blank is left out,
// which is the personal workspace (the API refuses an empty workspace_id).
func loginBody(email, password, workspaceID string) map[string]string {
	body := map[string]string{"email": email, "password": password}
	if workspaceID != "" {
		body["workspace_id"] = workspaceID
	}
	return body
}

// loginSubmit signs in through POST /api/v1/auth/login and keeps the login token in the
// session cookie.
func (h *Handler) loginSubmit(w http.ResponseWriter, r *http.Request) {
	v := loginView{Email: r.PostFormValue("email"), Workspace: strings.TrimSpace(r.PostFormValue("workspace_id")),
		Next: safeNext(r.PostFormValue("next"))}
	if !validLoginCSRF(r) {
		refuse(w, http.StatusForbidden, data.EFORBIDDEN, "The sign-in form's CSRF token is missing or wrong; reload the page and try again.")
		return
	}
	res, err := h.call(r, "POST", "/api/v1/auth/login", nil, loginBody(v.Email, r.PostFormValue("password"), v.Workspace))
	if err != nil {
		v.CSRF = loginCSRF(w, r, h.secure)
		h.render(w, r, err.(*apiError).Status, "login", &view{Title: "Sign in", D: v, Err: err.(*apiError), Narrow: true})
		return
	}
	tok, _ := res.Body["token"].(string)
	setSession(w, r, h.secure, tok)
	clearCookie(w, r, h.secure, loginCSRFCookie)
	next := v.Next
	if next == "" {
		next = "/"
	}
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// safeNext keeps a post-sign-in destination only when it is a path on this site, as a
// browser will read it: browsers drop tabs and newlines from a URL and read a backslash
// as a slash, so "/\t/evil.example" or "/\\evil.example" would reach another host as
// "//evil.example". Refused: anything not starting with one slash, any control or white
// space character, a backslash, and anything a URL parser reads with a scheme or a host.
func safeNext(s string) string {
	if !strings.HasPrefix(s, "/") || strings.HasPrefix(s, "//") {
		return ""
	}
	for _, r := range s {
		if r == '\\' || unicode.IsControl(r) || unicode.IsSpace(r) {
			return ""
		}
	}
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "" {
		return ""
	}
	return s
}

// logout revokes the session's login token and clears the cookie.
func (h *Handler) logout(w http.ResponseWriter, r *http.Request) {
	if _, err := h.call(r, "POST", "/api/v1/auth/logout", nil, nil); err != nil && err.(*apiError).Status != http.StatusUnauthorized {
		h.fail(w, r, err)
		return
	}
	clearCookie(w, r, h.secure, SessionCookie)
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}
