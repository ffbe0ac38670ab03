package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/cli"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/llmtest"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/llm"
	"github.com/voiceapi/voiceapi/service"
)

// testServer is a server on the engine the tests run on, its conversations and test runs
// on the fixture model of a stand-in, with a job runner as serve runs one.
type testServer struct {
	*testkit.Server
	stand *llmtest.Server
}

func newTestServer(t *testing.T) *testServer {
	t.Helper()
	stand := llmtest.New(t, data.LLMInternal)
	f := &llmtest.Fixture{
		Agent: []llmtest.Rule{
			{When: "table", Reply: llmtest.Calls(llm.ToolCall{Name: "book", Arguments: `{"people":2}`})},
			{When: "bye", Reply: llmtest.Reply{Text: "Goodbye!", ToolCalls: []llm.ToolCall{{Name: "hang_up", Arguments: "{}"}}}},
		},
		AgentDefault: llmtest.Text("Welcome to Trattoria!"),
		AfterTools:   llmtest.Text("You're booked."),
	}
	stand.Respond(f.Respond)
	s := testkit.NewServerWith(t, nil, func(svc *service.Services) {
		svc.Conversations.Configure(cli.ConversationOptions(cli.LLMSettings{AllowURLPrefixes: []string{stand.URL + "/"}}))
	})
	runner := s.Svc.Jobs.NewRunner(service.RunnerOptions{Poll: 20 * time.Millisecond})
	runner.Start(context.Background())
	t.Cleanup(func() { runner.Stop(context.Background()) })
	return &testServer{Server: s, stand: stand}
}

// voiceapi runs the command line against s and returns stdout and the error.
func (s *testServer) voiceapi(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	root := cli.NewRootCommand(&out, &errOut)
	root.SetArgs(append(args, "--server", s.URL, "--token", s.Owner.Token))
	err := root.ExecuteContext(context.Background())
	return out.String() + errOut.String(), err
}

// llmConfig is an llm_config pointed at the stand-in, as JSON.
func (s *testServer) llmConfig() string {
	b, _ := json.Marshal(s.stand.LLMConfig())
	return string(b)
}

// The JUnit XML a CI system reads (Jenkins' junit-10.xsd): every attribute a reader
// needs, decoded strictly enough to notice one missing.
type junitDoc struct {
	XMLName  xml.Name `xml:"testsuites"`
	Name     string   `xml:"name,attr"`
	Tests    *int     `xml:"tests,attr"`
	Failures *int     `xml:"failures,attr"`
	Errors   *int     `xml:"errors,attr"`
	Time     *float64 `xml:"time,attr"`
	Suites   []struct {
		Name       string   `xml:"name,attr"`
		Tests      *int     `xml:"tests,attr"`
		Failures   *int     `xml:"failures,attr"`
		Errors     *int     `xml:"errors,attr"`
		Skipped    *int     `xml:"skipped,attr"`
		Time       *float64 `xml:"time,attr"`
		Timestamp  string   `xml:"timestamp,attr"`
		Properties []struct {
			Name  string `xml:"name,attr"`
			Value string `xml:"value,attr"`
		} `xml:"properties>property"`
		Cases []struct {
			Name      string   `xml:"name,attr"`
			Classname string   `xml:"classname,attr"`
			Time      *float64 `xml:"time,attr"`
			Failure   *struct {
				Message string `xml:"message,attr"`
				Type    string `xml:"type,attr"`
				Text    string `xml:",chardata"`
			} `xml:"failure"`
			Error *struct {
				Message string `xml:"message,attr"`
				Type    string `xml:"type,attr"`
			} `xml:"error"`
			SystemOut string `xml:"system-out"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

// readJUnit decodes path and checks the structure every reader relies on: counts on both
// levels that agree with the testcases, a name, classname and time on each testcase,
// at most one of failure and error, each with its message and type.
func readJUnit(t *testing.T, path string) junitDoc {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(raw, []byte(xml.Header)) {
		t.Errorf("no XML declaration: %.60s", raw)
	}
	var doc junitDoc
	dec := xml.NewDecoder(bytes.NewReader(raw))
	dec.Strict = true
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("not XML: %v\n%s", err, raw)
	}
	if doc.Tests == nil || doc.Failures == nil || doc.Errors == nil || doc.Time == nil || len(doc.Suites) != 1 {
		t.Fatalf("testsuites lacks its counts or its suite: %s", raw)
	}
	s := doc.Suites[0]
	if s.Name == "" || s.Tests == nil || s.Failures == nil || s.Errors == nil || s.Skipped == nil || s.Time == nil ||
		!strings.Contains(s.Timestamp, "T") || strings.HasSuffix(s.Timestamp, "Z") {
		t.Fatalf("testsuite attributes: %s", raw)
	}
	failures, errors := 0, 0
	for _, c := range s.Cases {
		if c.Name == "" || c.Classname == "" || c.Time == nil {
			t.Errorf("testcase without name, classname or time: %+v", c)
		}
		if c.Failure != nil && c.Error != nil {
			t.Errorf("testcase %q both failed and errored", c.Name)
		}
		if c.Failure != nil {
			failures++
			if c.Failure.Message == "" || c.Failure.Type == "" {
				t.Errorf("failure of %q without message or type", c.Name)
			}
		}
		if c.Error != nil {
			errors++
			if c.Error.Message == "" || c.Error.Type == "" {
				t.Errorf("error of %q without message or type", c.Name)
			}
		}
	}
	if *s.Tests != len(s.Cases) || *s.Failures != failures || *s.Errors != errors || *doc.Tests != *s.Tests || *doc.Failures != failures || *doc.Errors != errors {
		t.Errorf("counts disagree with the testcases (tests %d/%d, failures %d/%d, errors %d/%d): %s",
			*s.Tests, len(s.Cases), *s.Failures, failures, *s.Errors, errors, raw)
	}
	return doc
}

// TestTestCommand runs `voiceapi test` as CI would: progress, each test's verdict with the
// criteria that failed, exit status 1 while a test fails (or cannot run) and 0 once every
// test passes, and JUnit XML a CI system reads.
func TestTestCommand(t *testing.T) {
	s := newTestServer(t)
	r := s.Do("POST", "/api/v1/agents", s.Owner.Token, map[string]any{"name": "Trattoria", "llm_config": json.RawMessage(s.llmConfig())})
	testkit.Expect(t, r, 201)
	agent := r.Data()["id"].(string)
	add := func(body string) string {
		r := s.Do("POST", "/api/v1/agents/"+agent+"/tests", s.Owner.Token, body)
		testkit.Expect(t, r, 201)
		return r.Data()["id"].(string)
	}
	add(`{"name":"greets","user":{"script":["hello"]},"repeat":2,"criteria":[{"type":"says","pattern":"Welcome"}]}`)
	failing := add(`{"name":"offers dessert","user":{"script":["hello"]},"criteria":[{"type":"says","pattern":"dessert"}]}`)
	junit := filepath.Join(t.TempDir(), "report.xml")

	out, err := s.voiceapi(t, "test", "Trattoria", "--junit", junit, "--poll", "20ms")
	if cli.ExitCode(err) != 1 || !strings.Contains(out, "FAILED  offers dessert") || !strings.Contains(out, "PASSED  greets") ||
		!strings.Contains(out, "criteria.0 says: No turn of the agent matches dessert") || !strings.Contains(out, "1 passed, 1 failed, 0 error of 2") {
		t.Fatalf("exit %d: %v\n%s", cli.ExitCode(err), err, out)
	}
	// The failed repeat's transcript follows its faults (what the agent said instead); a
	// passed repeat's does not.
	if !strings.Contains(out, "        repeat 1 transcript:\n          [0] Agent: Hello! How can I help you today?\n          [1] Caller: hello\n          [2] Agent: Welcome to Trattoria!\n") ||
		strings.Count(out, "transcript:") != 1 {
		t.Errorf("the failed repeat's transcript:\n%s", out)
	}
	doc := readJUnit(t, junit)
	suite := doc.Suites[0]
	if suite.Name != "Trattoria" || *suite.Tests != 3 || *suite.Failures != 1 || *suite.Errors != 0 {
		t.Errorf("suite: %s: %d tests, %d failures, %d errors", suite.Name, *suite.Tests, *suite.Failures, *suite.Errors)
	}
	names := map[string]bool{}
	for _, c := range suite.Cases {
		names[c.Name] = true
		if c.Name == "offers dessert" && (c.Failure == nil || !strings.Contains(c.Failure.Message, "dessert") || !strings.Contains(c.SystemOut, "Caller: hello")) {
			t.Errorf("the failing case: %+v", c)
		}
	}
	if !names["greets (repeat 1)"] || !names["greets (repeat 2)"] || !names["offers dessert"] {
		t.Errorf("testcases: %v", names)
	}
	props := map[string]string{}
	for _, p := range suite.Properties {
		props[p.Name] = p.Value
	}
	if !strings.HasPrefix(props["run_id"], data.PrefixTestRun) || props["agent_id"] != agent || props["revision"] == "" {
		t.Errorf("properties: %v", props)
	}

	// Only the passing test, by name: exit 0.
	out, err = s.voiceapi(t, "test", agent, "--test", "greets", "--junit", junit, "--poll", "20ms")
	if err != nil || !strings.Contains(out, "1 passed, 0 failed, 0 error of 1") {
		t.Fatalf("only greets: %v\n%s", err, out)
	}
	if doc := readJUnit(t, junit); *doc.Failures != 0 || *doc.Errors != 0 || *doc.Tests != 2 {
		t.Errorf("a passing run's report: %+v", doc)
	}
	// A test that cannot run (a variable it does not give) is an error, not a failure.
	testkit.Expect(t, s.Do("PUT", "/api/v1/agents/"+agent, s.Owner.Token, map[string]any{"prompt_config": map[string]any{"prompt": "You serve {{shop}}."}}), 200)
	out, err = s.voiceapi(t, "test", "Trattoria", "--test", failing, "--junit", junit, "--poll", "20ms")
	if cli.ExitCode(err) != 1 || !strings.Contains(out, "ERROR   offers dessert") || !strings.Contains(out, "shop") {
		t.Fatalf("a test that cannot run: %v\n%s", err, out)
	}
	if doc := readJUnit(t, junit); *doc.Errors != 1 || *doc.Failures != 0 {
		t.Errorf("an erroring run's report: errors %d, failures %d", *doc.Errors, *doc.Failures)
	}
	if _, err := s.voiceapi(t, "test", "Nobody"); err == nil || !strings.Contains(err.Error(), `no agent is named "Nobody"`) {
		t.Errorf("an unknown agent: %v", err)
	}
	if _, err := s.voiceapi(t, "test", "Trattoria", "--test", "nothing"); err == nil || !strings.Contains(err.Error(), `no test named "nothing"`) {
		t.Errorf("an unknown test: %v", err)
	}
}

// TestTestJUnitFile: --junit is checked before the run (a report with nowhere to go is
// refused, no run made), and a report replaces the last one in one rename, so a reader
// holding the old one reads it whole.
func TestTestJUnitFile(t *testing.T) {
	s := newTestServer(t)
	r := s.Do("POST", "/api/v1/agents", s.Owner.Token, map[string]any{"name": "Trattoria", "llm_config": json.RawMessage(s.llmConfig())})
	testkit.Expect(t, r, 201)
	agent := r.Data()["id"].(string)
	testkit.Expect(t, s.Do("POST", "/api/v1/agents/"+agent+"/tests", s.Owner.Token, `{"name":"greets","user":{"script":["hello"]},"criteria":[{"type":"says","pattern":"Welcome"}]}`), 201)
	dir := t.TempDir()

	for _, bad := range []string{filepath.Join(dir, "missing", "report.xml"), dir} {
		if _, err := s.voiceapi(t, "test", "Trattoria", "--junit", bad, "--poll", "20ms"); err == nil || !strings.HasPrefix(err.Error(), "--junit: ") {
			t.Errorf("--junit %s: %v", bad, err)
		}
	}
	if runs := s.Do("GET", "/api/v1/agents/"+agent+"/test-runs", s.Owner.Token, nil).List(); len(runs) != 0 {
		t.Errorf("a refused --junit made %d run(s)", len(runs))
	}

	junit := filepath.Join(dir, "report.xml")
	old := []byte("<testsuites><!-- the last run's report --></testsuites>\n")
	if err := os.WriteFile(junit, old, 0o644); err != nil {
		t.Fatal(err)
	}
	reader, err := os.Open(junit)
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	if out, err := s.voiceapi(t, "test", "Trattoria", "--junit", junit, "--poll", "20ms"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if got, _ := io.ReadAll(reader); !bytes.Equal(got, old) {
		t.Errorf("the reader of the last report read %q", got)
	}
	if doc := readJUnit(t, junit); *doc.Tests != 1 {
		t.Errorf("the new report: %+v", doc)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("left in the directory: %v", entries)
	}
}

// TestVersionFlagBelowOne: --version 0 or less is refused, naming the flag, before
// anything is asked of the server; it used to read as the flag left out, so `test
// --version -1` ran the draft. A test named twice (by name and by id) runs once.
func TestVersionFlagBelowOne(t *testing.T) {
	s := newTestServer(t)
	r := s.Do("POST", "/api/v1/agents", s.Owner.Token, map[string]any{"name": "Trattoria", "llm_config": json.RawMessage(s.llmConfig())})
	testkit.Expect(t, r, 201)
	agent := r.Data()["id"].(string)
	r = s.Do("POST", "/api/v1/agents/"+agent+"/tests", s.Owner.Token, `{"name":"greets","user":{"script":["hello"]},"criteria":[{"type":"says","pattern":"Welcome"}]}`)
	testkit.Expect(t, r, 201)
	for _, args := range [][]string{
		{"test", "Trattoria", "--version", "-1"},
		{"test", "Trattoria", "--version", "0"},
		{"chat", "Trattoria", "--version", "0"},
		{"calls", "backfill", "Trattoria", "--from", "2026-01-01T00:00:00Z", "--to", "2026-02-01T00:00:00Z", "--version", "-2"},
	} {
		if _, err := s.voiceapi(t, args...); err == nil || !strings.Contains(err.Error(), "for --version: want a version number, 1 or more") {
			t.Errorf("%v: %v", args, err)
		}
	}
	if runs := s.Do("GET", "/api/v1/agents/"+agent+"/test-runs", s.Owner.Token, nil).List(); len(runs) != 0 {
		t.Errorf("a refused --version made %d run(s)", len(runs))
	}
	out, err := s.voiceapi(t, "test", "Trattoria", "--test", "greets", "--test", r.Data()["id"].(string), "--poll", "20ms")
	if err != nil || !strings.Contains(out, "1 passed, 0 failed, 0 error of 1 test.") {
		t.Errorf("a test named twice: %v\n%s", err, out)
	}
}
