package server_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/bolt"
	"github.com/voiceapi/voiceapi/cli"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/server"
)

// env is a real server on a real database in a temporary directory (internal/testkit),
// seen through the short names these tests use; a server in another process has only t
// and URL.
type env struct {
	t     testing.TB
	DB    cli.Backend
	Bolt  *bolt.DB // nil when the tests run on PostgreSQL
	URL   string
	Owner *testUser // instance admin, owner of its personal workspace
	Logs  *testkit.SyncBuffer
	Dir   string // the data directory
}

// testUser is an account with a token bound to its personal workspace.
type testUser = testkit.Account

// response is a finished HTTP exchange.
type response = testkit.Response

func newEnv(t testing.TB) *env { t.Helper(); return newEnvWith(t, nil) }

// newEnvWith is newEnv with the database options adjusted by tune (e.g. an injected
// clock; nil for none) and the server's configuration by configure (rate limits, clock).
func newEnvWith(t testing.TB, tune func(*bolt.Options), configure ...func(*server.Config)) *env {
	t.Helper()
	s := testkit.NewServer(t, tune, configure...)
	return &env{t: t, DB: s.Store, Bolt: s.DB, URL: s.URL, Owner: s.Owner, Logs: s.Logs, Dir: s.Dir}
}

// bolt returns the bbolt database for a test that inspects the file itself, skipping the
// test when the suite runs on PostgreSQL.
func (e *env) bolt() *bolt.DB {
	e.t.Helper()
	testkit.NeedBolt(e.t)
	return e.Bolt
}

// newUser creates an account (and its personal workspace) with an API key.
func (e *env) newUser(email string, admin bool) *testUser {
	e.t.Helper()
	return testkit.NewAccount(e.t, cli.NewServices(e.DB), email, admin)
}

// tokenIn returns a token for u bound to workspaceID (u must be a member there).
func (e *env) tokenIn(u *testUser, workspaceID string) string {
	e.t.Helper()
	return testkit.APIKey(e.t, cli.NewServices(e.DB), u.ID, workspaceID)
}

// do sends a request (see testkit.Request).
func (e *env) do(method, path, token string, body any, headers ...string) *response {
	e.t.Helper()
	return testkit.Request(e.t, e.URL, method, path, token, body, headers...)
}

// expect fails the test unless r has the status (and, for failures, the §2 error shape).
func expect(t testing.TB, r *response, status int) { t.Helper(); testkit.Expect(t, r, status) }

// expectFields fails unless r is a 422 naming exactly the given dot paths.
func expectFields(t testing.TB, r *response, paths ...string) {
	t.Helper()
	testkit.ExpectFields(t, r, paths...)
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

// tokenIDOf is the id of the stored token an API token names (the part before "|"), the
// key the store keeps a token's Idempotency-Key answers under.
func tokenIDOf(t testing.TB, token string) int64 {
	t.Helper()
	id, err := strconv.ParseInt(strings.Split(token, "|")[0], 10, 64)
	if err != nil {
		t.Fatalf("token id of %q: %v", token, err)
	}
	return id
}
