package server_test

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/server"
)

// Keeping an Idempotency-Key's answer is bookkeeping of a change already committed, not
// an act of the caller: access taken away between the change and the keeping of its
// answer still keeps the answer. A backfill's claim holds no answer (a bare claim), so
// were the keeping refused, a retry would meet the 409 that tells the request was
// carried out but never answered. Instead: a member whose role was lowered (still
// allowed the route) gets the first answer replayed. A revoked key is the exception:
// its revoke took what it kept, and nothing is kept for it after (no one holds it; its
// retry is 401, as any request of a revoked key).
func TestAnswerKeptWhenAccessChangesAfterTheWrite(t *testing.T) {
	for _, c := range []struct {
		name        string
		change      func(t *testing.T, s *testkit.Server, dev *testkit.Account)
		retryStatus int
		kept        bool
	}{
		{"role lowered", func(t *testing.T, s *testkit.Server, dev *testkit.Account) {
			in := data.WorkspaceUserUpdate{Role: data.Some(data.RoleDeveloper)}
			if _, err := s.Svc.WorkspaceUsers.UpdateWorkspaceUser(ownerOf(s), s.Owner.WorkspaceID, dev.ID, in); err != nil {
				t.Error(err)
			}
		}, 202, true},
		{"key revoked", func(t *testing.T, s *testkit.Server, dev *testkit.Account) {
			if err := s.Svc.Auth.RevokeWorkspaceAPIKey(ownerOf(s), s.Owner.WorkspaceID, keyID(t, dev.Token)); err != nil {
				t.Error(err)
			}
		}, 401, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := testkit.NewServer(t, nil)
			r := s.Do("POST", "/api/v1/agents", s.Owner.Token, map[string]any{"name": "Bookings", "analysis_config": analysisGroup()})
			testkit.Expect(t, r, 201)
			agent := r.Data()["id"].(string)
			dev := s.Member("dev@example.com", s.Owner.WorkspaceID, data.RoleAdmin, nil, nil)
			const key = "backfill-1"
			var changed atomic.Bool
			server.BeforeKeepingAnswer(t, func(r *http.Request) {
				if r.Header.Get("Idempotency-Key") == key && changed.CompareAndSwap(false, true) {
					c.change(t, s, dev)
				}
			})
			path, body := "/api/v1/agents/"+agent+"/analysis/backfill", map[string]any{"from": "2026-01-01T00:00:00Z", "to": "2026-01-02T00:00:00Z"}
			post := func() *testkit.Response { return s.Do("POST", path, dev.Token, body, "Idempotency-Key", key) }

			first := post()
			testkit.Expect(t, first, 202) // the change committed before the access changed
			if !changed.Load() {
				t.Fatal("the access did not change between the write and the keeping of its answer")
			}
			kept, err := s.Svc.Idempotency.IdempotentResponse(context.Background(), keyID(t, dev.Token), key)
			if !c.kept {
				if err != nil || kept != nil {
					t.Errorf("kept = %+v, %v; want nothing under the revoked key", kept, err)
				}
			} else if err != nil || kept == nil || kept.Status != 202 || string(kept.Body) != string(first.Body) {
				t.Errorf("kept = %+v, %v; want the first answer (202 %s)", kept, err, first.Body)
			}
			retry := post()
			if retry.Status != c.retryStatus {
				t.Errorf("retry = %d %s; want %d", retry.Status, retry.Body, c.retryStatus)
			} else if c.retryStatus == 202 && (retry.Header.Get("Idempotent-Replayed") != "true" || string(retry.Body) != string(first.Body)) {
				t.Errorf("retry = %v %s; want the first answer replayed", retry.Header, retry.Body)
			}
			if logs := s.Logs.String(); strings.Contains(logs, "saving idempotent response") {
				t.Errorf("keeping the answer failed: %s", logs)
			}
		})
	}
}
