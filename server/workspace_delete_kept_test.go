package server_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/voiceapi/voiceapi/internal/llmtest"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/server"
)

// A workspace deleted while a request of one of its tokens is under way leaves nothing
// kept under the request's Idempotency-Key, whichever comes first:
//   - a create whose change committed before the delete, and whose answer the server keeps
//     after it (the hook runs the delete in between): the claim written with the change
//     goes with the workspace's tokens, and the keeping finds the workspace gone and keeps
//     nothing. Before, the claim stayed (the cascade took only conversations' answers)
//     and the answer was written again over it, for a day, under a token that was gone.
//   - a conversation's start, deleted during its opening's model call: the insert's
//     transaction, which keeps the start's answer, re-checks the token and finds it gone
//     (401), so neither the conversation nor its answer is written. It held before.
//
// Both engines (VOICEAPI_TEST_BACKEND=postgres).
func TestWorkspaceDeletedDuringARequestKeepsNothingOfIt(t *testing.T) {
	e := newConvEnv(t, nil)
	newWorkspace := func(t *testing.T) (ws, token string) {
		r := e.Do("POST", "/api/v1/workspaces", e.tok, map[string]any{"name": "Doomed"})
		testkit.Expect(t, r, 201)
		ws = r.Data()["id"].(string)
		return ws, e.TokenIn(e.Owner, ws)
	}
	deleteWorkspace := func(t *testing.T, ws string) {
		if err := e.Svc.Workspaces.DeleteWorkspace(ownerOf(e.Server), ws); err != nil {
			t.Error(err)
		}
	}
	kept := func(t *testing.T, token, key string) {
		t.Helper()
		r, err := e.Svc.Idempotency.IdempotentResponse(context.Background(), tokenIDOf(t, token), key)
		if err != nil {
			t.Fatal(err)
		}
		if r != nil {
			t.Errorf("after the workspace's delete, key %q keeps an answer: status %d, %d bytes; want nothing", key, r.Status, len(r.Body))
		}
	}

	t.Run("create", func(t *testing.T) {
		ws, token := newWorkspace(t)
		const key = "agent-1"
		var deleted atomic.Bool
		server.BeforeKeepingAnswer(t, func(r *http.Request) {
			if r.Header.Get("Idempotency-Key") == key && deleted.CompareAndSwap(false, true) {
				deleteWorkspace(t, ws)
			}
		})
		testkit.Expect(t, e.Do("POST", "/api/v1/agents", token, map[string]any{"name": "Bookings"}, "Idempotency-Key", key), 201)
		if !deleted.Load() {
			t.Fatal("the workspace was not deleted between the create's change and the keeping of its answer")
		}
		kept(t, token, key)
	})

	t.Run("conversation start", func(t *testing.T) {
		ws, token := newWorkspace(t)
		r := e.Do("POST", "/api/v1/agents", token, map[string]any{"name": "Greeter", "llm_config": e.llmConfig(nil),
			"prompt_config": map[string]any{"first_speaker": "ai", "welcome_message_type": "dynamic"}})
		testkit.Expect(t, r, 201)
		agent := r.Data()["id"].(string)
		var deleted atomic.Bool
		e.stand.Respond(func(llmtest.Request) llmtest.Reply {
			if deleted.CompareAndSwap(false, true) {
				deleteWorkspace(t, ws) // during the opening's model call
			}
			return llmtest.Text("Hello, how can I help?")
		})
		const key = "start-1"
		start := e.Do("POST", "/api/v1/agents/"+agent+"/conversations", token, map[string]any{"version": "draft"}, "Idempotency-Key", key)
		testkit.Expect(t, start, 401)
		if !deleted.Load() {
			t.Fatal("the opening asked no model: the workspace was not deleted during the start")
		}
		kept(t, token, key)
	})
}
