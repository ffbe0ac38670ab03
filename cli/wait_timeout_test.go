package cli_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/internal/testkit"
)

// TestWaitTimeouts: a command's own limit on its wait is said in its words, naming the
// flag and what goes on, not as the read's "context deadline exceeded"; apply refuses a
// --test-timeout that is not positive before it changes anything.
func TestWaitTimeouts(t *testing.T) {
	s := newTestServer(t)
	r := s.Do("POST", "/api/v1/agents", s.Owner.Token, map[string]any{"name": "Bistro", "llm_config": json.RawMessage(s.llmConfig())})
	testkit.Expect(t, r, 201)
	agent := r.Data()["id"].(string)
	testkit.Expect(t, s.Do("POST", "/api/v1/agents/"+agent+"/tests", s.Owner.Token, `{"name":"greets","user":{"script":["hello"]},"criteria":[{"type":"says","pattern":"Welcome"}]}`), 201)

	_, err := s.voiceapi(t, "test", "Bistro", "--timeout", "1ns")
	if err == nil || !strings.Contains(err.Error(), "has not ended after --timeout 1ns; it goes on: read it with GET /api/v1/agents/"+agent+"/test-runs/trun_") {
		t.Errorf("test --timeout: %v", err)
	}

	file := s.stateFile(t, t.TempDir(), `[{"name":"greets","user":{"script":["hello"]},"criteria":[{"type":"says","pattern":"Trattoria"}]}]`)
	for _, timeout := range []string{"0s", "-1m"} {
		if _, err := s.voiceapi(t, "apply", "-f", file, "--publish", "--test-timeout", timeout); err == nil || err.Error() != "--test-timeout must be more than 0" {
			t.Errorf("apply --test-timeout %s: %v", timeout, err)
		}
	}
	if agents := s.Do("GET", "/api/v1/agents", s.Owner.Token, nil).List(); len(agents) != 1 {
		t.Fatalf("a refused apply made agents: %v", agents)
	}
	out, err := s.voiceapi(t, "apply", "-f", file, "--publish", "--test-timeout", "1ns")
	if err == nil || !strings.Contains(err.Error(), `published nothing: the tests of "Trattoria" (run trun_`) ||
		!strings.Contains(err.Error(), "did not end within --test-timeout 1ns; the changes above are applied as drafts") {
		t.Errorf("apply --test-timeout 1ns: %v\n%s", err, out)
	}
}
