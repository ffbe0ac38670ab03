// Package testenv starts a real voiceapi server (the API and the console on one listener)
// for the console's tests, on the engine the tests run on: bbolt in a temporary directory,
// or with VOICEAPI_TEST_BACKEND=postgres a fresh database of the package's throw-away
// PostgreSQL cluster (testkit.New); a package using it stops that cluster by running
// pgtest.Main or pgtest.Run from its TestMain.
package testenv

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/bolt"
	"github.com/voiceapi/voiceapi/cli"
	"github.com/voiceapi/voiceapi/console"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/server"
	"github.com/voiceapi/voiceapi/service"
	"github.com/voiceapi/voiceapi/webhook"
)

// Env is a running server and its database.
type Env struct {
	t testing.TB
	// DB is the engine the server runs on (bbolt, or PostgreSQL: testkit.OnPostgres).
	DB    cli.Backend
	URL   string
	Owner *User
}

// User is an account with an API token bound to its personal workspace.
type User struct {
	ID, Email, Password, Token, WorkspaceID string
}

// Start runs a server on a new database for the length of the test.
func Start(t testing.TB) *Env {
	t.Helper()
	return StartWith(t, nil)
}

// StartWith is Start with prepare run on the server's services before it serves (a test
// lowers a bound there, say); nil prepares nothing.
func StartWith(t testing.TB, prepare func(*service.Services)) *Env {
	t.Helper()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	// testkit closes the database when the test ends, after serve's cleanup has stopped
	// what uses it (cleanups run last first); on bbolt it checks the file's consistency.
	db := testkit.New(t, func(o *bolt.Options) { o.Logger = logger }).Store
	e := serve(t, db, logger, prepare)
	e.Owner = e.NewUser("owner@example.com", true)
	return e
}

// StartIn runs a server on an existing data directory (one the load harness seeded, say),
// with its own options and secret key; Owner is nil.
func StartIn(t testing.TB, dir string) *Env {
	t.Helper()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	db, err := bolt.Open(dir, bolt.Options{Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() }) // after serve's cleanup, which runs first
	return serve(t, db, logger, nil)
}

// serve runs the server on db until the test ends; the caller closes db.
func serve(t testing.TB, db cli.Backend, logger *slog.Logger, prepare func(*service.Services)) *Env {
	// As serve runs it: the job runner (url fetches) and the webhook dispatcher in the
	// background, both allowed to reach this machine (the tests' receivers are on
	// loopback), and so are conversations (a model stand-in on loopback, as
	// --allow-private-urls lets them).
	svc := cli.NewServices(db)
	svc.Conversations.Configure(cli.ConversationOptions(cli.LLMSettings{AllowPrivate: true}))
	if prepare != nil {
		prepare(svc)
	}
	api := cli.NewServerOn(db, svc, logger, func(c *server.Config) { c.AllowPrivateURLs = true })
	srv := httptest.NewServer(api.Handler())
	jobs := svc.Jobs.NewRunner(service.RunnerOptions{})
	jobs.Start(context.Background())
	dispatcher := webhook.NewDispatcher(cli.NewServices(db).Deliveries, webhook.Config{Workers: 2, AllowPrivate: true, Logger: logger,
		Schedule: []time.Duration{100 * time.Millisecond}})
	db.SetEventHook(dispatcher.Wake)
	dispatcher.Start(context.Background())
	t.Cleanup(func() {
		srv.Close()
		jobs.Stop(context.Background())
		db.SetEventHook(nil)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		dispatcher.Stop(ctx)
	})
	return &Env{t: t, DB: db, URL: srv.URL}
}

// NewUser creates an account, its personal workspace and an API token.
func (e *Env) NewUser(email string, admin bool) *User {
	e.t.Helper()
	a := testkit.NewAccount(e.t, cli.NewServices(e.DB), email, admin)
	return &User{ID: a.ID, Email: a.Email, Password: a.Password, Token: a.Token, WorkspaceID: a.WorkspaceID}
}

// Response is a finished exchange.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body.
func (r *Response) JSON() map[string]any {
	var m map[string]any
	json.Unmarshal(r.Body, &m)
	return m
}

// Data returns the record of a {"data": {...}} body.
func (r *Response) Data() map[string]any {
	d, _ := r.JSON()["data"].(map[string]any)
	return d
}

// Do sends a request with client (http.DefaultClient when nil); body is JSON unless it is
// url.Values (a form) or a string; headers come in name, value pairs.
func (e *Env) Do(client *http.Client, method, path, token string, body any, headers ...string) *Response {
	e.t.Helper()
	var rd io.Reader
	ctype := ""
	switch b := body.(type) {
	case nil:
	case url.Values:
		rd, ctype = strings.NewReader(b.Encode()), "application/x-www-form-urlencoded"
	case string:
		rd, ctype = strings.NewReader(b), "application/json"
	default:
		raw, _ := json.Marshal(b)
		rd, ctype = bytes.NewReader(raw), "application/json"
	}
	req, err := http.NewRequest(method, e.URL+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	if client == nil {
		client = http.DefaultClient
	}
	res, err := client.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	return &Response{Status: res.StatusCode, Header: res.Header, Body: raw}
}

var csrfInput = regexp.MustCompile(`name="csrf_token" value="([^"]+)"`)

// Session is a signed-in browser-like client: a cookie jar holding the session.
type Session struct {
	Client  *http.Client
	Cookies []*http.Cookie // as the server set them at sign-in
}

// CSRF returns the session's CSRF token, read from a page as a browser script would.
func (e *Env) CSRF(s *Session) string {
	e.t.Helper()
	body := string(e.Do(s.Client, "GET", "/api-keys", "", nil).Body)
	m := csrfInput.FindStringSubmatch(body)
	if m == nil {
		e.t.Fatalf("no CSRF token on /api-keys:\n%s", body)
	}
	return m[1]
}

// SignIn signs u in through the console's sign-in form, into workspaceID ("" for the
// personal one).
func (e *Env) SignIn(u *User, workspaceID string) *Session {
	e.t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	page := e.Do(c, "GET", "/login", "", nil)
	m := csrfInput.FindStringSubmatch(string(page.Body))
	if m == nil {
		e.t.Fatalf("no CSRF field on the sign-in page:\n%s", page.Body)
	}
	res := e.Do(c, "POST", "/login", "", url.Values{"csrf_token": {m[1]}, "email": {u.Email}, "password": {u.Password}, "workspace_id": {workspaceID}})
	if res.Status != http.StatusSeeOther {
		e.t.Fatalf("sign in: %d %s", res.Status, res.Body)
	}
	var set []*http.Cookie
	for _, ck := range (&http.Response{Header: res.Header}).Cookies() {
		if ck.Name == console.SessionCookie {
			set = append(set, ck)
		}
	}
	return &Session{Client: c, Cookies: set}
}
