package cli_test

import (
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/internal/testkit"
)

// TestAgentVersionsCommands: `voiceapi agent versions list` shows an agent's versions,
// newest first, the live one marked; `delete` deletes one nothing runs on and says so,
// and the server's refusal of the live one (409) reaches the command line as an error
// naming why; a version number that is not one is refused before any request.
func TestAgentVersionsCommands(t *testing.T) {
	s := newTestServer(t)
	r := s.Do("POST", "/api/v1/agents", s.Owner.Token, map[string]any{"name": "Pruned"})
	testkit.Expect(t, r, 201)
	agent := r.Data()["id"].(string)
	for _, d := range []string{"first", "second", "third"} {
		testkit.Expect(t, s.Do("POST", "/api/v1/agents/"+agent+"/publish", s.Owner.Token, map[string]any{"description": d}), 204)
	}

	out, err := s.voiceapi(t, "agent", "versions", "list", "Pruned")
	if err != nil {
		t.Fatalf("list: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[1], "3 ") || !strings.Contains(lines[1], "yes") || !strings.Contains(lines[3], "first") {
		t.Errorf("list:\n%s\nwant a header and versions 3 (live), 2, 1", out)
	}

	out, err = s.voiceapi(t, "agent", "versions", "delete", "Pruned", "1")
	if err != nil || !strings.Contains(out, `Deleted version 1 of "Pruned".`) {
		t.Fatalf("delete of version 1: %v %q", err, out)
	}
	testkit.Expect(t, s.Do("GET", "/api/v1/agents/"+agent+"/versions/1", s.Owner.Token, nil), 404)

	if _, err := s.voiceapi(t, "agent", "versions", "delete", agent, "3"); err == nil || !strings.Contains(err.Error(), "published version") {
		t.Errorf("delete of the live version: %v, want the server's conflict saying why", err)
	}
	testkit.Expect(t, s.Do("GET", "/api/v1/agents/"+agent+"/versions/3", s.Owner.Token, nil), 200)
	if _, err := s.voiceapi(t, "agent", "versions", "delete", agent, "two"); err == nil || !strings.Contains(err.Error(), "version number") {
		t.Errorf("delete of version \"two\": %v", err)
	}
}
