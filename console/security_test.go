package console_test

import (
	"crypto/tls"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/cli"
	"github.com/voiceapi/voiceapi/console"
	"github.com/voiceapi/voiceapi/console/internal/testenv"
)

func createAgent(t *testing.T, e *testenv.Env, token, name string) string {
	t.Helper()
	res := e.Do(nil, "POST", "/api/v1/agents", token, map[string]any{"name": name})
	if res.Status != http.StatusCreated {
		t.Fatalf("create agent: %d %s", res.Status, res.Body)
	}
	return res.Data()["id"].(string)
}

func TestSessionCookieFlags(t *testing.T) {
	e := testenv.Start(t)
	s := e.SignIn(e.Owner, "")
	if len(s.Cookies) != 1 {
		t.Fatalf("want one session cookie, got %v", s.Cookies)
	}
	c := s.Cookies[0]
	if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/" {
		t.Errorf("cookie flags: HttpOnly=%v SameSite=%v Path=%q", c.HttpOnly, c.SameSite, c.Path)
	}
	if c.Secure {
		t.Errorf("Secure over plain HTTP: the browser would never send it back")
	}

	// Over TLS the cookie is Secure.
	h := cli.NewServer(e.DB, slog.New(slog.NewTextHandler(io.Discard, nil))).Handler()
	get := httptest.NewRequest("GET", "/login", nil)
	get.TLS = &tls.ConnectionState{}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, get)
	var loginCSRF *http.Cookie
	for _, ck := range rec.Result().Cookies() {
		if !ck.Secure || !ck.HttpOnly {
			t.Errorf("cookie %s over TLS: Secure=%v HttpOnly=%v", ck.Name, ck.Secure, ck.HttpOnly)
		}
		loginCSRF = ck
	}
	form := url.Values{"csrf_token": {loginCSRF.Value}, "email": {e.Owner.Email}, "password": {e.Owner.Password}}
	post := httptest.NewRequest("POST", "/login", strings.NewReader(form.Encode()))
	post.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	post.AddCookie(loginCSRF)
	post.TLS = &tls.ConnectionState{}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, post)
	found := false
	for _, ck := range rec.Result().Cookies() {
		if ck.Name == console.SessionCookie && ck.Value != "" {
			found = true
			if !ck.Secure || !ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode {
				t.Errorf("session cookie over TLS: Secure=%v HttpOnly=%v SameSite=%v", ck.Secure, ck.HttpOnly, ck.SameSite)
			}
		}
	}
	if !found {
		t.Fatalf("no session cookie after a TLS sign-in: %d %s", rec.Code, rec.Body)
	}
}

func TestCSRFRefused(t *testing.T) {
	e := testenv.Start(t)
	id := createAgent(t, e, e.Owner.Token, "Before")
	s := e.SignIn(e.Owner, "")
	csrf := e.CSRF(s)

	// The REST API with the session cookie: no token, a wrong token, another session's.
	other := e.SignIn(e.Owner, "")
	wrong := "x" + csrf[1:]
	if csrf[0] == 'x' { // else the "wrong" token would be the right one, one time in 64
		wrong = "y" + csrf[1:]
	}
	for name, hdr := range map[string][]string{
		"none":          nil,
		"wrong":         {console.CSRFHeader, wrong},
		"other session": {console.CSRFHeader, e.CSRF(other)},
	} {
		res := e.Do(s.Client, "PUT", "/api/v1/agents/"+id, "", map[string]any{"name": "After"}, hdr...)
		if res.Status != http.StatusForbidden || res.JSON()["code"] != "forbidden" {
			t.Errorf("%s: PUT with the cookie = %d %s, want 403 forbidden", name, res.Status, res.Body)
		}
	}
	if got := e.Do(nil, "GET", "/api/v1/agents/"+id, e.Owner.Token, nil).Data()["name"]; got != "Before" {
		t.Fatalf("a refused request changed the agent: name %v", got)
	}
	// A safe method needs no token; the right token is accepted.
	if res := e.Do(s.Client, "GET", "/api/v1/agents/"+id, "", nil); res.Status != 200 {
		t.Errorf("GET with the cookie: %d", res.Status)
	}
	if res := e.Do(s.Client, "PUT", "/api/v1/agents/"+id, "", map[string]any{"name": "After"}, console.CSRFHeader, csrf); res.Status != 200 {
		t.Errorf("PUT with the cookie and its CSRF token: %d %s", res.Status, res.Body)
	}

	// The console's own forms.
	res := e.Do(s.Client, "POST", "/agents", "", url.Values{"name": {"Forged"}})
	if res.Status != http.StatusForbidden || !strings.Contains(string(res.Body), `"code":"forbidden"`) {
		t.Errorf("POST /agents without csrf_token: %d %s", res.Status, res.Body)
	}
	list := e.Do(nil, "GET", "/api/v1/agents", e.Owner.Token, nil)
	if strings.Contains(string(list.Body), "Forged") {
		t.Errorf("a refused form created an agent")
	}
	if res := e.Do(s.Client, "POST", "/logout", "", url.Values{}); res.Status != http.StatusForbidden {
		t.Errorf("POST /logout without csrf_token: %d", res.Status)
	}
	if res := e.Do(s.Client, "GET", "/api/v1/user", "", nil); res.Status != 200 {
		t.Errorf("a refused sign-out ended the session: %d", res.Status)
	}
	// The sign-in form: its field must match its double-submit cookie.
	if res := e.Do(nil, "POST", "/login", "", url.Values{"csrf_token": {strings.Repeat("a", 43)}, "email": {e.Owner.Email}, "password": {e.Owner.Password}}); res.Status != http.StatusForbidden {
		t.Errorf("POST /login without its cookie: %d", res.Status)
	}
}

func TestSignOutRevokesToken(t *testing.T) {
	e := testenv.Start(t)
	s := e.SignIn(e.Owner, "")
	csrf := e.CSRF(s)
	res := e.Do(s.Client, "POST", "/logout", "", url.Values{"csrf_token": {csrf}})
	if res.Status != http.StatusSeeOther {
		t.Fatalf("sign out: %d %s", res.Status, res.Body)
	}
	// The token itself is revoked, not only the cookie cleared: replaying it fails.
	tok := s.Cookies[0].Value
	if res := e.Do(nil, "GET", "/api/v1/user", tok, nil); res.Status != http.StatusUnauthorized {
		t.Errorf("the signed-out token as a bearer token: %d, want 401", res.Status)
	}
	replay := &http.Client{CheckRedirect: s.Client.CheckRedirect}
	req, _ := http.NewRequest("GET", e.URL+"/agents", nil)
	req.AddCookie(s.Cookies[0])
	r, err := replay.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != http.StatusSeeOther || !strings.HasPrefix(r.Header.Get("Location"), "/login") {
		t.Errorf("a page with the old cookie: %d %s, want a redirect to sign in", r.StatusCode, r.Header.Get("Location"))
	}
}

var inlineScript = regexp.MustCompile(`<script(?:\s[^>]*)?>`)

func TestContentSecurityPolicy(t *testing.T) {
	e := testenv.Start(t)
	id := createAgent(t, e, e.Owner.Token, "CSP")
	s := e.SignIn(e.Owner, "")
	for _, path := range []string{"/login", "/", "/agents", "/agents/" + id, "/agents/" + id + "/versions", "/agents/" + id + "/delete", "/api-keys",
		"/workspace", "/workspace/privacy", "/workspace/delete", "/account", "/users", "/agents/x/nope", "/no-such-page"} {
		client := s.Client
		if path == "/login" {
			client = nil
		}
		res := e.Do(client, "GET", path, "", nil)
		csp := res.Header.Get("Content-Security-Policy")
		script := ""
		for _, d := range strings.Split(csp, ";") {
			if f := strings.Fields(d); len(f) > 0 && f[0] == "script-src" {
				script = d
			}
		}
		if script == "" || strings.Contains(script, "unsafe-inline") || strings.Contains(script, "unsafe-eval") || !strings.Contains(csp, "frame-ancestors 'none'") {
			t.Errorf("%s: CSP %q", path, csp)
		}
		for _, tag := range inlineScript.FindAllString(string(res.Body), -1) {
			if !strings.Contains(tag, ` src="/static/`) {
				t.Errorf("%s: a script that is not a same-origin file: %s", path, tag)
			}
		}
		if strings.Contains(string(res.Body), " on") && regexp.MustCompile(`\son[a-z]+=`).Match(res.Body) {
			t.Errorf("%s: an inline event handler", path)
		}
	}
}

func TestOtherWorkspaceIsNotFound(t *testing.T) {
	e := testenv.Start(t)
	bob := e.NewUser("bob@example.com", false)
	theirs := createAgent(t, e, bob.Token, "Bob's")
	s := e.SignIn(e.Owner, "")
	if res := e.Do(nil, "GET", "/api/v1/agents/"+theirs, e.Owner.Token, nil); res.Status != http.StatusNotFound {
		t.Fatalf("API: %d", res.Status)
	}
	if res := e.Do(s.Client, "GET", "/api/v1/agents/"+theirs, "", nil); res.Status != http.StatusNotFound {
		t.Errorf("API with the session cookie: %d", res.Status)
	}
	for _, p := range []string{"/agents/" + theirs, "/agents/" + theirs + "/versions"} {
		res := e.Do(s.Client, "GET", p, "", nil)
		if res.Status != http.StatusNotFound || strings.Contains(string(res.Body), "Bob&#39;s") {
			t.Errorf("console %s: %d", p, res.Status)
		}
	}
	res := e.Do(s.Client, "GET", "/agents", "", nil)
	if strings.Contains(string(res.Body), theirs) {
		t.Errorf("the agent list shows another workspace's agent")
	}
	res = e.Do(s.Client, "POST", "/agents/"+theirs+"/publish", "", url.Values{"csrf_token": {e.CSRF(s)}})
	if res.Status != http.StatusNotFound {
		t.Errorf("publish another workspace's agent through the console: %d", res.Status)
	}
}

func TestBearerAPIUnchanged(t *testing.T) {
	e := testenv.Start(t)
	// No cookie: the API answers as before, with its 401 and WWW-Authenticate.
	res := e.Do(nil, "GET", "/api/v1/agents", "", nil)
	if res.Status != http.StatusUnauthorized || res.Header.Get("WWW-Authenticate") == "" {
		t.Errorf("no token: %d %v", res.Status, res.Header)
	}
	if res := e.Do(nil, "POST", "/api/v1/agents", e.Owner.Token, map[string]any{"name": "x"}); res.Status != http.StatusCreated {
		t.Errorf("bearer create without CSRF token: %d", res.Status)
	}
	// API paths keep their JSON 404 and 405.
	if res := e.Do(nil, "GET", "/api/v1/nope", e.Owner.Token, nil); res.Status != 404 || res.JSON()["code"] != "not_found" {
		t.Errorf("unknown API path: %d %s", res.Status, res.Body)
	}
	if res := e.Do(nil, "PATCH", "/api/v1/agents", e.Owner.Token, nil); res.Status != 405 {
		t.Errorf("wrong method on an API path: %d", res.Status)
	}
}

// A confirmation is a GET of the action's URL: it changes nothing, whatever it names.
func TestConfirmationPagesChangeNothing(t *testing.T) {
	e := testenv.Start(t)
	id := createAgent(t, e, e.Owner.Token, "Kept")
	wh := e.Do(nil, "POST", "/api/v1/webhooks", e.Owner.Token, map[string]any{"url": "https://hooks.example.com/x", "events": []string{"*"}})
	whID := wh.Data()["id"].(string)
	s := e.SignIn(e.Owner, "")
	for _, p := range []string{"/agents/" + id + "/delete", "/webhooks/" + whID + "/delete", "/webhooks/" + whID + "/rotate", "/workspace/delete"} {
		res := e.Do(s.Client, "GET", p, "", nil)
		if res.Status != http.StatusOK || !strings.Contains(string(res.Body), `<form method="post" action="`+p+`"`) {
			t.Errorf("GET %s: %d, want a confirmation posting to itself", p, res.Status)
		}
	}
	if res := e.Do(nil, "GET", "/api/v1/agents/"+id, e.Owner.Token, nil); res.Status != http.StatusOK {
		t.Errorf("the agent after its confirmation page: %d", res.Status)
	}
	if res := e.Do(nil, "GET", "/api/v1/webhooks/"+whID, e.Owner.Token, nil); res.Status != http.StatusOK {
		t.Errorf("the webhook after its confirmation pages: %d", res.Status)
	}
	if got := e.Do(nil, "GET", "/api/v1/audit-log?type=webhook.secret_rotated", e.Owner.Token, nil).JSON()["data"].([]any); len(got) != 0 {
		t.Errorf("a confirmation page rotated the secret")
	}
	// The workspace's deletion needs its name typed: a wrong one deletes nothing.
	res := e.Do(s.Client, "POST", "/workspace/delete", "", url.Values{"csrf_token": {e.CSRF(s)}, "confirm_name": {"not it"}, "password": {e.Owner.Password}})
	if res.Status != http.StatusUnprocessableEntity {
		t.Errorf("a deletion with the wrong name typed: %d", res.Status)
	}
	if res := e.Do(nil, "GET", "/api/v1/workspaces/"+e.Owner.WorkspaceID, e.Owner.Token, nil); res.Status != http.StatusOK {
		t.Errorf("the workspace after a refused deletion: %d", res.Status)
	}
}

// The import form is multipart, which ValidCSRF does not parse: its CSRF field is checked
// before the document is read, and without it nothing is imported.
func TestImportNeedsCSRF(t *testing.T) {
	e := testenv.Start(t)
	id := createAgent(t, e, e.Owner.Token, "Smuggled")
	doc := string(e.Do(nil, "GET", "/api/v1/workspaces/"+e.Owner.WorkspaceID+"/export", e.Owner.Token, nil).Body)
	if res := e.Do(nil, "DELETE", "/api/v1/agents/"+id, e.Owner.Token, nil); res.Status != http.StatusNoContent {
		t.Fatalf("delete: %d", res.Status)
	}
	s := e.SignIn(e.Owner, "")
	for _, c := range []struct {
		name, token string
		status      int
	}{{"no token", "", http.StatusForbidden}, {"a wrong token", strings.Repeat("x", 43), http.StatusForbidden}, {"the session's token", e.CSRF(s), http.StatusSeeOther}} {
		name, token := c.name, c.token
		var body strings.Builder
		w := multipart.NewWriter(&body)
		if token != "" {
			w.WriteField("csrf_token", token)
		}
		fw, _ := w.CreateFormFile("document", "doc.json")
		fw.Write([]byte(doc))
		w.Close()
		req, _ := http.NewRequest("POST", e.URL+"/workspace/import", strings.NewReader(body.String()))
		req.Header.Set("Content-Type", w.FormDataContentType())
		res, err := s.Client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != c.status {
			t.Errorf("%s: %d, want %d", name, res.StatusCode, c.status)
		}
		list := e.Do(nil, "GET", "/api/v1/agents", e.Owner.Token, nil)
		if imported := strings.Contains(string(list.Body), "Smuggled"); imported != (c.status == http.StatusSeeOther) {
			t.Errorf("%s: the document's agent imported: %v", name, imported)
		}
	}
}
