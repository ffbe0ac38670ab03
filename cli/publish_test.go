package cli_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/internal/testkit"
)

// TestPublishCommand: `voiceapi publish` is held by the agent's required tests, and the
// refusal says which command passes the gate; once `voiceapi test` passed on the draft it
// publishes and prints the live version, and publishes the same draft again without
// another run (a publish changes no tested field); --force publishes past the gate.
func TestPublishCommand(t *testing.T) {
	s := newTestServer(t)
	r := s.Do("POST", "/api/v1/agents", s.Owner.Token, map[string]any{"name": "Trattoria", "llm_config": json.RawMessage(s.llmConfig())})
	testkit.Expect(t, r, 201)
	agent := r.Data()["id"].(string)
	r = s.Do("POST", "/api/v1/agents/"+agent+"/tests", s.Owner.Token,
		`{"name":"greets","required_for_publish":true,"user":{"script":["hello"]},"criteria":[{"type":"says","pattern":"Welcome"}]}`)
	testkit.Expect(t, r, 201)

	_, err := s.voiceapi(t, "publish", "Trattoria")
	if err == nil || !strings.Contains(err.Error(), "tests_required") || !strings.Contains(err.Error(), `voiceapi test "Trattoria"`) {
		t.Fatalf("publish before the tests ran: %v", err)
	}
	if got := s.Do("GET", "/api/v1/agents/"+agent, s.Owner.Token, nil).Data()["published_version"]; got != nil {
		t.Fatalf("a refused publish published version %v", got)
	}
	if out, err := s.voiceapi(t, "test", "Trattoria", "--poll", "20ms"); err != nil {
		t.Fatalf("test: %v\n%s", err, out)
	}
	out, err := s.voiceapi(t, "publish", "Trattoria", "--description", "first")
	if err != nil || !strings.Contains(out, `Published "Trattoria": version 1 is live.`) {
		t.Fatalf("publish after a passing run: %v %q", err, out)
	}
	versions := s.Do("GET", "/api/v1/agents/"+agent+"/versions", s.Owner.Token, nil).List()
	if len(versions) != 1 || versions[0].(map[string]any)["description"] != "first" {
		t.Errorf("versions after the publish: %v", versions)
	}
	if out, err := s.voiceapi(t, "publish", "Trattoria"); err != nil || !strings.Contains(out, "version 2 is live") {
		t.Fatalf("the same draft published again: %v %q", err, out)
	}

	// A change: the gate holds again; --force passes it.
	testkit.Expect(t, s.Do("PUT", "/api/v1/agents/"+agent, s.Owner.Token, map[string]any{"prompt_config": map[string]any{"prompt": "Be brief."}}), 200)
	if _, err := s.voiceapi(t, "publish", agent); err == nil {
		t.Fatal("a changed draft whose tests have not run was published")
	}
	if out, err := s.voiceapi(t, "publish", agent, "--force"); err != nil || !strings.Contains(out, "version 3 is live") {
		t.Errorf("publish --force: %v %q", err, out)
	}
	if _, err := s.voiceapi(t, "publish", "Nobody"); err == nil || !strings.Contains(err.Error(), `no agent is named "Nobody"`) {
		t.Errorf("an unknown agent: %v", err)
	}
}
