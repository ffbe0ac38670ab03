package server_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/server"
	"github.com/voiceapi/voiceapi/service"
	"github.com/voiceapi/voiceapi/validate"
)

// loginIn logs a in, bound to workspace ws, and returns the token.
func loginIn(t *testing.T, s *testkit.Server, a *testkit.Account, ws string) string {
	t.Helper()
	r := s.Do("POST", "/api/v1/auth/login", "", map[string]any{"email": a.Email, "password": a.Password, "workspace_id": ws})
	testkit.Expect(t, r, 200)
	return r.JSON()["token"].(string)
}

// Every way a token goes takes what it kept under Idempotency-Keys, in the same
// transaction: no one holds the token, so no one could replay them, and an API key's
// create keeps the new key's token (shown once) for a day. Each case keeps a key's
// create under a member's token, then deletes that token by one path. Before, each
// answer stayed, sealed, until the hourly purge a day later. Both engines.
func TestDeletedTokensKeptAnswersGo(t *testing.T) {
	for _, c := range []struct {
		name string
		// token returns the token that keeps an answer; gone deletes it.
		token func(t *testing.T, s *testkit.Server, m *testkit.Account) string
		gone  func(t *testing.T, s *testkit.Server, m *testkit.Account, token string)
	}{
		{"an API key revoked by its user", memberKey, func(t *testing.T, s *testkit.Server, m *testkit.Account, token string) {
			testkit.Expect(t, s.Do("DELETE", "/api/v1/api-keys/"+strconv.FormatInt(tokenIDOf(t, token), 10), m.Token, nil), 204)
		}},
		{"an API key revoked in its workspace", memberKey, func(t *testing.T, s *testkit.Server, m *testkit.Account, token string) {
			path := "/api/v1/workspaces/" + s.Owner.WorkspaceID + "/api-keys/" + strconv.FormatInt(tokenIDOf(t, token), 10)
			testkit.Expect(t, s.Do("DELETE", path, s.Owner.Token, nil), 204)
		}},
		{"a logout", memberLogin, func(t *testing.T, s *testkit.Server, _ *testkit.Account, token string) {
			testkit.Expect(t, s.Do("POST", "/api/v1/auth/logout", token, nil), 204)
		}},
		{"a password change ending the other logins", memberLogin, func(t *testing.T, s *testkit.Server, m *testkit.Account, _ string) {
			other := loginIn(t, s, m, s.Owner.WorkspaceID)
			testkit.Expect(t, s.Do("PUT", "/api/v1/user", other, map[string]any{"password": "a-new-password-1", "current_password": m.Password}), 200)
		}},
		{"an expired login purged", memberLogin, func(t *testing.T, s *testkit.Server, _ *testkit.Account, token string) {
			expire(t, s, tokenIDOf(t, token))
			if _, err := s.Svc.Auth.PruneTokens(context.Background()); err != nil {
				t.Fatal(err)
			}
		}},
		{"an expired API key purged past its grace", memberKey, func(t *testing.T, s *testkit.Server, _ *testkit.Account, token string) {
			expireAt(t, s, tokenIDOf(t, token), time.Now().Add(-validate.ExpiredAPIKeyGrace-time.Hour))
			if _, err := s.Svc.Auth.PruneTokens(context.Background()); err != nil {
				t.Fatal(err)
			}
		}},
		{"a login past the bound trimming the oldest", memberLogin, func(t *testing.T, s *testkit.Server, m *testkit.Account, _ string) {
			if err := s.Store.Update(context.Background(), func(tx service.Tx) error {
				for range validate.MaxLoginTokens - 1 {
					k := &data.APIKeyRecord{APIKey: data.APIKey{Name: "login", CreatedAt: data.NewTime(time.Now())},
						UserID: m.ID, WorkspaceID: s.Owner.WorkspaceID, Kind: data.TokenLogin, SecretHash: []byte("h")}
					if err := tx.InsertAPIKey(k); err != nil {
						return err
					}
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			loginIn(t, s, m, s.Owner.WorkspaceID)
		}},
		{"a member removed", memberKey, func(t *testing.T, s *testkit.Server, m *testkit.Account, _ string) {
			testkit.Expect(t, s.Do("DELETE", "/api/v1/workspaces/"+s.Owner.WorkspaceID+"/users/"+m.ID, s.Owner.Token, nil), 204)
		}},
		{"a user deleted", memberLogin, func(t *testing.T, s *testkit.Server, m *testkit.Account, _ string) {
			testkit.Expect(t, s.Do("DELETE", "/api/v1/users/"+m.ID, s.Owner.Token, nil), 204)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := testkit.NewServer(t, nil)
			m := s.Member("member@example.com", s.Owner.WorkspaceID, data.RoleDeveloper, nil, nil)
			token := c.token(t, s, m)
			id := tokenIDOf(t, token)
			testkit.Expect(t, s.Do("POST", "/api/v1/api-keys", token, map[string]any{"name": "ci"}, "Idempotency-Key", "k"), 201)
			if r, err := s.Svc.Idempotency.IdempotentResponse(context.Background(), id, "k"); err != nil || r == nil {
				t.Fatalf("nothing kept before the token's delete (%v): nothing to take", err)
			}
			c.gone(t, s, m, token)
			if k := apiKeyRecord(t, s, id); k != nil {
				t.Fatalf("the token is still there: %+v", k)
			}
			if r, err := s.Svc.Idempotency.IdempotentResponse(context.Background(), id, "k"); err != nil || r != nil {
				t.Errorf("kept under the deleted token (%v): %v; want nothing", err, r != nil)
			}
		})
	}
}

// memberKey is an API key of m's, bound to the owner's workspace.
func memberKey(_ *testing.T, s *testkit.Server, m *testkit.Account) string {
	return s.TokenIn(m, s.Owner.WorkspaceID)
}

// memberLogin is a login token of m's, bound to the owner's workspace.
func memberLogin(t *testing.T, s *testkit.Server, m *testkit.Account) string {
	return loginIn(t, s, m, s.Owner.WorkspaceID)
}

// apiKeyRecord reads token id as stored, nil when it is gone.
func apiKeyRecord(t *testing.T, s *testkit.Server, id int64) *data.APIKeyRecord {
	t.Helper()
	var k *data.APIKeyRecord
	if err := s.Store.View(context.Background(), func(tx service.Tx) (err error) {
		k, err = tx.APIKey(id)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return k
}

// expire makes token id expired an hour ago, as the clock would.
func expire(t *testing.T, s *testkit.Server, id int64) {
	t.Helper()
	expireAt(t, s, id, time.Now().Add(-time.Hour))
}

// expireAt makes token id expire at when.
func expireAt(t *testing.T, s *testkit.Server, id int64, when time.Time) {
	t.Helper()
	if err := s.Store.Update(context.Background(), func(tx service.Tx) error {
		k, err := tx.APIKey(id)
		if err != nil || k == nil {
			return err
		}
		past := data.NewTime(when)
		k.ExpiresAt = &past
		return tx.PutAPIKey(k)
	}); err != nil {
		t.Fatal(err)
	}
}

// A request whose change committed before its token's delete, and whose answer the
// server keeps after it (the hook revokes the key in between), keeps nothing: the
// delete took the claim, and the keeping finds the token gone. Before, the answer (here
// a new key's token, shown once) was kept after the revoke for the rest of the day,
// under a token no one holds. Both engines.
func TestAnswerNotKeptAfterItsTokensDelete(t *testing.T) {
	s := testkit.NewServer(t, nil)
	m := s.Member("member@example.com", s.Owner.WorkspaceID, data.RoleDeveloper, nil, nil)
	token := memberKey(t, s, m)
	id := tokenIDOf(t, token)
	const key = "create"
	var revoked atomic.Bool
	server.BeforeKeepingAnswer(t, func(r *http.Request) {
		if r.Header.Get("Idempotency-Key") == key && revoked.CompareAndSwap(false, true) {
			path := "/api/v1/workspaces/" + s.Owner.WorkspaceID + "/api-keys/" + strconv.FormatInt(id, 10)
			if res := s.Do("DELETE", path, s.Owner.Token, nil); res.Status != 204 {
				t.Errorf("revoking the key: %d %s", res.Status, res.Body)
			}
		}
	})
	testkit.Expect(t, s.Do("POST", "/api/v1/api-keys", token, map[string]any{"name": "ci"}, "Idempotency-Key", key), 201)
	if !revoked.Load() {
		t.Fatal("the key was not revoked between its request's change and the keeping of its answer")
	}
	if r, err := s.Svc.Idempotency.IdempotentResponse(context.Background(), id, key); err != nil || r != nil {
		t.Errorf("kept under the revoked key (%v): %v; want nothing", err, r != nil)
	}
}

// A member removed from a workspace keeps their tokens bound to other workspaces, which
// may have acted in it (a route with {workspace_id}: adding a member, an import). The
// removal takes what they kept there (TestAnswersKeptInAnotherWorkspaceGoWithIt), and
// their retry is 404 as any request of a non-member there, never the kept answer. (A
// contract case: it held before, when such an answer stayed until it expired.)
func TestRemovedMembersOtherTokensReplayNothingOfTheWorkspace(t *testing.T) {
	s := testkit.NewServer(t, nil)
	m := s.NewUser("admin@example.com", false) // m.Token is bound to m's personal workspace
	other := s.NewUser("other@example.com", false)
	path := "/api/v1/workspaces/" + s.Owner.WorkspaceID + "/users"
	testkit.Expect(t, s.Do("POST", path, s.Owner.Token, map[string]any{"id": m.ID, "role": "admin"}), 201)
	body := map[string]any{"id": other.ID, "role": "member"}
	testkit.Expect(t, s.Do("POST", path, m.Token, body, "Idempotency-Key", "add"), 201)
	testkit.Expect(t, s.Do("DELETE", path+"/"+m.ID, s.Owner.Token, nil), 204)
	retry := s.Do("POST", path, m.Token, body, "Idempotency-Key", "add")
	testkit.Expect(t, retry, 404)
	if retry.Header.Get("Idempotent-Replayed") != "" || strings.Contains(string(retry.Body), other.ID) {
		t.Errorf("a removed member's retry replayed the kept answer: %s", retry.Body)
	}
}
