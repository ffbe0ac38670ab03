package cli_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/bolt"
	"github.com/voiceapi/voiceapi/cli"
	"github.com/voiceapi/voiceapi/client"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
)

// campaignServer is a server (on the engine the tests run on, its clock on a Monday
// morning the test may move) with a published agent, a number to call from and a
// calls:runtime key that claims dial tasks as a voice runtime does.
type campaignServer struct {
	*testkit.Server
	t       *testing.T
	now     atomic.Int64
	agent   string
	number  string
	owner   *client.Client
	runtime *client.Client
}

const campaignFrom = "+14155550100"

func newCampaignServer(t *testing.T) *campaignServer {
	t.Helper()
	s := &campaignServer{t: t}
	s.now.Store(time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC).UnixNano())
	s.Server = testkit.NewServer(t, func(o *bolt.Options) { o.Now = func() time.Time { return time.Unix(0, s.now.Load()).UTC() } })
	s.owner = s.clientWith(s.Owner.Token)
	s.agent = s.publishedAgent("Reminders")
	r := s.Do("POST", "/api/v1/numbers", s.Owner.Token, map[string]any{"phone_number": campaignFrom, "provider": "sip"})
	testkit.Expect(t, r, 201)
	s.number = r.Data()["id"].(string)
	s.runtime = s.clientWith(s.key(map[string]any{"name": "runtime", "scopes": []string{data.ScopeCallsRuntime}}))
	return s
}

// publishedAgent creates an agent and publishes its version 1.
func (s *campaignServer) publishedAgent(name string) string {
	s.t.Helper()
	r := s.Do("POST", "/api/v1/agents", s.Owner.Token, map[string]any{"name": name,
		"llm_config": map[string]any{"provider": "groq", "model": "llama-3.3-70b-versatile", "api_key": "gsk-test"}})
	testkit.Expect(s.t, r, 201)
	id := r.Data()["id"].(string)
	testkit.Expect(s.t, s.Do("POST", "/api/v1/agents/"+id+"/publish", s.Owner.Token, nil), 204)
	return id
}

// key creates an API key of the owner with body's limits and returns its token.
func (s *campaignServer) key(body map[string]any) string {
	s.t.Helper()
	r := s.Do("POST", "/api/v1/api-keys", s.Owner.Token, body)
	testkit.Expect(s.t, r, 201)
	return r.JSON()["token"].(string)
}

func (s *campaignServer) clientWith(token string) *client.Client {
	s.t.Helper()
	c, err := client.New(s.URL, client.WithToken(token))
	if err != nil {
		s.t.Fatal(err)
	}
	return c
}

// cliRun is one run of the command line: what it printed and how it ended.
type cliRun struct {
	out, errOut string
	err         error
}

// run runs the command line against s with token (the owner's when empty), stdin from
// in (empty when nil) and standard error on errOut (a buffer when nil).
func (s *campaignServer) run(ctx context.Context, token string, in io.Reader, errOut io.Writer, args ...string) cliRun {
	if token == "" {
		token = s.Owner.Token
	}
	if in == nil {
		in = strings.NewReader("")
	}
	var out bytes.Buffer
	if errOut == nil {
		errOut = &bytes.Buffer{}
	}
	root := cli.NewRootCommand(&out, errOut)
	root.SetArgs(append(args, "--server", s.URL, "--token", token))
	root.SetIn(in)
	err := root.ExecuteContext(ctx)
	return cliRun{out: out.String(), errOut: errOut.(interface{ String() string }).String(), err: err}
}

// voiceapi runs the command line as the owner and fails the test on an error.
func (s *campaignServer) voiceapi(args ...string) string {
	s.t.Helper()
	r := s.run(context.Background(), "", nil, nil, args...)
	if r.err != nil {
		s.t.Fatalf("voiceapi %s: %v\n%s", strings.Join(args, " "), r.err, r.errOut)
	}
	return r.out
}

// refused runs the command line as the owner and returns its error, failing the test
// when there is none or its exit code is not 1.
func (s *campaignServer) refused(args ...string) string {
	s.t.Helper()
	r := s.run(context.Background(), "", nil, nil, args...)
	if r.err == nil || cli.ExitCode(r.err) != 1 {
		s.t.Fatalf("voiceapi %s: error %v (exit %d), want exit 1\n%s", strings.Join(args, " "), r.err, cli.ExitCode(r.err), r.out)
	}
	if !strings.Contains(r.errOut, r.err.Error()) {
		s.t.Errorf("the error is not printed: %q", r.errOut)
	}
	return r.err.Error()
}

// campaigns lists the owner's campaigns through the API.
func (s *campaignServer) campaigns() []*data.Campaign {
	s.t.Helper()
	list, err := client.Collect(s.owner.Campaigns.All(context.Background(), data.CampaignFilter{}))
	if err != nil {
		s.t.Fatal(err)
	}
	return list
}

// file writes content to a file named name in a temporary directory.
func file(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// createArgs are the flags of a campaign create of s's agent and number over recipients.
func (s *campaignServer) createArgs(recipients string, more ...string) []string {
	return append([]string{"campaign", "create", "--agent", s.agent, "--from-number", campaignFrom, "--recipients", recipients,
		"--window", "mon-sun 00:00-23:59", "--max-concurrent", "5"}, more...)
}

// TestCampaignCreateListShow: a CSV and a JSON list become campaigns, the settings from
// the flags (the number given in E.164, the agent by name, days as a range) or from a
// --file; list, show and recipients print them as tables and as JSON.
func TestCampaignCreateListShow(t *testing.T) {
	s := newCampaignServer(t)
	csv := file(t, "march.csv", "phone_number,timezone,customer_name\n+14155550101,,Ada\n(415) 555-0102,America/Los_Angeles,Grace\n+14155550101,,Ada L.\n")
	out := s.voiceapi(append(s.createArgs(csv, "--retry", "no_answer,busy,voicemail:2:30", "--timezone", "America/New_York"), "--agent", "Reminders")...)
	camps := s.campaigns()
	if len(camps) != 1 {
		t.Fatalf("%d campaigns after a create, want 1", len(camps))
	}
	csvCamp := camps[0]
	if !strings.Contains(out, "Created campaign "+csvCamp.ID+` "march" (running): 2 recipients from 3 rows, 1 duplicate merged`) {
		t.Errorf("create output: %q", out)
	}
	if csvCamp.NumberID != s.number || csvCamp.AgentID != s.agent || csvCamp.Timezone != "America/New_York" || csvCamp.MaxConcurrent != 5 ||
		len(csvCamp.Window.Days) != 7 || csvCamp.Retry.MaxAttempts != 2 || csvCamp.Retry.BackoffMinutes != 30 || len(csvCamp.Retry.On) != 3 {
		t.Errorf("the campaign's settings: %+v", csvCamp)
	}

	settings := file(t, "campaign.json", `{"name": "From a file", "agent_id": "`+s.agent+`", "number_id": "`+s.number+`",
		"window": {"days": ["mon", "tue"], "start": "09:00", "end": "17:00"}, "max_concurrent": 2, "start_at": "2026-03-03T09:00:00Z"}`)
	list := file(t, "people.json", `[{"phone_number": "+14155550103", "variables": {"customer_name": "Linus"}}]`)
	out = s.voiceapi("campaign", "create", "--file", settings, "--recipients", list)
	if !strings.Contains(out, `"From a file" (scheduled): 1 recipient from 1 row`) {
		t.Errorf("create from --file: %q", out)
	}
	if got := s.refused("campaign", "create", "--file", settings, "--recipients", list, "--max-concurrent", "3"); !strings.Contains(got, "--file and --max-concurrent cannot be given together: give one of them") {
		t.Errorf("--file with a setting flag: %s", got)
	}

	out = s.voiceapi("campaign", "list")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "ID") || !strings.Contains(lines[1], "From a file") ||
		!strings.Contains(lines[2], csvCamp.ID) || !strings.Contains(lines[2], "running") || !strings.Contains(lines[2], "0/2") {
		t.Errorf("campaign list:\n%s", out)
	}
	out = s.voiceapi("campaign", "list", "--status", "scheduled", "--json")
	var scheduled data.Campaign
	if err := json.Unmarshal([]byte(out), &scheduled); err != nil || scheduled.Name != "From a file" || strings.Count(out, "\n") != 1 {
		t.Errorf("campaign list --status scheduled --json: %v %q", err, out)
	}

	out = s.voiceapi("campaign", "show", csvCamp.ID)
	for _, want := range []string{`Campaign ` + csvCamp.ID + ` "march": running`, "from      +14155550100 (" + s.number + ")",
		"mon,tue,wed,thu,fri,sat,sun 00:00-23:59, time zone America/New_York", "no_answer,busy,voicemail: up to 2 attempts, 30 minutes apart",
		"3 rows, 1 duplicate merged", "pending      2", "total        2"} {
		if !strings.Contains(out, want) {
			t.Errorf("campaign show lacks %q:\n%s", want, out)
		}
	}
	out = s.voiceapi("campaign", "recipients", csvCamp.ID)
	if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 3 || !strings.Contains(out, "+14155550102") || !strings.Contains(out, "pending") {
		t.Errorf("campaign recipients:\n%s", out)
	}
	// A pending recipient says when it is next due.
	if !strings.Contains(out, "NEXT") || !regexp.MustCompile(`pending .* \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`).MatchString(out) {
		t.Errorf("campaign recipients lacks the next due time:\n%s", out)
	}
	// --state: those in one state only; a state of none lists none; an unknown one is
	// the server's 422, naming the values.
	if out := s.voiceapi("campaign", "recipients", csvCamp.ID, "--state", "pending"); strings.Count(strings.TrimSpace(out), "\n") != 2 {
		t.Errorf("campaign recipients --state pending:\n%s", out)
	}
	if out := s.voiceapi("campaign", "recipients", csvCamp.ID, "--state", "completed", "--json"); out != "" {
		t.Errorf("campaign recipients --state completed --json: %q, want none", out)
	}
	if got := s.refused("campaign", "recipients", csvCamp.ID, "--state", "failed"); !strings.Contains(got, "must be one of: pending, in_progress") {
		t.Errorf("campaign recipients --state failed: %q", got)
	}
	out = s.voiceapi("campaign", "recipients", csvCamp.ID, "--json")
	sc := bufio.NewScanner(strings.NewReader(out))
	vars := map[string]any{}
	for sc.Scan() {
		var r data.Recipient
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("%q: %v", sc.Text(), err)
		}
		vars[r.PhoneNumber] = r.Variables["customer_name"]
	}
	if vars["+14155550101"] != "Ada L." || vars["+14155550102"] != "Grace" {
		t.Errorf("recipients --json: the variables by number %v", vars)
	}
	// --json: the created campaign as one JSON record, for a script to read its id.
	out = s.voiceapi(s.createArgs(file(t, "april.csv", "phone_number\n+14155550109\n"), "--name", "April", "--retry", "no_answer:1:1", "--json")...)
	var created data.Campaign
	if err := json.Unmarshal([]byte(out), &created); err != nil || !strings.HasPrefix(created.ID, "cmp_") || created.Name != "April" ||
		created.Counts.Total != 1 || created.Import.Rows != 1 || strings.Count(out, "\n") != 1 {
		t.Errorf("campaign create --json: %v %q", err, out)
	}
	// Counted in English: one of each is singular.
	out = s.voiceapi("campaign", "show", created.ID)
	for _, want := range []string{"no_answer: up to 1 attempt, 1 minute apart", "1 row, 0 duplicates merged"} {
		if !strings.Contains(out, want) {
			t.Errorf("campaign show lacks %q:\n%s", want, out)
		}
	}
}

// TestCampaignCreateRefused: missing flags are named; a CSV with bad lines is refused
// with each line named on a line of its own, exit 1, and no campaign made; bad flag
// values are named before anything is sent; an unknown campaign is a 404 message.
func TestCampaignCreateRefused(t *testing.T) {
	s := newCampaignServer(t)
	csv := file(t, "list.csv", "phone_number\n+14155550101\n")
	if got := s.refused("campaign", "create", "--recipients", csv); !strings.Contains(got, "missing --agent, --from-number, --window, --max-concurrent") {
		t.Errorf("missing flags: %s", got)
	}
	bad := file(t, "bad.csv", "phone_number,customer_name\n+14155550101,Ada\nnot a number,Bea\n+14155550102,Cy\n12,Di\n")
	got := s.refused(s.createArgs(bad)...)
	lines := strings.Split(got, "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], "422 validation_failed") ||
		!strings.HasPrefix(lines[1], "  recipients.line_3.phone_number: Line 3") || !strings.HasPrefix(lines[2], "  recipients.line_5.phone_number: Line 5") {
		t.Errorf("a CSV with bad lines 3 and 5:\n%s", got)
	}
	if got := s.refused(s.createArgs(csv, "--max-concurrent", "0", "--window", "mon-fri 17:00-09:00")...); !strings.Contains(got, "\n  max_concurrent: ") ||
		!strings.Contains(got, "\n  window.end: ") {
		t.Errorf("settings the server refuses:\n%s", got)
	}
	for _, c := range []struct{ args []string }{
		{s.createArgs(csv, "--window", "09:00-17:00")},
		{s.createArgs(csv, "--window", "fri-mon 09:00-17:00")},
		{s.createArgs(csv, "--retry", "busy:three:60")},
		{s.createArgs(csv, "--start-at", "tomorrow")},
		{s.createArgs(csv, "--from-number", "+14155559999")},
		{s.createArgs(file(t, "list.txt", "+14155550101\n"))},
	} {
		got := s.refused(c.args...)
		if !strings.Contains(got, "--") {
			t.Errorf("%v: the error names no flag: %s", c.args, got)
		}
	}
	if n := len(s.campaigns()); n != 0 {
		t.Fatalf("%d campaigns after refused creates, want none", n)
	}
	if got := s.refused("campaign", "show", "cmp_01JD6X0000000000000000000"); !strings.Contains(got, "404 not_found") {
		t.Errorf("an unknown campaign: %s", got)
	}
}

// TestCampaignCreateUnanswered: when no server answers (after the client's retries), the
// error gives the Idempotency-Key to run the create again with.
func TestCampaignCreateUnanswered(t *testing.T) {
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close()
	csv := file(t, "list.csv", "phone_number\n+14155550101\n")
	root := cli.NewRootCommand(io.Discard, io.Discard)
	root.SetArgs([]string{"campaign", "create", "--server", gone.URL, "--token", "1|x", "--agent", "agt_01JD6X0000000000000000000",
		"--from-number", "num_01JD6X0000000000000000000", "--recipients", csv, "--window", "mon 09:00-17:00", "--max-concurrent", "1",
		"--idempotency-key", "run-1"})
	err := root.Execute()
	if err == nil || !strings.Contains(err.Error(), "run the command again with --idempotency-key run-1") {
		t.Errorf("a create no server answered: %v", err)
	}
}

// TestCampaignCreateIdempotent: a create run twice with one --idempotency-key (from a CSV
// and from JSON) makes one campaign each; without the flag each run has its own key.
func TestCampaignCreateIdempotent(t *testing.T) {
	s := newCampaignServer(t)
	csv := file(t, "list.csv", "phone_number\n+14155550101\n")
	first := s.voiceapi(s.createArgs(csv, "--idempotency-key", "march-csv")...)
	again := s.voiceapi(s.createArgs(csv, "--idempotency-key", "march-csv")...)
	list := file(t, "list.json", `[{"phone_number": "+14155550101"}]`)
	s.voiceapi(s.createArgs(list, "--idempotency-key", "march-json")...)
	s.voiceapi(s.createArgs(list, "--idempotency-key", "march-json")...)
	camps := s.campaigns()
	if len(camps) != 2 || first != again || !strings.Contains(first, camps[1].ID) {
		t.Fatalf("two creates with each of two keys made %d campaigns, want 2 (%q, %q)", len(camps), first, again)
	}
	s.voiceapi(s.createArgs(csv)...)
	if n := len(s.campaigns()); n != 3 {
		t.Errorf("a run without the flag: %d campaigns, want 3", n)
	}
}

// TestCampaignListLimitedKey: a key limited to one agent lists that agent's campaigns
// only, also when it asks for the other agent's.
func TestCampaignListLimitedKey(t *testing.T) {
	s := newCampaignServer(t)
	other := s.publishedAgent("Surveys")
	csv := file(t, "list.csv", "phone_number\n+14155550101\n")
	s.voiceapi(s.createArgs(csv, "--name", "mine")...)
	s.voiceapi(s.createArgs(csv, "--name", "theirs", "--agent", other)...)
	limited := s.key(map[string]any{"name": "one agent", "agent_ids": []string{s.agent}})
	r := s.run(context.Background(), limited, nil, nil, "campaign", "list")
	if r.err != nil || !strings.Contains(r.out, "mine") || strings.Contains(r.out, "theirs") {
		t.Errorf("campaign list with a key limited to the first agent: %v\n%s", r.err, r.out)
	}
	r = s.run(context.Background(), limited, nil, nil, "campaign", "list", "--agent", other, "--json")
	if r.err != nil || r.out != "" {
		t.Errorf("campaign list --agent of the other agent, with the limited key: %v %q, want an empty list", r.err, r.out)
	}
	if r := s.run(context.Background(), "", nil, nil, "campaign", "list", "--agent", other); r.err != nil || !strings.Contains(r.out, "theirs") || strings.Contains(r.out, "mine") {
		t.Errorf("the owner's campaign list --agent: %v\n%s", r.err, r.out)
	}
}
