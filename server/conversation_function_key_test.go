package server_test

import (
	"regexp"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/voiceapi/voiceapi/internal/llmtest"
	"github.com/voiceapi/voiceapi/internal/testkit"
)

// functionKeyShape is the documented shape of the Idempotency-Key a custom function's
// request carries (docs/conversations.md, the tools table).
var functionKeyShape = regexp.MustCompile(`^voiceapi_fn_[0-9a-f]{32}$`)

// A message whose answer called a custom function and then failed (the model's second
// call 500: the client gets 502 and nothing is stored) is answered again when sent again,
// and its function is called again with the same Idempotency-Key, so a receiver that
// deduplicates on it books once; the next message's call has a key of its own. Through
// the API, on the engine VOICEAPI_TEST_BACKEND names.
func TestConversationFunctionKeyStableAcrossAReanswer(t *testing.T) {
	c := newOrderConv(t)
	var failed atomic.Bool
	c.stand.Respond(func(r llmtest.Request) llmtest.Reply {
		if len(r.ToolResults()) > 0 && failed.CompareAndSwap(false, true) {
			return llmtest.Fail(500, "The server had an error")
		}
		return orderModel(r)
	})
	testkit.Expect(t, c.Do("POST", c.path, c.tok, orderMessage, "Idempotency-Key", "m1"), 502)
	c.expectCounts(t, "after the failed answer", counts{model: 2, hits: 1, users: 0})
	testkit.Expect(t, c.Do("POST", c.path, c.tok, orderMessage, "Idempotency-Key", "m1"), 200)
	testkit.Expect(t, c.Do("POST", c.path, c.tok, `{"content":"and B-2?"}`), 200)
	c.expectCounts(t, "after the re-answer and the next message", counts{model: 6, hits: 3, users: 2})
	c.mu.Lock()
	keys := slices.Clone(c.keys)
	c.mu.Unlock()
	if len(keys) != 3 || !functionKeyShape.MatchString(keys[0]) || keys[1] != keys[0] || keys[2] == keys[0] || !functionKeyShape.MatchString(keys[2]) {
		t.Errorf("keys the function received = %q: want the failed answer's and the re-answer's the same (%s), the next message's another",
			keys, functionKeyShape)
	}
}
