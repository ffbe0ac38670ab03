package server_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/voiceapi/voiceapi/cli"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/service"
)

// countingStore counts the transactions run for an authenticated caller (a principal in
// the context): what a handler and its service read or write, authentication aside.
type countingStore struct {
	cli.Backend
	acts atomic.Int64
}

func (s *countingStore) count(ctx context.Context) {
	if data.PrincipalFrom(ctx) != nil {
		s.acts.Add(1)
	}
}

func (s *countingStore) View(ctx context.Context, fn func(tx service.Tx) error) error {
	s.count(ctx)
	return s.Backend.View(ctx, fn)
}

func (s *countingStore) Update(ctx context.Context, fn func(tx service.Tx) error) error {
	s.count(ctx)
	return s.Backend.Update(ctx, fn)
}

// TestRefusedListReadsNothing: a list whose query holds an undeclared parameter is
// refused before storage reads its page (which would never be sent), on every list of
// the document; the 422 still names a malformed cursor beside it. The same list without
// the parameter reads, so the count sees the lists' reads.
func TestRefusedListReadsNothing(t *testing.T) {
	env := testkit.New(t, nil)
	store := &countingStore{Backend: env.Store}
	hs := httptest.NewServer(cli.NewServer(store, slog.New(slog.NewJSONHandler(io.Discard, nil))).Handler())
	t.Cleanup(hs.Close)
	s := &testkit.Server{Env: env, T: t, URL: hs.URL}
	owner := s.NewUser("owner@example.com", true)
	_, doc := openapiDocument(t)
	lists := 0
	for _, op := range documentedOps(t) {
		if op.method != http.MethodGet || !takesParameter(t, doc, op, "Cursor") {
			continue
		}
		lists++
		path := fill(op.path, owner.WorkspaceID)
		store.acts.Store(0)
		res := s.Do("GET", path+"?"+unknownParam+"=x&cursor=bm90LWEtY3Vyc29y", owner.Token, nil)
		expectFaults(t, res, op, unknownParam, "cursor")
		if n := store.acts.Load(); n != 0 {
			t.Errorf("GET %s?%s=x: %d transactions before the 422, want none", op.path, unknownParam, n)
		}
		store.acts.Store(0)
		s.Do("GET", path, owner.Token, nil)
		if store.acts.Load() == 0 {
			t.Errorf("GET %s: no transaction counted; the count misses this list's reads", op.path)
		}
	}
	if lists < 15 {
		t.Fatalf("only %d lists in the document", lists)
	}
}
