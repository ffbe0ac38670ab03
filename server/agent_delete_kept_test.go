package server_test

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/server"
)

// An agent's delete cuts to its claim every answer kept with it, not only its
// conversations': a call's start (the agent's configuration, its credential in clear),
// a call's registration, a test written for it. A retry is 404 "Agent not found.", never
// the kept answer nor a second record. Before, these were kept whole for the rest of
// the day, sealed, though no one could replay them. Both engines.
func TestDeletedAgentsOtherKeptAnswersCut(t *testing.T) {
	e := newStartEnv(t)
	owner := tokenIDOf(t, e.Owner.Token)
	runtime := tokenIDOf(t, e.runtime)
	type request struct {
		key, token, path string
		tokenID          int64
		body             map[string]any
	}
	requests := []request{
		{"start", e.runtime, "/api/v1/calls/start", runtime,
			map[string]any{"direction": "outbound", "to_number": "+15559990000", "agent_id": e.agent}},
		{"register", e.Owner.Token, "/api/v1/calls", owner, map[string]any{"agent_id": e.agent, "direction": "web"}},
		{"test", e.Owner.Token, "/api/v1/agents/" + e.agent + "/tests", owner,
			map[string]any{"name": "Greets", "user": map[string]any{"script": []string{"Hello"}},
				"criteria": []map[string]any{{"type": "says", "pattern": "Hello"}}}},
	}
	kept := func(r request) (status int, body string) {
		t.Helper()
		k, err := e.Svc.Idempotency.IdempotentResponse(context.Background(), r.tokenID, r.key)
		if err != nil || k == nil {
			t.Fatalf("%s: nothing kept (%v)", r.key, err)
		}
		if k.AgentID != e.agent {
			t.Errorf("%s: kept with agent %q; want %q", r.key, k.AgentID, e.agent)
		}
		return k.Status, string(k.Body)
	}
	for _, r := range requests {
		res := e.Do("POST", r.path, r.token, r.body, "Idempotency-Key", r.key)
		if res.Status != 201 {
			t.Fatalf("%s: %d %s", r.key, res.Status, res.Body)
		}
		if status, _ := kept(r); status != 201 {
			t.Fatalf("%s: kept with status %d before the delete; want the answer", r.key, status)
		}
	}
	if _, body := kept(requests[0]); !strings.Contains(body, startKey) {
		t.Fatal("the call start's kept answer holds no credential: nothing to cut")
	}
	calls := e.callCount()
	testkit.Expect(t, e.Do("DELETE", "/api/v1/agents/"+e.agent, e.Owner.Token, nil), 204)

	for _, r := range requests {
		if status, body := kept(r); status != 0 || body != "" {
			t.Errorf("%s after the agent's delete: kept with status %d and %d bytes; want its claim", r.key, status, len(body))
		}
		retry := e.Do("POST", r.path, r.token, r.body, "Idempotency-Key", r.key)
		testkit.Expect(t, retry, 404)
		if m, _ := retry.JSON()["message"].(string); m != "Agent not found." || strings.Contains(string(retry.Body), startKey) {
			t.Errorf("%s: a retry after the agent's delete: %s", r.key, retry.Body)
		}
	}
	if n := e.callCount(); n != calls {
		t.Errorf("%d calls after the retries; want %d", n, calls)
	}
}

// A call's registration that committed before its agent's delete, and whose answer the
// server keeps after it (the hook runs the delete in between), keeps only its claim:
// the delete cut the claim's answer, and the keeping finds the agent gone. Before, the
// answer was kept whole again after the delete, for the rest of the day. Both engines.
func TestAnswerNotKeptAfterItsAgentsDelete(t *testing.T) {
	e := newStartEnv(t)
	const key = "register"
	var deleted atomic.Bool
	server.BeforeKeepingAnswer(t, func(r *http.Request) {
		if r.Header.Get("Idempotency-Key") == key && deleted.CompareAndSwap(false, true) {
			if err := e.Svc.Agents.DeleteAgent(ownerOf(e.Server), e.agent); err != nil {
				t.Error(err)
			}
		}
	})
	body := map[string]any{"agent_id": e.agent, "direction": "web"}
	testkit.Expect(t, e.Do("POST", "/api/v1/calls", e.Owner.Token, body, "Idempotency-Key", key), 201)
	if !deleted.Load() {
		t.Fatal("the agent was not deleted between the registration and the keeping of its answer")
	}
	r, err := e.Svc.Idempotency.IdempotentResponse(context.Background(), tokenIDOf(t, e.Owner.Token), key)
	if err != nil || r == nil {
		t.Fatalf("nothing kept (%v); want the claim", err)
	}
	if r.Status != 0 || len(r.Body) != 0 {
		t.Errorf("kept after the agent's delete: status %d, %d bytes; want its claim", r.Status, len(r.Body))
	}
	testkit.Expect(t, e.Do("POST", "/api/v1/calls", e.Owner.Token, body, "Idempotency-Key", key), 404)
}
