package testkit

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/voiceapi/voiceapi/bolt"
	"github.com/voiceapi/voiceapi/cli"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/server"
	"github.com/voiceapi/voiceapi/service"
)

// Server is a real server over a real database in a temporary directory, reached through
// real HTTP, with an owner account that is an instance administrator.
type Server struct {
	*Env
	T     testing.TB
	URL   string
	Dir   string // the data directory
	Owner *Account
	Logs  *SyncBuffer // the server's JSON log lines
}

// Account is a user with an API key bound to its personal workspace.
type Account struct {
	ID, Email, Password, Token, WorkspaceID string
}

// SyncBuffer is a bytes.Buffer safe for concurrent writers (the server's logger).
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// NewServer starts a server; tune (may be nil) adjusts the database options (a clock,
// say) and each configure function the server's (rate limits, ...).
func NewServer(t testing.TB, tune func(*bolt.Options), configure ...func(*server.Config)) *Server {
	t.Helper()
	return newServer(t, tune, nil, configure...)
}

// NewServerWith is NewServer whose HTTP server runs on the test's own services (Env.Svc),
// which prepare adjusts first (a conversation's model, say).
func NewServerWith(t testing.TB, tune func(*bolt.Options), prepare func(*service.Services), configure ...func(*server.Config)) *Server {
	t.Helper()
	return newServer(t, tune, prepare, configure...)
}

func newServer(t testing.TB, tune func(*bolt.Options), prepare func(*service.Services), configure ...func(*server.Config)) *Server {
	t.Helper()
	logs := &SyncBuffer{}
	logger := slog.New(slog.NewJSONHandler(logs, nil))
	env := New(t, func(o *bolt.Options) {
		o.Logger = logger
		if tune != nil {
			tune(o)
		}
	})
	var api *server.Server
	if prepare != nil {
		prepare(env.Svc)
		api = cli.NewServerOn(env.Store, env.Svc, logger, configure...)
	} else {
		api = cli.NewServer(env.Store, logger, configure...)
	}
	hs := httptest.NewServer(api.Handler())
	t.Cleanup(hs.Close) // runs before OpenDB's check and close: cleanups run last first
	dir := t.TempDir()
	if env.DB != nil {
		dir = env.DB.Dir()
	}
	s := &Server{Env: env, T: t, URL: hs.URL, Dir: dir, Logs: logs}
	s.Owner = s.NewUser("owner@example.com", true)
	return s
}

// NewUser creates an account (with its personal workspace) and an API key for it; its
// password is "password-" + email.
func (s *Server) NewUser(email string, admin bool) *Account {
	s.T.Helper()
	return NewAccount(s.T, s.Svc, email, admin)
}

// TokenIn returns a new API key of a bound to workspaceID (a must be a member there).
func (s *Server) TokenIn(a *Account, workspaceID string) string {
	s.T.Helper()
	return APIKey(s.T, s.Svc, a.ID, workspaceID)
}

// NewAccount creates an account through svc (see Server.NewUser).
func NewAccount(t testing.TB, svc *service.Services, email string, admin bool) *Account {
	t.Helper()
	in := data.UserCreate{Name: strings.Split(email, "@")[0], Email: email, Password: "password-" + email, IsAdmin: admin}
	u, err := svc.Users.CreateUser(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	return &Account{ID: u.ID, Email: u.Email, Password: in.Password, Token: APIKey(t, svc, u.ID, u.PersonalWorkspaceID), WorkspaceID: u.PersonalWorkspaceID}
}

// APIKey makes an API key for userID bound to workspaceID and returns its token.
func APIKey(t testing.TB, svc *service.Services, userID, workspaceID string) string {
	t.Helper()
	_, token, err := svc.Auth.CreateAPIKeyFor(context.Background(), userID, workspaceID, data.APIKeyCreate{Name: "test"})
	if err != nil {
		t.Fatal(err)
	}
	return token
}

// Member adds a new user to workspaceID with role, modules and agentIDs (nil: the
// defaults) and returns the user with a token bound to that workspace.
func (s *Server) Member(email, workspaceID, role string, modules, agentIDs []string) *Account {
	s.T.Helper()
	a := s.NewUser(email, false)
	owner := data.WithPrincipal(context.Background(), &data.Principal{UserID: s.Owner.ID, WorkspaceID: workspaceID, CurrentWorkspaceID: workspaceID, Role: data.RoleOwner, Modules: data.Modules})
	in := data.WorkspaceUserAdd{ID: a.ID, Role: role}
	if modules != nil {
		in.Modules = data.Some(modules)
	}
	if agentIDs != nil {
		in.AgentIDs = data.Some(agentIDs)
	}
	if _, err := s.Svc.WorkspaceUsers.AddWorkspaceUser(owner, workspaceID, in); err != nil {
		s.T.Fatal(err)
	}
	a.Token, a.WorkspaceID = s.TokenIn(a, workspaceID), workspaceID
	return a
}

// Response is a finished HTTP exchange.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into a generic map.
func (r *Response) JSON() map[string]any {
	var m map[string]any
	json.Unmarshal(r.Body, &m)
	return m
}

// Data returns the "data" object of a single-record response.
func (r *Response) Data() map[string]any {
	d, _ := r.JSON()["data"].(map[string]any)
	return d
}

// List returns the "data" array of a list response.
func (r *Response) List() []any {
	l, _ := r.JSON()["data"].([]any)
	return l
}

// Meta returns the "meta" object of a list response.
func (r *Response) Meta() map[string]any {
	m, _ := r.JSON()["meta"].(map[string]any)
	return m
}

// FieldErrors returns the "errors" object of a 422.
func (r *Response) FieldErrors() map[string]any {
	m, _ := r.JSON()["errors"].(map[string]any)
	return m
}

// Code returns the error code of a failure.
func (r *Response) Code() string {
	c, _ := r.JSON()["code"].(string)
	return c
}

// Do sends a request to s: see Request.
func (s *Server) Do(method, path, token string, body any, headers ...string) *Response {
	s.T.Helper()
	return Request(s.T, s.URL, method, path, token, body, headers...)
}

// Request sends a request to the server at baseURL: body is JSON-encoded unless it is a
// string or []byte (sent as is); headers come in name, value pairs.
func Request(t testing.TB, baseURL, method, path, token string, body any, headers ...string) *Response {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, baseURL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return &Response{Status: resp.StatusCode, Header: resp.Header, Body: raw}
}

// Expect fails the test unless r has the status and, for failures, the conventions'
// error shape (message and code; errors exactly on a 422).
func Expect(t testing.TB, r *Response, status int) {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d; body: %s", r.Status, status, r.Body)
	}
	if status >= 400 {
		m := r.JSON()
		if _, ok := m["message"].(string); !ok || m["code"] == nil {
			t.Fatalf("error body lacks message/code: %s", r.Body)
		}
		if _, has := m["errors"]; has != (status == 422) {
			t.Fatalf("errors member present=%v on %d: %s", has, status, r.Body)
		}
	}
}

// ExpectFields fails unless r is a 422 naming exactly the given dot paths.
func ExpectFields(t testing.TB, r *Response, paths ...string) {
	t.Helper()
	Expect(t, r, 422)
	got := r.FieldErrors()
	for _, p := range paths {
		if _, ok := got[p]; !ok {
			t.Errorf("422 does not name %q; errors: %v", p, got)
		}
	}
	if len(got) != len(paths) {
		t.Errorf("422 names %d fields, want %d (%v); errors: %v", len(got), len(paths), paths, got)
	}
}
