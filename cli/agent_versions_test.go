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

// TestAgentVersionsDeleteRefusesBadNumbers: `voiceapi agent versions delete` given a
// VERSION that is no version number in its one spelling (zero, negative, past int,
// another spelling of 1: "01", "+1", " 1") is refused before any request; one that is a
// number but names no version (4, the bound 1000 and past it, 1001) is the server's 404.
// Each is an error, and the agent's versions and ETag are as they were. The command had
// taken "01" and "+1" for version 1 and deleted it, where the API answers 404
// (docs/api.md: a number in a path has one spelling).
func TestAgentVersionsDeleteRefusesBadNumbers(t *testing.T) {
	s := newTestServer(t)
	r := s.Do("POST", "/api/v1/agents", s.Owner.Token, map[string]any{"name": "Kept"})
	testkit.Expect(t, r, 201)
	agent := r.Data()["id"].(string)
	for range 3 {
		testkit.Expect(t, s.Do("POST", "/api/v1/agents/"+agent+"/publish", s.Owner.Token, nil), 204)
	}
	state := func() string {
		a := s.Do("GET", "/api/v1/agents/"+agent, s.Owner.Token, nil)
		v := s.Do("GET", "/api/v1/agents/"+agent+"/versions", s.Owner.Token, nil)
		return a.Header.Get("ETag") + string(v.Body)
	}
	before := state()
	cases := []struct{ version, says string }{
		{"0", "version number"}, {"-1", "unknown shorthand flag"}, {"two", "version number"}, {"1.5", "version number"},
		{"99999999999999999999", "version number"}, {"01", "version number"}, {"+1", "version number"},
		{" 1", "version number"}, {"1e0", "version number"}, {"", "version number"},
		{"4", "not found"}, {"1000", "not found"}, {"1001", "not found"},
	}
	for _, c := range cases {
		out, err := s.voiceapi(t, "agent", "versions", "delete", agent, c.version)
		if err == nil || !strings.Contains(strings.ToLower(err.Error()), c.says) {
			t.Errorf("delete of version %q: %v %q, want an error saying %q", c.version, err, out, c.says)
		}
		if now := state(); now != before {
			t.Fatalf("delete of version %q changed the agent's versions", c.version)
		}
	}
}
