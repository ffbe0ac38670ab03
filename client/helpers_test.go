package client_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sort"
	"sync"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/voiceapi/voiceapi/bolt"
	"github.com/voiceapi/voiceapi/cli"
	"github.com/voiceapi/voiceapi/client"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/llmtest"
	"github.com/voiceapi/voiceapi/server"
	"github.com/voiceapi/voiceapi/service"
)

// testServer is a real server over a real bbolt database in a temporary directory, with
// an instance admin who owns their personal workspace.
type testServer struct {
	URL         string
	DB          *bolt.DB
	Token       string
	UserID      string
	WorkspaceID string
	Email       string
	Password    string
	// calls records "METHOD path" of every request the server received.
	calls *recorder
	// model is the language model stand-in the server's conversations reach.
	model *llmtest.Server
	// svc are the server's services (a test starts a job runner on them).
	svc *service.Services
}

type recorder struct {
	mu    sync.Mutex
	lines []string
}

func (r *recorder) add(s string) { r.mu.Lock(); r.lines = append(r.lines, s); r.mu.Unlock() }

func (r *recorder) all() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.lines...)
}

// newServer starts the server; wrap, when given, wraps its handler (fault injection) and
// configure adjusts its configuration (rate limits, clock).
func newServer(t *testing.T, wrap func(http.Handler) http.Handler, configure ...func(*server.Config)) *testServer {
	t.Helper()
	dir := t.TempDir()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	db, err := bolt.Open(dir, bolt.Options{PasswordCost: bcrypt.MinCost, NoSync: true, Logger: logger, SecretKey: bytes.Repeat([]byte{7}, 32)})
	if err != nil {
		t.Fatal(err)
	}
	configure = append(configure, func(c *server.Config) { c.AllowPrivateURLs = true })
	model := llmtest.New(t, data.LLMInternal)
	services := cli.NewServices(db)
	services.Conversations.Configure(cli.ConversationOptions(cli.LLMSettings{AllowPrivate: true}))
	h := cli.NewServerOn(db, services, logger, configure...).Handler()
	rec := &recorder{}
	inner := h
	h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.add(r.Method + " " + r.URL.Path)
		inner.ServeHTTP(w, r)
	})
	if wrap != nil {
		h = wrap(h)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(func() { srv.Close(); db.Close() })
	ctx := context.Background()
	const email, password = "owner@example.com", "owner-password"
	svc := cli.NewServices(db)
	u, err := svc.Users.CreateUser(ctx, data.UserCreate{Name: "Owner", Email: email, Password: password, IsAdmin: true})
	if err != nil {
		t.Fatal(err)
	}
	_, token, err := svc.Auth.CreateAPIKeyFor(ctx, u.ID, u.PersonalWorkspaceID, data.APIKeyCreate{Name: "test"})
	if err != nil {
		t.Fatal(err)
	}
	return &testServer{URL: srv.URL, DB: db, Token: token, UserID: u.ID, WorkspaceID: u.PersonalWorkspaceID, Email: email, Password: password, calls: rec, model: model, svc: services}
}

// client returns a client of s with the owner's token.
func (s *testServer) client(t *testing.T, opts ...client.Option) *client.Client {
	t.Helper()
	c, err := client.New(s.URL, append([]client.Option{client.WithToken(s.Token)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// covered returns the operation ids whose route template some recorded request matched.
func (s *testServer) covered() map[string]bool {
	out := map[string]bool{}
	for id, op := range client.Operations() {
		re := regexp.MustCompile("^" + op[0] + " " + regexp.MustCompile(`\\\{[^}]+\\\}`).ReplaceAllString(regexp.QuoteMeta(op[1]), `[^/]+`) + "$")
		for _, line := range s.calls.all() {
			if re.MatchString(line) {
				out[id] = true
				break
			}
		}
	}
	return out
}

func sortedMissing(want map[string][3]string, got map[string]bool) []string {
	var out []string
	for id := range want {
		if !got[id] {
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out
}

// mustErr returns err as a *client.Error with the given status, or fails.
func mustErr(t *testing.T, err error, status int) *client.Error {
	t.Helper()
	var e *client.Error
	if err == nil {
		t.Fatalf("want a %d error, got none", status)
	}
	if !errorsAs(err, &e) || e.StatusCode != status {
		t.Fatalf("want a %d *client.Error, got %v", status, err)
	}
	return e
}

func ptr[T any](v T) *T { return &v }

func errorsAs(err error, target **client.Error) bool { return errors.As(err, target) }
