package cli_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/voiceapi/voiceapi/bolt"
	"github.com/voiceapi/voiceapi/cli"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/llmtest"
	"github.com/voiceapi/voiceapi/internal/pgtest"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/postgres"
	"github.com/voiceapi/voiceapi/service"
)

// A single-node installation moved into PostgreSQL serves the same answers: every
// record, its version history, files, pending deliveries, tokens (the old ones still
// work) and the audit chain (it still verifies, as long as it was). Moved back into bbolt,
// it holds what it held, bucket by bucket (move_guard_test.go).
func TestMigrateFromDataServesTheSameAnswers(t *testing.T) {
	dir := t.TempDir()
	url := pgtest.Database(t)
	quiet := slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil))

	// The installation, with its own key file in dir (as `serve` makes it).
	src, err := bolt.Open(dir, bolt.Options{PasswordCost: bcrypt.MinCost, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	inst := seedInstallation(t, src, quiet)
	src.Close()

	summary := migrateInstallation(t, dir, url)
	checkMoveCarriesEveryKind(t, dir, url, summary)

	dst, err := postgres.Open(context.Background(), postgres.Options{URL: url, DataDir: dir, PasswordCost: bcrypt.MinCost, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	checkRoundTripKeepsEveryKey(t, dir, dst)
	moved := httptest.NewServer(cli.NewServer(dst, quiet).Handler())
	defer moved.Close()
	inst.checkSameAnswers(t, moved.URL)
	checkSameAnswersAt(t, moved.URL, inst.second.owner.Token, "the second workspace:", inst.second.before)
	inst.checkMovedOutboxAndKey(t, dst)
	// New writes after the move chain onto the moved audit log.
	testkit.Expect(t, testkit.Request(t, moved.URL, "POST", "/api/v1/agents", inst.owner.Token, map[string]any{"name": "After"}), 201)
	v := testkit.Request(t, moved.URL, "GET", "/api/v1/audit-log/verify", inst.owner.Token, nil)
	if v.Data()["intact"] != true {
		t.Errorf("the chain after a write on the moved installation: %s", v.Body)
	}
}

// installation is the single-node installation before its move: who owns it, the ids
// the checks need and every answer it gave, to compare with the moved one's.
type installation struct {
	owner           *testkit.Account
	do              func(method, path string, body any, headers ...string) *testkit.Response
	agentID, hookID string
	kbID, fileID    string
	testID, runID   string // runID stays queued
	finishedRunID   string
	model           data.LLMConfig // the agent's, on the stand-in
	login           string         // the owner's login token
	campaignID      string
	conversationIDs []string // one open, one ended (its call among the calls)
	jobIDs          []string // the url source's fetch job, the finished and the queued test run's jobs
	paths           []string
	before          map[string]*testkit.Response
	// limited is a key limited to the agent, and its audit log before the move: the
	// moved events are listed by their agent too (service.EventAgent).
	limited         string
	limitedAudit    *testkit.Response
	searchIDsBefore []string
	second          *secondWorkspace // another account's workspace beside the owner's
}

// seedInstallation fills src through its API with one of each record the move carries
// (some still queued or pending, as no runner or dispatcher runs) and records every
// answer before the move.
func seedInstallation(t *testing.T, src *bolt.DB, quiet *slog.Logger) *installation {
	t.Helper()
	// The agent's model is a stand-in taking its key: its static welcome starts the
	// conversations, and the stand-in plays it in a test run that ends with a result.
	stand := llmtest.New(t, data.LLMInternal, llmtest.WithAPIKey("sk-moved-secret-1234"))
	stand.Respond(func(llmtest.Request) llmtest.Reply { return llmtest.Text("Hello, Support here.") })
	svc := cli.NewServices(src)
	svc.Conversations.Configure(cli.ConversationOptions(cli.LLMSettings{AllowURLPrefixes: []string{stand.URL + "/"}}))
	hs := httptest.NewServer(cli.NewServerOn(src, svc, quiet).Handler())
	defer hs.Close()
	inst := &installation{owner: testkit.NewAccount(t, svc, "owner@example.com", true), model: stand.LLMConfig()}
	inst.do = func(method, path string, body any, headers ...string) *testkit.Response {
		t.Helper()
		return testkit.Request(t, hs.URL, method, path, inst.owner.Token, body, headers...)
	}
	inst.agentID = inst.seedAgentAndCalls(t)
	key := inst.do("POST", "/api/v1/api-keys", map[string]any{"name": "limited", "agent_ids": []string{inst.agentID}})
	testkit.Expect(t, key, 201)
	inst.limited = key.JSON()["token"].(string)
	inst.seedKnowledge(t, src)
	inst.seedCampaign(t)
	inst.seedConversations(t, src)
	inst.seedTestRuns(t, svc)
	inst.seedPlanAndLogin(t, svc, hs.URL)
	// Before the queued work: its fan-out leaves the owner's last event alone in the outbox.
	inst.second = seedSecondWorkspace(t, svc, hs.URL, inst.owner.ID)
	inst.seedQueuedWork(t, src)
	inst.second.recordAnswers(t, hs.URL)
	inst.limitedAudit = testkit.Request(t, hs.URL, "GET", "/api/v1/audit-log?per_page=100", inst.limited, nil)
	if testkit.Expect(t, inst.limitedAudit, 200); !strings.Contains(string(inst.limitedAudit.Body), `"agent_id":"`+inst.agentID) {
		t.Fatalf("the limited key's audit log holds no event of its agent: %s", inst.limitedAudit.Body)
	}
	inst.paths = inst.answerPaths()
	inst.before = answersAt(t, hs.URL, inst.owner.Token, inst.paths)
	for _, h := range inst.do("GET", "/api/v1/calls?q=hello", nil).List() {
		inst.searchIDsBefore = append(inst.searchIDsBefore, h.(map[string]any)["id"].(string))
	}
	return inst
}

// seedAgentAndCalls makes an agent with a published version, a rollout and a number,
// a price table and three priced calls, ended; it returns the agent's id.
func (inst *installation) seedAgentAndCalls(t *testing.T) string {
	t.Helper()
	do := inst.do
	agent := do("POST", "/api/v1/agents", map[string]any{"name": "Support", "llm_config": inst.model})
	testkit.Expect(t, agent, 201)
	agentID := agent.Data()["id"].(string)
	testkit.Expect(t, do("POST", "/api/v1/agents/"+agentID+"/publish", map[string]any{"description": "first"}), 204)
	testkit.Expect(t, do("PUT", "/api/v1/agents/"+agentID, map[string]any{"name": "Support v2"}), 200)
	testkit.Expect(t, do("PUT", "/api/v1/agents/"+agentID+"/rollout", map[string]any{"variants": []any{map[string]any{"version": 1, "weight": 100}}}), 200)
	number := do("POST", "/api/v1/numbers", map[string]any{"phone_number": "+14155550123", "provider": "twilio", "inbound_agent_id": agentID})
	testkit.Expect(t, number, 201)
	testkit.Expect(t, do("PUT", "/api/v1/price-table", map[string]any{"currency": "EUR", "prices": []any{
		map[string]any{"provider": "groq", "model": "*", "unit": "llm_input_1m_tokens", "price": "0.5"}}}), 200)
	for i := range 3 {
		// Ended, with its minutes: the month's count of them is moved as it is derived.
		testkit.Expect(t, do("POST", "/api/v1/calls", map[string]any{"agent_id": agentID, "direction": "web", "status": "ended", "duration_ms": 60000,
			"transcript": []map[string]any{{"role": "user", "content": fmt.Sprint("hello ", i), "start_ms": 0}},
			"analysis":   map[string]any{"call_successful": i > 0},
			"usage":      map[string]any{"llm": []any{map[string]any{"provider": "groq", "model": "m", "input_tokens": 1000 * (i + 1)}}}}), 201)
	}
	return agentID
}

// seedKnowledge makes a knowledge base with an uploaded file and one with a url source
// whose fetch job stays queued (no runner runs: it moves and runs where it lands); it
// keeps their ids.
func (inst *installation) seedKnowledge(t *testing.T, src *bolt.DB) {
	t.Helper()
	kb := inst.do("POST", "/api/v1/knowledge-bases", map[string]any{"name": "FAQ", "texts": []any{map[string]any{"title": "Hours", "content": "We open at nine."}}})
	testkit.Expect(t, kb, 201)
	inst.kbID = kb.Data()["id"].(string)
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	w, _ := mw.CreateFormFile("files", "refunds.txt")
	w.Write([]byte("Refunds are paid within fourteen days."))
	mw.Close()
	up := inst.do("POST", "/api/v1/knowledge-bases/"+inst.kbID+"/sources/add", body.Bytes(), "Content-Type", mw.FormDataContentType())
	testkit.Expect(t, up, 200)
	inst.fileID = up.Data()["files"].([]any)[0].(map[string]any)["id"].(string)
	testkit.Expect(t, inst.do("POST", "/api/v1/knowledge-bases", map[string]any{"name": "Web", "urls": []string{"https://example.com/faq"}}), 201)
	var jobs []*data.JobRecord
	if err := src.View(context.Background(), func(tx service.Tx) (err error) {
		jobs, _, err = tx.Jobs(inst.owner.WorkspaceID, data.PageRequest{})
		return err
	}); err != nil || len(jobs) != 1 {
		t.Fatalf("the installation's jobs: %v, %v", jobs, err)
	}
	inst.jobIDs = append(inst.jobIDs, jobs[0].ID)
}

// seedTestRuns makes a test of the agent and a run of it that a runner of test runs
// only (the url source's fetch job stays queued) plays to its end: passed, with the
// test's result and its verdicts.
func (inst *installation) seedTestRuns(t *testing.T, svc *service.Services) {
	t.Helper()
	do, agentID := inst.do, inst.agentID
	test := do("POST", "/api/v1/agents/"+agentID+"/tests", map[string]any{"name": "greets", "user": map[string]any{"script": []string{"hi"}},
		"criteria": []map[string]any{{"type": "says", "pattern": "Hello"}}})
	testkit.Expect(t, test, 201)
	inst.testID = test.Data()["id"].(string)
	run := do("POST", "/api/v1/agents/"+agentID+"/test-runs", map[string]any{})
	testkit.Expect(t, run, 202)
	runner := svc.Jobs.NewRunner(service.RunnerOptions{Kinds: []string{service.JobKindTestRun}})
	if n, err := runner.RunDue(context.Background()); n != 1 || err != nil {
		t.Fatalf("running the test run: %d jobs, %v", n, err)
	}
	inst.finishedRunID = run.Data()["id"].(string)
	inst.jobIDs = append(inst.jobIDs, run.Data()["job_id"].(string))
	ended := do("GET", "/api/v1/agents/"+agentID+"/test-runs/"+inst.finishedRunID, nil)
	if testkit.Expect(t, ended, 200); ended.Data()["status"] != "passed" || !strings.Contains(string(ended.Body), `"passed":true`) {
		t.Fatalf("the finished run: %s", ended.Body)
	}
}

// seedPlanAndLogin sets the workspace's plan as the operator's CLI does (no HTTP route
// sets plans) and logs the owner in: a login token is another kind in api_keys.
func (inst *installation) seedPlanAndLogin(t *testing.T, svc *service.Services, base string) {
	t.Helper()
	plan := "team"
	if _, err := svc.Subscriptions.SetSubscription(context.Background(), inst.owner.WorkspaceID,
		data.SubscriptionSet{Plan: &plan, Limits: map[string]int64{data.LimitAgents: 40, data.LimitConcurrentCalls: 7}}); err != nil {
		t.Fatal(err)
	}
	login := testkit.Request(t, base, "POST", "/api/v1/auth/login", "", map[string]any{"email": inst.owner.Email, "password": inst.owner.Password})
	testkit.Expect(t, login, 200)
	inst.login = login.JSON()["token"].(string)
}

// seedQueuedWork makes a run of the agent's test, queued with its job, and a webhook to
// nowhere reachable whose deliveries stay pending, fanned out but not posted (no runner
// or dispatcher runs), then one event left in the outbox.
func (inst *installation) seedQueuedWork(t *testing.T, src *bolt.DB) {
	t.Helper()
	do, agentID := inst.do, inst.agentID
	run := do("POST", "/api/v1/agents/"+agentID+"/test-runs", map[string]any{})
	testkit.Expect(t, run, 202)
	hook := do("POST", "/api/v1/webhooks", map[string]any{"url": "https://example.com/hook", "events": []string{"*"}})
	testkit.Expect(t, hook, 201)
	inst.hookID = hook.Data()["id"].(string)
	testkit.Expect(t, do("POST", "/api/v1/webhooks/"+inst.hookID+"/test", nil), 202)
	if n, err := cli.NewServices(src).Deliveries.FanOut(context.Background(), 0); err != nil || n == 0 {
		t.Fatalf("fan-out on the installation: %d, %v", n, err)
	}
	testkit.Expect(t, do("POST", "/api/v1/agents", map[string]any{"name": "Queued"}), 201) // its event stays outboxed
	inst.runID = run.Data()["id"].(string)
	inst.jobIDs = append(inst.jobIDs, run.Data()["job_id"].(string))
}

// answerPaths lists every GET whose answer must be the same after the move.
func (inst *installation) answerPaths() []string {
	agentID, kbID, hookID := inst.agentID, inst.kbID, inst.hookID
	figures := "/api/v1/analytics/analysis?field=call_successful&interval=hour&agent_id=" + agentID + "&from=" + time.Now().UTC().Add(-2*time.Hour).Format(time.RFC3339) +
		"&to=" + time.Now().UTC().Add(2*time.Hour).Format(time.RFC3339)
	analytics := "/api/v1/analytics/calls?interval=hour&from=" + time.Now().UTC().Add(-2*time.Hour).Format(time.RFC3339) +
		"&to=" + time.Now().UTC().Add(2*time.Hour).Format(time.RFC3339)
	return []string{
		"/api/v1/agents", "/api/v1/agents/" + agentID, "/api/v1/agents/" + agentID + "/versions",
		"/api/v1/agents/" + agentID + "/versions/1", "/api/v1/agents/" + agentID + "/rollout", "/api/v1/numbers", "/api/v1/calls",
		"/api/v1/knowledge-bases", "/api/v1/knowledge-bases/" + kbID,
		"/api/v1/knowledge-bases/" + kbID + "/sources/files/" + inst.fileID + "/content",
		"/api/v1/webhooks", "/api/v1/webhooks/" + hookID, "/api/v1/webhooks/" + hookID + "/deliveries", "/api/v1/workspaces",
		"/api/v1/subscription", "/api/v1/audit-log?per_page=100", "/api/v1/audit-log/verify",
		"/api/v1/price-table", figures, analytics,
		"/api/v1/jobs/" + inst.jobIDs[0], "/api/v1/jobs/" + inst.jobIDs[1], "/api/v1/jobs/" + inst.jobIDs[2],
		"/api/v1/agents/" + agentID + "/test-runs/" + inst.finishedRunID,
		"/api/v1/agents/" + agentID + "/tests", "/api/v1/agents/" + agentID + "/tests/" + inst.testID,
		"/api/v1/agents/" + agentID + "/test-runs", "/api/v1/agents/" + agentID + "/test-runs/" + inst.runID,
		"/api/v1/agents/" + agentID + "/publish-gate",
		"/api/v1/campaigns", "/api/v1/campaigns/" + inst.campaignID, "/api/v1/campaigns/" + inst.campaignID + "/recipients",
		"/api/v1/suppressions", "/api/v1/conversations",
		"/api/v1/conversations/" + inst.conversationIDs[0], "/api/v1/conversations/" + inst.conversationIDs[1],
	}
}

// seedConversations starts two conversations with the agent (its static welcome needs
// no model) and ends the second: the move left their records behind. The ended one is
// listed to redact, as the upgrade lists those its job has not reached yet (no API
// lists one).
func (inst *installation) seedConversations(t *testing.T, src *bolt.DB) {
	t.Helper()
	for i := range 2 {
		c := inst.do("POST", "/api/v1/agents/"+inst.agentID+"/conversations", map[string]any{"variables": map[string]any{"n": i}})
		testkit.Expect(t, c, 201)
		inst.conversationIDs = append(inst.conversationIDs, c.Data()["id"].(string))
	}
	testkit.Expect(t, inst.do("POST", "/api/v1/conversations/"+inst.conversationIDs[1]+"/end", nil), 200)
	if err := src.Update(context.Background(), func(tx service.Tx) error {
		return tx.ListConversationToRedact(inst.owner.WorkspaceID, inst.conversationIDs[1])
	}); err != nil {
		t.Fatal(err)
	}
}

// seedCampaign makes a running campaign of two recipients, one of them leased by a
// claim (its call registered), and a suppression list entry: the move left both behind,
// a do-not-call list among them.
func (inst *installation) seedCampaign(t *testing.T) {
	t.Helper()
	do := inst.do
	testkit.Expect(t, do("POST", "/api/v1/suppressions", map[string]any{"phone_number": "+14155550109", "reason": "asked not to be called"}), 201)
	numbers := do("GET", "/api/v1/numbers", nil).List()
	campaign := do("POST", "/api/v1/campaigns", map[string]any{"name": "Reminders", "agent_id": inst.agentID,
		"number_id": numbers[0].(map[string]any)["id"], "timezone": "UTC", "max_concurrent": 1,
		"window":     map[string]any{"days": []string{"mon", "tue", "wed", "thu", "fri", "sat", "sun"}, "start": "00:00", "end": "23:59"},
		"recipients": []any{map[string]any{"phone_number": "+14155550101"}, map[string]any{"phone_number": "+14155550102"}}})
	testkit.Expect(t, campaign, 201)
	inst.campaignID = campaign.Data()["id"].(string)
	claim := do("POST", "/api/v1/dial-tasks/claim", map[string]any{"max": 1})
	if testkit.Expect(t, claim, 200); len(claim.Data()["tasks"].([]any)) != 1 {
		t.Fatalf("the claim leased no task: %s", claim.Body)
	}
}

// runMigrate runs the command line and returns its output.
func runMigrate(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	root := cli.NewRootCommand(&out, &out)
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), err
}

// migrateInstallation moves the installation in dir into the database at url and checks
// the move's summary, which it returns; moving again into the now full database is
// refused, changing nothing.
func migrateInstallation(t *testing.T, dir, url string) string {
	t.Helper()
	out, err := runMigrate(t, "migrate", "--from-data", dir, "--database-url", url)
	if err != nil {
		t.Fatalf("migrate --from-data: %v\n%s", err, out)
	}
	// Counts of both workspaces: the second's agent, version, call, number, campaign and
	// recipient, webhook, keys (its owner's and a limited one) and member (the first owner).
	if !strings.Contains(out, "agent_versions 2,") || !strings.Contains(out, "rollouts 1,") || !strings.Contains(out, "calls 6,") || !strings.Contains(out, "files 1,") || !strings.Contains(out, "jobs 3,") ||
		!strings.Contains(out, "agent_tests 1,") || !strings.Contains(out, "test_runs 2,") || !strings.Contains(out, "test_results 1,") ||
		!strings.Contains(out, "subscription_plans 1,") || !strings.Contains(out, "conversations_to_redact 1,") ||
		!strings.Contains(out, "campaigns 2,") || !strings.Contains(out, "campaign_recipients 3,") || !strings.Contains(out, "suppressions 1,") ||
		!strings.Contains(out, "conversations 2,") || !strings.Contains(out, "workspaces 2\n") || !strings.Contains(out, "webhooks 2,") ||
		!strings.Contains(out, "members 3,") || !strings.Contains(out, "numbers 2,") || !strings.Contains(out, "tokens 5,") || !strings.Contains(out, "users 2,") {
		t.Errorf("the move's summary: %s", out)
	}
	if out, err := runMigrate(t, "migrate", "--from-data", dir, "--database-url", url); err == nil || !strings.Contains(err.Error(), "empty database") {
		t.Errorf("a second move: %v\n%s", err, out)
	}
	return out
}

// checkSameAnswers compares every answer of the moved installation at base, body and
// ETag, with the one before the move; the moved calls are searchable where they landed
// (scores may differ between the engines, so the ids are compared).
func (inst *installation) checkSameAnswers(t *testing.T, base string) {
	t.Helper()
	checkSameAnswersAt(t, base, inst.owner.Token, "the owner's workspace:", inst.before)
	if after := testkit.Request(t, base, "GET", "/api/v1/audit-log?per_page=100", inst.limited, nil); after.Status != 200 || !bytes.Equal(after.Body, inst.limitedAudit.Body) {
		t.Errorf("the limited key's audit log after the move: %d\n%s\nbefore:\n%s", after.Status, after.Body, inst.limitedAudit.Body)
	}
	if after := testkit.Request(t, base, "GET", "/api/v1/agents", inst.login, nil); after.Status != 200 {
		t.Errorf("the owner's login token after the move: %d %s", after.Status, after.Body)
	}
	var searchIDs []string
	for _, h := range testkit.Request(t, base, "GET", "/api/v1/calls?q=hello", inst.owner.Token, nil).List() {
		searchIDs = append(searchIDs, h.(map[string]any)["id"].(string))
	}
	// The three calls saying hello and the ended conversation's, whose welcome does.
	if got, want := searchIDs, inst.searchIDsBefore; len(want) != 4 || !slices.Equal(got, want) {
		t.Errorf("search after the move: %v, want %v", got, want)
	}
}

// checkMovedOutboxAndKey checks that of the outbox only the event still in it moved
// (the pending deliveries moved too, compared with the answers): fanning out makes
// exactly its one delivery; and that the moved agent's key still opens under the
// installation's key.
func (inst *installation) checkMovedOutboxAndKey(t *testing.T, dst *postgres.DB) {
	t.Helper()
	if !strings.Contains(string(inst.before["/api/v1/webhooks/"+inst.hookID+"/deliveries"].Body), `"status":"pending"`) {
		t.Fatal("the installation had no pending delivery to move")
	}
	fanned, err := cli.NewServices(dst).Deliveries.FanOut(context.Background(), 0)
	if err != nil || fanned != 1 {
		t.Errorf("fanning out the moved outbox: %d events, %v; want the one still queued", fanned, err)
	}
	var sealed string
	if err := dst.View(context.Background(), func(tx service.Tx) error {
		a, err := tx.Agent(inst.agentID)
		if err == nil && a != nil && a.LLMConfig.APIKey != nil {
			sealed = *a.LLMConfig.APIKey
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if plain, err := dst.Sealer().Open(sealed); err != nil || plain != "sk-moved-secret-1234" {
		t.Errorf("the moved agent's api key opens as %q, %v", plain, err)
	}
}

// TestMigrateFromDataRefusesAnotherKey: with VOICEAPI_SECRET_KEY set to a key that is not
// the installation's secret.key (scale-out.md exports a new one for the replicas just
// before), the move is refused before anything is written: it used to succeed, leaving a
// database whose credentials no replica could open and whose audit chain read as edited.
// The same key as the file's passes the check (and then needs a database).
func TestMigrateFromDataRefusesAnotherKey(t *testing.T) {
	dir := t.TempDir()
	src, err := bolt.Open(dir, bolt.Options{PasswordCost: bcrypt.MinCost, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	src.Close()
	fileKey, err := os.ReadFile(filepath.Join(dir, "secret.key"))
	if err != nil {
		t.Fatal(err)
	}
	migrate := func(key string) error {
		t.Setenv("VOICEAPI_SECRET_KEY", key)
		root := cli.NewRootCommand(io.Discard, io.Discard)
		// Nothing listens on port 1: a move past the check fails to connect.
		root.SetArgs([]string{"migrate", "--from-data", dir, "--database-url", "postgres://voiceapi@127.0.0.1:1/voiceapi?connect_timeout=2"})
		return root.Execute()
	}
	err = migrate(strings.Repeat("ab", 32))
	if err == nil || !strings.HasPrefix(err.Error(), "VOICEAPI_SECRET_KEY is not the key in "+filepath.Join(dir, "secret.key")) {
		t.Fatalf("another key: %v", err)
	}
	if err := migrate(string(fileKey)); err == nil || strings.Contains(err.Error(), "is not the key in") {
		t.Fatalf("the file's own key: %v (want it past the check, failing to connect)", err)
	}
}

// TestMigrateFromDataRefusesWithoutTheKey: a node that ran with VOICEAPI_SECRET_KEY has no
// secret.key. Moved without the variable, the move used to make a new key file and set
// the database up with that random key: nothing sealed could be opened and the audit
// chain read as edited. It is refused before anything is written, no key file made.
func TestMigrateFromDataRefusesWithoutTheKey(t *testing.T) {
	dir := t.TempDir()
	src, err := bolt.Open(dir, bolt.Options{PasswordCost: bcrypt.MinCost, NoSync: true, SecretKey: bytes.Repeat([]byte{7}, 32)})
	if err != nil {
		t.Fatal(err)
	}
	src.Close()
	t.Setenv("VOICEAPI_SECRET_KEY", "")
	root := cli.NewRootCommand(io.Discard, io.Discard)
	root.SetArgs([]string{"migrate", "--from-data", dir, "--database-url", "postgres://voiceapi@127.0.0.1:1/voiceapi?connect_timeout=2"})
	err = root.Execute()
	if err == nil || !strings.HasPrefix(err.Error(), "--from-data: "+dir+" has no secret.key and VOICEAPI_SECRET_KEY is unset") {
		t.Errorf("a move without the node's key: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "secret.key")); !os.IsNotExist(err) {
		t.Errorf("the move left a key file in %s (%v); want none", dir, err)
	}
}

// TestMigrateFromDataRefusesAKeyFileItCannotRead: with VOICEAPI_SECRET_KEY set and a
// secret.key it cannot read (a directory here; another user's file when not run as
// root), the move cannot tell the two keys apart: refused, naming the file. It went on
// with the variable's key, unchecked.
func TestMigrateFromDataRefusesAKeyFileItCannotRead(t *testing.T) {
	dir := t.TempDir()
	src, err := bolt.Open(dir, bolt.Options{PasswordCost: bcrypt.MinCost, NoSync: true, SecretKey: bytes.Repeat([]byte{7}, 32)})
	if err != nil {
		t.Fatal(err)
	}
	src.Close()
	if err := os.Mkdir(filepath.Join(dir, "secret.key"), 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("VOICEAPI_SECRET_KEY", strings.Repeat("07", 32))
	root := cli.NewRootCommand(io.Discard, io.Discard)
	root.SetArgs([]string{"migrate", "--from-data", dir, "--database-url", "postgres://voiceapi@127.0.0.1:1/voiceapi?connect_timeout=2"})
	if err := root.Execute(); err == nil || !strings.HasPrefix(err.Error(), "--from-data: reading "+filepath.Join(dir, "secret.key")+" to compare it with VOICEAPI_SECRET_KEY") {
		t.Errorf("a key file the move cannot read: %v", err)
	}
}
