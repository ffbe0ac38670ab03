package server_test

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
	"time"

	"go.etcd.io/bbolt"
	"golang.org/x/crypto/bcrypt"

	"github.com/voiceapi/voiceapi/bolt"
	"github.com/voiceapi/voiceapi/cli"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/server"
)

// env is a real server on a real database in a temporary directory.
type env struct {
	t     testing.TB
	DB    *bolt.DB
	URL   string
	Owner *testUser // instance admin, owner of its personal workspace
	Logs  *syncBuffer
	Dir   string // the data directory
}

// testUser is an account with a token bound to its personal workspace.
type testUser struct {
	ID, Email, Password, Token, WorkspaceID string
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func newEnv(t testing.TB) *env { t.Helper(); return newEnvWith(t, nil) }

// newEnvWith is newEnv with the database options adjusted by tune (e.g. an injected
// clock; nil for none) and the server's configuration by configure (rate limits, clock).
func newEnvWith(t testing.TB, tune func(*bolt.Options), configure ...func(*server.Config)) *env {
	t.Helper()
	dir := t.TempDir()
	logs := &syncBuffer{}
	logger := slog.New(slog.NewJSONHandler(logs, nil))
	opts := bolt.Options{PasswordCost: bcrypt.MinCost, NoSync: true, Logger: logger, SecretKey: bytes.Repeat([]byte{7}, 32)}
	if tune != nil {
		tune(&opts)
	}
	db, err := bolt.Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(cli.NewServer(db, logger, configure...).Handler())
	t.Cleanup(func() {
		srv.Close()
		err := db.Bolt().View(func(tx *bbolt.Tx) error {
			for err := range tx.Check() {
				return err
			}
			return nil
		})
		if err != nil {
			t.Errorf("consistency check: %v", err)
		}
		db.Close()
	})
	e := &env{t: t, DB: db, URL: srv.URL, Logs: logs, Dir: dir}
	e.Owner = e.newUser("owner@example.com", true)
	return e
}

// newUser creates an account (and its personal workspace) with an API key.
func (e *env) newUser(email string, admin bool) *testUser {
	e.t.Helper()
	ctx := context.Background()
	u, err := cli.NewServices(e.DB).Users.CreateUser(ctx, data.UserCreate{Name: strings.Split(email, "@")[0], Email: email, Password: "password-" + email, IsAdmin: admin})
	if err != nil {
		e.t.Fatal(err)
	}
	_, token, err := cli.NewServices(e.DB).Auth.CreateAPIKeyFor(ctx, u.ID, u.PersonalWorkspaceID, data.APIKeyCreate{Name: "test"})
	if err != nil {
		e.t.Fatal(err)
	}
	return &testUser{ID: u.ID, Email: u.Email, Password: "password-" + email, Token: token, WorkspaceID: u.PersonalWorkspaceID}
}

// tokenIn returns a token for u bound to workspaceID (u must be a member there).
func (e *env) tokenIn(u *testUser, workspaceID string) string {
	e.t.Helper()
	_, token, err := cli.NewServices(e.DB).Auth.CreateAPIKeyFor(context.Background(), u.ID, workspaceID, data.APIKeyCreate{Name: "ws"})
	if err != nil {
		e.t.Fatal(err)
	}
	return token
}

// response is a finished HTTP exchange.
type response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into a generic map.
func (r *response) JSON() map[string]any {
	var m map[string]any
	json.Unmarshal(r.Body, &m)
	return m
}

// Data returns the "data" object of a single-record response.
func (r *response) Data() map[string]any {
	d, _ := r.JSON()["data"].(map[string]any)
	return d
}

// List returns the "data" array of a list response.
func (r *response) List() []any {
	l, _ := r.JSON()["data"].([]any)
	return l
}

// Meta returns the "meta" object of a list response.
func (r *response) Meta() map[string]any {
	m, _ := r.JSON()["meta"].(map[string]any)
	return m
}

// FieldErrors returns the "errors" object of a 422.
func (r *response) FieldErrors() map[string]any {
	m, _ := r.JSON()["errors"].(map[string]any)
	return m
}

// Code returns the error code of a failure.
func (r *response) Code() string {
	c, _ := r.JSON()["code"].(string)
	return c
}

// do sends a request: body is JSON-encoded unless it is a string or []byte (sent as is);
// headers come in name, value pairs.
func (e *env) do(method, path, token string, body any, headers ...string) *response {
	e.t.Helper()
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
			e.t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, e.URL+path, rd)
	if err != nil {
		e.t.Fatal(err)
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
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return &response{Status: resp.StatusCode, Header: resp.Header, Body: raw}
}

// expect fails the test unless r has the status (and, for failures, the §2 error shape).
func expect(t testing.TB, r *response, status int) {
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

// expectFields fails unless r is a 422 naming exactly the given dot paths.
func expectFields(t testing.TB, r *response, paths ...string) {
	t.Helper()
	expect(t, r, 422)
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

// waitFor polls cond until it holds or the time is up.
func waitFor(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", within, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// itemIDs returns the "id" of every item of a decoded list.
func itemIDs(list []any) []string {
	out := make([]string, len(list))
	for i, a := range list {
		out[i], _ = a.(map[string]any)["id"].(string)
	}
	return out
}

// pageIDs returns the ids of a list response's page.
func pageIDs(r *response) []string { return itemIDs(r.List()) }

// listIDs is pageIDs of a response that must be a 200.
func listIDs(t testing.TB, r *response) []string {
	t.Helper()
	expect(t, r, 200)
	return pageIDs(r)
}
