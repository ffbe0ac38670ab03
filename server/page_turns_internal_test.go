package server

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
)

// TestPageTurns: no more turns than the channel holds are out at once; a request whose
// context ends while it waits gets service_unavailable and takes no turn; a turn given
// back goes to a waiter.
func TestPageTurns(t *testing.T) {
	turns := make(pageTurns, 1)
	release, err := turns.take(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := turns.take(ctx); data.ErrorCode(err) != data.EUNAVAILABLE {
		t.Fatalf("waiting past the deadline: %v, want %s", err, data.EUNAVAILABLE)
	}
	got := make(chan func(), 1)
	go func() {
		r, err := turns.take(context.Background())
		if err != nil {
			t.Error(err)
		}
		got <- r
	}()
	select {
	case <-got:
		t.Fatal("a second turn was given while the first was out")
	case <-time.After(50 * time.Millisecond):
	}
	release()
	select {
	case r := <-got:
		r()
	case <-time.After(30 * time.Second):
		t.Fatal("the waiter never got the turn given back")
	}
	if len(turns) != 0 {
		t.Errorf("%d turns out after both were given back", len(turns))
	}
}

// ownerAuth lets every token in as the owner of ws_1.
type ownerAuth struct{ data.AuthService }

func (ownerAuth) Authenticate(ctx context.Context, token string) (*data.Principal, error) {
	return &data.Principal{UserID: "usr_1", WorkspaceID: "ws_1", CurrentWorkspaceID: "ws_1", Role: data.RoleOwner, Modules: data.Modules}, nil
}

// countedAgents serves an empty agents page and counts the pages asked for.
type countedAgents struct {
	data.AgentService
	pages atomic.Int32
}

func (a *countedAgents) AgentJSON(ctx context.Context, id string) ([]byte, error) {
	return nil, data.NotFound("Agent")
}

func (a *countedAgents) ListAgentsJSON(ctx context.Context, f data.AgentFilter) ([]json.RawMessage, data.Page, error) {
	a.pages.Add(1)
	return nil, data.Page{}, nil
}

// TestAgentPagesTakeTurns: a page of agents is assembled only with a turn, as a page of
// calls is; while every turn is out it waits, and it answers service_unavailable when
// its request ends first, without reading a record.
func TestAgentPagesTakeTurns(t *testing.T) {
	agents := &countedAgents{}
	s := New(Services{Auth: ownerAuth{}, Agents: agents}, Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	get := func(ctx context.Context) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("GET", "/api/v1/agents?per_page=100", nil).WithContext(ctx)
		req.Header.Set("Authorization", "Bearer 1|abc")
		s.Handler().ServeHTTP(rec, req)
		return rec
	}
	for range cap(s.pages) {
		s.pages <- struct{}{} // every turn out
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if rec := get(ctx); rec.Code != http.StatusServiceUnavailable || agents.pages.Load() != 0 {
		t.Fatalf("with every turn out: %d %s after %d pages read; want 503 and none read", rec.Code, rec.Body, agents.pages.Load())
	}
	for range cap(s.pages) {
		<-s.pages
	}
	if rec := get(context.Background()); rec.Code != http.StatusOK || agents.pages.Load() != 1 || len(s.pages) != 0 {
		t.Fatalf("with turns free: %d %s, %d pages read, %d turns still out", rec.Code, rec.Body, agents.pages.Load(), len(s.pages))
	}
}
