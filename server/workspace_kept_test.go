package server_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/server"
)

// A member's token bound to their own workspace acts in another through a path's
// {workspace_id} (here adding a member): its answer is kept under that token, and
// records the workspace it was made in. That workspace's delete, and the member's
// removal from it, take it, under the token that lives on; what the token kept of its
// own workspace stays. Before, the answer stayed until it expired (its retry a 404).
// Both engines.
func TestAnswersKeptInAnotherWorkspaceGoWithIt(t *testing.T) {
	for _, c := range []struct {
		name string
		gone func(t *testing.T, s *testkit.Server, ws string, m *testkit.Account)
	}{
		{"the workspace deleted", func(t *testing.T, s *testkit.Server, ws string, _ *testkit.Account) {
			testkit.Expect(t, s.Do("DELETE", "/api/v1/workspaces/"+ws, s.Owner.Token, nil), 204)
		}},
		{"the member removed", func(t *testing.T, s *testkit.Server, ws string, m *testkit.Account) {
			testkit.Expect(t, s.Do("DELETE", "/api/v1/workspaces/"+ws+"/users/"+m.ID, s.Owner.Token, nil), 204)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, ws, m, add := memberOfAnother(t)
			testkit.Expect(t, s.Do("POST", "/api/v1/workspaces/"+ws+"/users", m.Token, add, "Idempotency-Key", "add"), 201)
			testkit.Expect(t, s.Do("POST", "/api/v1/workspaces", m.Token, map[string]any{"name": "Mine"}, "Idempotency-Key", "own"), 201)
			keptUnder(t, s, m.Token, "add", true)
			c.gone(t, s, ws, m)
			keptUnder(t, s, m.Token, "add", false)
			keptUnder(t, s, m.Token, "own", true)
			testkit.Expect(t, s.Do("GET", "/api/v1/user", m.Token, nil), 200) // the token lives on
		})
	}
}

// The same, when the workspace's delete or the member's removal commits between the
// request's change and the keeping of its answer: nothing is kept after it (the keeping
// reads the membership, as it reads the token). Both engines.
func TestAnswerInAnotherWorkspaceNotKeptAfterItGoes(t *testing.T) {
	for _, c := range []struct {
		name string
		gone func(t *testing.T, s *testkit.Server, ws string, m *testkit.Account)
	}{
		{"the workspace deleted", func(t *testing.T, s *testkit.Server, ws string, _ *testkit.Account) {
			testkit.Expect(t, s.Do("DELETE", "/api/v1/workspaces/"+ws, s.Owner.Token, nil), 204)
		}},
		{"the member removed", func(t *testing.T, s *testkit.Server, ws string, m *testkit.Account) {
			testkit.Expect(t, s.Do("DELETE", "/api/v1/workspaces/"+ws+"/users/"+m.ID, s.Owner.Token, nil), 204)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, ws, m, add := memberOfAnother(t)
			var done atomic.Bool
			server.BeforeKeepingAnswer(t, func(r *http.Request) {
				if r.Header.Get("Idempotency-Key") == "add" && done.CompareAndSwap(false, true) {
					c.gone(t, s, ws, m)
				}
			})
			testkit.Expect(t, s.Do("POST", "/api/v1/workspaces/"+ws+"/users", m.Token, add, "Idempotency-Key", "add"), 201)
			if !done.Load() {
				t.Fatal("nothing happened between the change and the keeping of its answer")
			}
			keptUnder(t, s, m.Token, "add", false)
		})
	}
}

// memberOfAnother makes a server whose owner has a second workspace ws, of which m (its
// token bound to m's personal workspace) is an admin, and the body adding a third user.
func memberOfAnother(t *testing.T) (*testkit.Server, string, *testkit.Account, map[string]any) {
	s := testkit.NewServer(t, nil)
	r := s.Do("POST", "/api/v1/workspaces", s.Owner.Token, map[string]any{"name": "Elsewhere"})
	testkit.Expect(t, r, 201)
	ws := r.Data()["id"].(string)
	m := s.NewUser("admin@example.com", false)
	other := s.NewUser("other@example.com", false)
	testkit.Expect(t, s.Do("POST", "/api/v1/workspaces/"+ws+"/users", s.Owner.Token, map[string]any{"id": m.ID, "role": "admin"}), 201)
	return s, ws, m, map[string]any{"id": other.ID, "role": "member"}
}

// keptUnder checks whether token keeps an answer under key.
func keptUnder(t *testing.T, s *testkit.Server, token, key string, want bool) {
	t.Helper()
	r, err := s.Svc.Idempotency.IdempotentResponse(context.Background(), tokenIDOf(t, token), key)
	if err != nil {
		t.Fatal(err)
	}
	if (r != nil) != want {
		t.Errorf("key %q keeps an answer: %v; want %v", key, r != nil, want)
	}
}
