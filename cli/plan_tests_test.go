package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/voiceapi/voiceapi/cli"
	"github.com/voiceapi/voiceapi/data"
)

// stateFile writes an agents-as-code file of one agent on the stand-in with tests.
func (s *testServer) stateFile(t *testing.T, dir, tests string) string {
	t.Helper()
	llm := strings.Replace(s.llmConfig(), `"knowledge_base_ids":[],`, "", 1) // files name knowledge bases
	doc := `{"agents":[{"name":"Trattoria","llm_config":` + llm + `,"tests":` + tests + `}]}`
	path := filepath.Join(dir, "voiceapi.json")
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestTestsAsCode: an agent's tests in the files are planned (+, ~ member by member, -),
// applied, pulled back, and `apply --publish` runs them on the new draft first: a
// required test failing publishes nothing (and says why), passing publishes.
func TestTestsAsCode(t *testing.T) {
	s := newTestServer(t)
	dir := t.TempDir()
	failing := `[{"name":"greets","user":{"script":["hello"]},"criteria":[{"type":"says","pattern":"Pizzeria"}],"required_for_publish":true},
		{"name":"books","user":{"script":["a table for two"]},"criteria":[{"type":"says","pattern":"booked"}],"repeat":2}]`
	file := s.stateFile(t, dir, failing)

	out, err := s.voiceapi(t, "plan", "-f", file)
	if cli.ExitCode(err) != 2 || !strings.Contains(out, `+ test "Trattoria / greets"`) || !strings.Contains(out, `+ required_for_publish: true`) ||
		!strings.Contains(out, `+ max_turns: 10`) || !strings.Contains(out, "Plan: 3 to create") {
		t.Fatalf("plan: %v\n%s", err, out)
	}
	out, err = s.voiceapi(t, "apply", "-f", file, "--publish", "--description", "first")
	if err == nil || !strings.Contains(err.Error(), `published nothing: the tests of "Trattoria"`) || !strings.Contains(out, `FAILED  greets [required]`) {
		t.Fatalf("apply --publish with a failing test: %v\n%s", err, out)
	}
	agents := s.Do("GET", "/api/v1/agents", s.Owner.Token, nil).List()
	agent := agents[0].(map[string]any)
	if len(agents) != 1 || agent["published_version"] != nil {
		t.Fatalf("a failing test let apply publish: %v", agent["published_version"])
	}
	if tests := s.Do("GET", "/api/v1/agents/"+agent["id"].(string)+"/tests", s.Owner.Token, nil).List(); len(tests) != 2 {
		t.Fatalf("tests after apply: %d", len(tests))
	}
	if out, err := s.voiceapi(t, "plan", "-f", file); err != nil || !strings.Contains(out, "No changes") {
		t.Fatalf("plan after apply: %v\n%s", err, out)
	}

	// Fix the test, drop the other: a change and a delete, then the publish goes through.
	file = s.stateFile(t, dir, `[{"name":"greets","user":{"script":["hello"]},"criteria":[{"type":"says","pattern":"Trattoria"}],"required_for_publish":true}]`)
	out, err = s.voiceapi(t, "plan", "-f", file)
	if cli.ExitCode(err) != 2 || !strings.Contains(out, `~ test "Trattoria / greets"`) || !strings.Contains(out, `~ criteria: [{"pattern":"Pizzeria","type":"says"}] → [{"pattern":"Trattoria","type":"says"}]`) ||
		!strings.Contains(out, `- test "Trattoria / books"`) {
		t.Fatalf("plan of a change: %v\n%s", err, out)
	}
	// Only tests changed: publish the agent it belongs to by changing it too.
	changed := strings.Replace(readFile(t, file), `"name":"Trattoria",`, `"name":"Trattoria","prompt_config":{"prompt":"You take bookings."},`, 1)
	os.WriteFile(file, []byte(changed), 0o644)
	out, err = s.voiceapi(t, "apply", "-f", file, "--publish", "--description", "tested")
	if err != nil || !strings.Contains(out, `PASSED  greets [required]`) || !strings.Contains(out, `published agent "Trattoria"`) {
		t.Fatalf("apply --publish with passing tests: %v\n%s", err, out)
	}
	a := s.Do("GET", "/api/v1/agents/"+agent["id"].(string), s.Owner.Token, nil).Data()
	if a["published_version"] != 1.0 || a["status"] != data.AgentStatusPublished {
		t.Errorf("after apply --publish: %v %v", a["status"], a["published_version"])
	}

	// pull writes the tests; plan against what pull wrote finds nothing to do.
	pulled := t.TempDir()
	if out, err := s.voiceapi(t, "pull", "-o", pulled); err != nil {
		t.Fatalf("pull: %v\n%s", err, out)
	}
	var doc struct {
		Agents []struct {
			Tests []map[string]any `yaml:"tests"`
		} `yaml:"agents"`
	}
	if err := yaml.Unmarshal([]byte(readFile(t, filepath.Join(pulled, cli.PullFile))), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Agents) != 1 || len(doc.Agents[0].Tests) != 1 || doc.Agents[0].Tests[0]["name"] != "greets" || doc.Agents[0].Tests[0]["id"] != nil {
		t.Fatalf("pulled tests: %+v", doc.Agents)
	}
	if out, err := s.voiceapi(t, "plan", "-f", pulled); err != nil || !strings.Contains(out, "No changes") {
		t.Errorf("plan of what pull wrote: %v\n%s", err, out)
	}
	// A misspelt member of a test is refused, naming it.
	file = s.stateFile(t, dir, `[{"name":"greets","user":{"script":["hello"]},"critera":[]}]`)
	if _, err := s.voiceapi(t, "plan", "-f", file); err == nil || !strings.Contains(err.Error(), `agents["Trattoria"].tests[0]: unknown field "critera"`) {
		t.Errorf("a misspelt member: %v", err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
