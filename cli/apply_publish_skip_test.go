package cli_test

import (
	"os"
	"strings"
	"testing"
)

// TestApplyPublishSkipsTestsOfATestedDraft: apply --publish runs no test when the
// agent's publish gate is already open on its draft's revision by passing runs (a change
// tests cannot observe, here a voice), says so, and publishes; a change tests observe
// (the prompt) runs them again. Runs are counted through the API.
func TestApplyPublishSkipsTestsOfATestedDraft(t *testing.T) {
	s := newTestServer(t)
	file := s.stateFile(t, t.TempDir(), `[{"name":"greets","user":{"script":["hello"]},"criteria":[{"type":"says","pattern":"Trattoria"}],"required_for_publish":true}]`)
	runs := func(agentID string) int {
		t.Helper()
		return len(s.Do("GET", "/api/v1/agents/"+agentID+"/test-runs", s.Owner.Token, nil).List())
	}
	edit := func(old, new string) {
		t.Helper()
		changed := strings.Replace(readFile(t, file), old, new, 1)
		if err := os.WriteFile(file, []byte(changed), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, err := s.voiceapi(t, "apply", "-f", file, "--publish")
	if err != nil || !strings.Contains(out, `PASSED  greets [required]`) || !strings.Contains(out, `published agent "Trattoria"`) {
		t.Fatalf("first apply --publish: %v\n%s", err, out)
	}
	agentID := s.Do("GET", "/api/v1/agents", s.Owner.Token, nil).List()[0].(map[string]any)["id"].(string)
	if n := runs(agentID); n != 1 {
		t.Fatalf("%d runs after the first apply", n)
	}

	edit(`"name":"Trattoria",`, `"name":"Trattoria","tts_config":{"voice_id":"another-voice"},`)
	out, err = s.voiceapi(t, "apply", "-f", file, "--publish")
	if err != nil || !strings.Contains(out, `agent "Trattoria": its required tests already passed on this draft`) ||
		strings.Contains(out, "PASSED") || !strings.Contains(out, `published agent "Trattoria"`) {
		t.Fatalf("apply --publish of a voice change: %v\n%s", err, out)
	}
	if n := runs(agentID); n != 1 {
		t.Errorf("%d runs: apply ran the tests of a draft they passed on", n)
	}
	if a := s.Do("GET", "/api/v1/agents/"+agentID, s.Owner.Token, nil).Data(); a["published_version"] != 2.0 {
		t.Errorf("published_version %v, want 2", a["published_version"])
	}

	edit(`"name":"Trattoria",`, `"name":"Trattoria","prompt_config":{"prompt":"You take bookings for Trattoria."},`)
	out, err = s.voiceapi(t, "apply", "-f", file, "--publish")
	if err != nil || !strings.Contains(out, `PASSED  greets [required]`) || !strings.Contains(out, `published agent "Trattoria"`) {
		t.Fatalf("apply --publish of a prompt change: %v\n%s", err, out)
	}
	if n := runs(agentID); n != 2 {
		t.Errorf("%d runs after a prompt change, want 2", n)
	}
}
