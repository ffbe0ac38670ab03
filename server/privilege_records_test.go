package server_test

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/cli"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/llmtest"
	"github.com/voiceapi/voiceapi/server"
	"github.com/voiceapi/voiceapi/service"
)

// The property test's records beyond agents and calls: for each agent its versions and
// rollout, a test and a run of it, a conversation, a campaign with its recipients, an
// analysed call and a backfill job; and the newest features' deletes and failures (a
// version deleted, a campaign deleted, a call's analysis failing for good with its
// job.failed), whose events and gone records are checked alike. Each is read through every route that shows it, by
// every reader of the property test, against the rule written there (reader); their
// events through the audit log filtered by type, and a webhook for each type.

// agentRecords are the records each agent owns, by id, for the checks to compare with.
type agentRecords struct {
	agents     []string
	field      map[string]string   // agent → the analysis field it alone declares
	tests      map[string]string   // test id → agent
	runs       map[string]string   // run id → agent
	convs      map[string]string   // conversation id → agent
	campaigns  map[string]string   // campaign id → agent
	recipients map[string][]string // campaign id → its recipients
	jobs       map[string]recordJob
	callAgent  map[string]string // call id → agent, the analysed calls among them
	// gone are records deleted in the setup (a campaign, a version: their delete's
	// event is in the log), path → the module its route needs.
	gone map[string]string
}

// recordJob is a job's agent, the module its kind is read with (docs/api.md,
// "Background work"), and the status it ends in.
type recordJob struct{ agent, module, status string }

// newRecordsEnv is the property test's server: newStreamEnv whose conversations and test
// runs reach a language model stand-in, allowed through the SSRF guard as an operator
// allows a local model server. The server and the runner the setup starts are built on
// two service layers over one database (as newStreamEnvOn builds them), so both are told.
func newRecordsEnv(t *testing.T) (*streamEnv, *llmtest.Server) {
	t.Helper()
	stand := llmtest.New(t, data.LLMInternal)
	stand.Respond((&llmtest.Fixture{AgentDefault: llmtest.Text("Welcome! How can I help?")}).Respond)
	opts := cli.ConversationOptions(cli.LLMSettings{BaseURLs: stand.Options().BaseURLs, AllowURLPrefixes: []string{stand.URL + "/"}})
	e := newStreamEnvOn(t, func(c *server.Config) { c.Stream.Heartbeat = 40 * time.Millisecond }, func(s *server.Services) {
		s.Conversations.(*service.ConversationService).Configure(opts)
	})
	e.Svc.Conversations.Configure(opts)
	return e, stand
}

// makeAgentRecords makes every agent's records as the owner, runs the jobs they queue to
// their end and stops the runner, so that no event is added while the readers read.
func (e *streamEnv) makeAgentRecords(t *testing.T, stand *llmtest.Server, agents []string, callAgent map[string]string) *agentRecords {
	t.Helper()
	rec := &agentRecords{agents: agents, field: map[string]string{}, tests: map[string]string{}, runs: map[string]string{},
		convs: map[string]string{}, campaigns: map[string]string{}, recipients: map[string][]string{}, jobs: map[string]recordJob{},
		callAgent: callAgent, gone: map[string]string{}}
	runner := e.Svc.Jobs.NewRunner(service.RunnerOptions{Poll: 20 * time.Millisecond, Lease: 5 * time.Second})
	runner.Start(context.Background())
	t.Cleanup(func() { runner.Stop(context.Background()) })
	res := e.do("POST", "/api/v1/numbers", e.Owner.Token, map[string]any{"phone_number": "+14155550199", "provider": "twilio"})
	expect(t, res, 201)
	number := res.Data()["id"].(string)
	for i, a := range agents {
		e.versionAgent(t, stand, rec, a, i)
		e.makeRecordsOf(t, rec, a, i, number)
	}
	for id, j := range rec.jobs {
		e.waitJob(t, id, j.status)
	}
	if err := runner.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	return rec
}

// versionAgent points agent a at the stand-in with an analysis field of its own,
// publishes it twice (versions 1 and 2) and rolls the two out half and half.
func (e *streamEnv) versionAgent(t *testing.T, stand *llmtest.Server, rec *agentRecords, a string, i int) {
	t.Helper()
	tok := e.Owner.Token
	rec.field[a] = fmt.Sprintf("mood_%d", i)
	raw, _ := json.Marshal(stand.LLMConfig())
	var llmConfig map[string]any
	json.Unmarshal(raw, &llmConfig)
	expect(t, e.do("PUT", "/api/v1/agents/"+a, tok, map[string]any{"llm_config": llmConfig, "analysis_config": map[string]any{
		"fields": []any{map[string]any{"name": rec.field[a], "type": "enum", "description": "The caller's mood", "choices": []string{"calm", "cross"}}},
	}}), 200)
	expect(t, e.do("POST", "/api/v1/agents/"+a+"/publish", tok, nil), 204)
	expect(t, e.do("PUT", "/api/v1/agents/"+a, tok, map[string]any{"name": fmt.Sprintf("Agent %d, second", i)}), 200)
	expect(t, e.do("POST", "/api/v1/agents/"+a+"/publish", tok, nil), 204)
	// A third version, deleted once the second is live again: agent.version_deleted.
	expect(t, e.do("PUT", "/api/v1/agents/"+a, tok, map[string]any{"name": fmt.Sprintf("Agent %d, third", i)}), 200)
	expect(t, e.do("POST", "/api/v1/agents/"+a+"/publish", tok, nil), 204)
	expect(t, e.do("POST", "/api/v1/agents/"+a+"/versions/2/restore", tok, nil), 200)
	expect(t, e.do("DELETE", "/api/v1/agents/"+a+"/versions/3", tok, nil), 204)
	rec.gone["/api/v1/agents/"+a+"/versions/3"] = data.ModuleAgents
	expect(t, e.do("PUT", "/api/v1/agents/"+a+"/rollout", tok, map[string]any{
		"variants": []any{map[string]any{"version": 1, "weight": 50}, map[string]any{"version": 2, "weight": 50}}}), 200)
}

// makeRecordsOf makes agent a's test and run, conversation, analysed call, backfill and
// campaign.
func (e *streamEnv) makeRecordsOf(t *testing.T, rec *agentRecords, a string, i int, number string) {
	t.Helper()
	tok := e.Owner.Token
	res := e.do("POST", "/api/v1/agents/"+a+"/tests", tok, map[string]any{"name": "Greets", "user": map[string]any{"script": []string{"Hello"}},
		"criteria": []any{map[string]any{"type": "says", "pattern": "Welcome"}}})
	expect(t, res, 201)
	rec.tests[res.Data()["id"].(string)] = a
	res = e.do("POST", "/api/v1/agents/"+a+"/test-runs", tok, map[string]any{})
	expect(t, res, 202)
	rec.runs[res.Data()["id"].(string)] = a
	rec.jobs[res.Data()["job_id"].(string)] = recordJob{a, data.ModuleAgents, "succeeded"}

	res = e.do("POST", "/api/v1/agents/"+a+"/conversations", tok, map[string]any{})
	expect(t, res, 201)
	rec.convs[res.Data()["id"].(string)] = a

	res = e.do("POST", "/api/v1/calls", tok, map[string]any{"agent_id": a, "direction": "web", "status": "ended",
		"disconnection_reason": "user_hangup", "analysis": map[string]any{rec.field[a]: "calm"},
		"transcript": []map[string]any{{"role": "user", "content": "my parcel came at last"}}})
	expect(t, res, 201)
	rec.callAgent[res.Data()["id"].(string)] = a
	// A backfill over a range without calls: a job of the agent that asks no model.
	res = e.do("POST", "/api/v1/agents/"+a+"/analysis/backfill", tok, map[string]any{"from": "2020-01-01T00:00:00Z", "to": "2020-01-02T00:00:00Z"})
	expect(t, res, 202)
	rec.jobs[res.Data()["id"].(string)] = recordJob{a, data.ModuleCallHistory, "succeeded"}
	// A call whose analysis fails for good: the stand-in answers in prose, which fits no
	// field (call.analysis_failed, and job.failed naming the agent).
	res = e.do("POST", "/api/v1/calls", tok, map[string]any{"agent_id": a, "direction": "web", "status": "ended",
		"disconnection_reason": "user_hangup", "transcript": []map[string]any{{"role": "user", "content": "my parcel is lost"}}})
	expect(t, res, 201)
	call := res.Data()["id"].(string)
	rec.callAgent[call] = a
	res = e.do("POST", "/api/v1/calls/"+call+"/analyze", tok, nil)
	expect(t, res, 202)
	rec.jobs[res.Data()["id"].(string)] = recordJob{a, data.ModuleCallHistory, "failed"}

	res = e.do("POST", "/api/v1/campaigns", tok, map[string]any{"name": fmt.Sprintf("Campaign %d", i), "agent_id": a, "number_id": number,
		"window": everyDay, "max_concurrent": 1, "recipients": []any{
			map[string]any{"phone_number": fmt.Sprintf("+1415555020%d", i)}, map[string]any{"phone_number": fmt.Sprintf("+1415555030%d", i)}}})
	expect(t, res, 201)
	c := res.Data()["id"].(string)
	rec.campaigns[c] = a
	res = e.do("GET", "/api/v1/campaigns/"+c+"/recipients?per_page=100", tok, nil)
	expect(t, res, 200)
	if rec.recipients[c] = itemIDs(res.List()); len(rec.recipients[c]) != 2 {
		t.Fatalf("campaign %s has recipients %v, want 2", c, rec.recipients[c])
	}
	// A second campaign, canceled and deleted: campaign.deleted.
	res = e.do("POST", "/api/v1/campaigns", tok, map[string]any{"name": fmt.Sprintf("Gone %d", i), "agent_id": a, "number_id": number,
		"window": everyDay, "max_concurrent": 1, "start_at": "2099-01-01T00:00:00Z",
		"recipients": []any{map[string]any{"phone_number": fmt.Sprintf("+1415555040%d", i)}}})
	expect(t, res, 201)
	gone := res.Data()["id"].(string)
	expect(t, e.do("POST", "/api/v1/campaigns/"+gone+"/cancel", tok, nil), 200)
	expect(t, e.do("DELETE", "/api/v1/campaigns/"+gone, tok, nil), 204)
	rec.gone["/api/v1/campaigns/"+gone] = data.ModuleCallHistory
}

// waitJob waits until job id has ended, and fails unless it ended as want.
func (e *streamEnv) waitJob(t *testing.T, id, want string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		res := e.do("GET", "/api/v1/jobs/"+id, e.Owner.Token, nil)
		expect(t, res, 200)
		switch st := res.Data()["status"]; st {
		case want:
			return
		case "succeeded", "failed", "canceled":
			t.Fatalf("job %s ended %s, want %s: %s", id, st, want, res.Body)
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s has not ended: %s", id, res.Body)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// expectEventTypes fails unless the log holds at least one event of each type the
// records' setup makes, so the audit log and stream checks cover them.
func expectEventTypes(t *testing.T, events []loggedEvent) {
	t.Helper()
	held := map[string]bool{}
	for _, ev := range events {
		held[ev.Type] = true
	}
	for _, typ := range recordEventTypes {
		if !held[typ] {
			t.Errorf("the audit log holds no %s event", typ)
		}
	}
}

// ruleStatus is what a route of a record answers the reader by the rule: 403 where the
// route's gate refuses, 404 for a record it may not see, else 200.
func ruleStatus(gate, sees bool) int {
	switch {
	case !gate:
		return 403
	case !sees:
		return 404
	}
	return 200
}

// readAs reads path as r and checks the status the rule gives; it returns the response
// when it is a 200 as wanted, else nil.
func (e *streamEnv) readAs(t *testing.T, r reader, path string, want int) *response {
	t.Helper()
	res := e.do("GET", path, r.token, nil)
	if res.Status != want {
		t.Errorf("GET %s: %d, want %d; %s", path, res.Status, want, res.Body)
		return nil
	}
	if want != 200 {
		return nil
	}
	return res
}

// idsOf lists the ids of byID whose agent is a, or whose agent r sees when a is "".
func idsOf(byID map[string]string, r reader, a string) []string {
	var out []string
	for id, agent := range byID {
		if agent == a || a == "" && r.seesAgent(agent) {
			out = append(out, id)
		}
	}
	return out
}

// checkAgentRecords reads every agent's records as r.
func (e *streamEnv) checkAgentRecords(t *testing.T, r reader, rec *agentRecords) {
	for _, a := range rec.agents {
		e.checkAgentPages(t, r, rec, a)
		e.checkAnalysisOf(t, r, rec, a)
	}
	e.checkCampaigns(t, r, rec)
	convGate := r.holds(data.ModuleAgents) && r.scope(data.ScopeConversationsWrite)
	for id, a := range rec.convs {
		e.readAs(t, r, "/api/v1/conversations/"+id, ruleStatus(convGate, r.seesAgent(a)))
	}
	// The list shows exactly the conversations the show route shows, by the same rule.
	var wantConvs []string
	for id, a := range rec.convs {
		if r.seesAgent(a) {
			wantConvs = append(wantConvs, id)
		}
	}
	e.checkIDs(t, r, "GET /conversations", "/api/v1/conversations?per_page=100", convGate, wantConvs)
	// A job shows to whoever holds its module and sees its agent; to anyone else it is
	// not found, as another workspace's (docs/api.md, "Background work").
	for id, j := range rec.jobs {
		e.readAs(t, r, "/api/v1/jobs/"+id, map[bool]int{true: 200, false: 404}[r.reads(j.module) && r.seesAgent(j.agent)])
	}
	// A deleted record is not found by whoever passes its route's gate, nor 403 to
	// anyone else: its delete tells nobody more than an unknown id does.
	for path, module := range rec.gone {
		e.readAs(t, r, path, ruleStatus(r.reads(module), false))
	}
	e.checkExports(t, r, rec)
}

// checkAgentPages reads agent a, its knowledge, versions, rollout, publish gate, tests and
// runs (and each other agent's tests and runs under a's path, never found there).
func (e *streamEnv) checkAgentPages(t *testing.T, r reader, rec *agentRecords, a string) {
	// GET /agents/{agent_id} is open to the calls:runtime preset too (server/scopes.go).
	showGate := r.holds(data.ModuleAgents) && (r.scope(data.ReadScope(data.ModuleAgents)) || slices.Contains(r.scopes, data.ScopeCallsRuntime))
	e.readAs(t, r, "/api/v1/agents/"+a, ruleStatus(showGate, r.seesAgent(a)))
	base := "/api/v1/agents/" + a
	// The agent's knowledge is knowledge base data, of a visible agent (server/knowledge_bases.go).
	kbGate := r.holds(data.ModuleKnowledgeBase) && (r.scope(data.ReadScope(data.ModuleKnowledgeBase)) || slices.Contains(r.scopes, data.ScopeCallsRuntime))
	if res := e.do("POST", base+"/knowledge/query", r.token, map[string]any{"query": "parcel"}); res.Status != ruleStatus(kbGate, r.seesAgent(a)) {
		t.Errorf("POST %s/knowledge/query: %d, want %d; %s", base, res.Status, ruleStatus(kbGate, r.seesAgent(a)), res.Body)
	}
	gate, want := r.reads(data.ModuleAgents), ruleStatus(r.reads(data.ModuleAgents), r.seesAgent(a))
	if res := e.readAs(t, r, base+"/versions", want); res != nil && len(res.List()) != 2 {
		t.Errorf("%s/versions lists %d, want 2", base, len(res.List()))
	}
	for _, p := range []string{"/versions/1", "/versions/1/diff/current", "/rollout", "/publish-gate"} {
		e.readAs(t, r, base+p, want)
	}
	if res := e.readAs(t, r, base+"/tests?per_page=100", want); res != nil && !sameSet(itemIDs(res.List()), idsOf(rec.tests, r, a)) {
		t.Errorf("%s/tests: %v, want %v", base, itemIDs(res.List()), idsOf(rec.tests, r, a))
	}
	if res := e.readAs(t, r, base+"/test-runs?per_page=100", want); res != nil && !sameSet(itemIDs(res.List()), idsOf(rec.runs, r, a)) {
		t.Errorf("%s/test-runs: %v, want %v", base, itemIDs(res.List()), idsOf(rec.runs, r, a))
	}
	for id, owner := range rec.tests {
		e.readAs(t, r, base+"/tests/"+id, ruleStatus(gate, r.seesAgent(a) && owner == a))
	}
	for id, owner := range rec.runs {
		res := e.readAs(t, r, base+"/test-runs/"+id, ruleStatus(gate, r.seesAgent(a) && owner == a))
		if res == nil {
			continue
		}
		var results []string
		for _, x := range res.Data()["results"].([]any) {
			results = append(results, x.(map[string]any)["test_id"].(string))
		}
		if !sameSet(results, idsOf(rec.tests, r, a)) {
			t.Errorf("run %s has results of tests %v, want %v", id, results, idsOf(rec.tests, r, a))
		}
	}
}

// checkAnalysisOf reads agent a's analysis figures, its call analytics and its calls
// through the agent_id filter: a hidden agent has none, as an unknown one.
func (e *streamEnv) checkAnalysisOf(t *testing.T, r reader, rec *agentRecords, a string) {
	analytics := r.reads(data.ModuleAnalytics)
	res := e.readAs(t, r, "/api/v1/analytics/analysis?field="+rec.field[a]+"&agent_id="+a, ruleStatus(analytics, r.seesAgent(a)))
	if res != nil && res.Data()["count"] != 1.0 {
		t.Errorf("analysis figures of %s count %v, want 1", a, res.Data()["count"])
	}
	var calls []string
	if r.seesAgent(a) {
		calls = idsOf(rec.callAgent, r, a)
	}
	if res := e.readAs(t, r, "/api/v1/analytics/calls?agent_id="+a, ruleStatus(analytics, true)); res != nil {
		if n := res.Data()["totals"].(map[string]any)["calls"]; n != float64(len(calls)) {
			t.Errorf("analytics of %s count %v calls, want %d", a, n, len(calls))
		}
	}
	res = e.readAs(t, r, "/api/v1/calls?per_page=100&agent_id="+a, ruleStatus(r.reads(data.ModuleCallHistory), true))
	if res != nil && !sameSet(itemIDs(res.List()), calls) {
		t.Errorf("calls of %s: %v, want %v", a, itemIDs(res.List()), calls)
	}
}

// checkCampaigns reads the campaign list (whole and by agent), each campaign and its
// recipients.
func (e *streamEnv) checkCampaigns(t *testing.T, r reader, rec *agentRecords) {
	gate := r.reads(data.ModuleCallHistory)
	e.checkIDs(t, r, "GET /campaigns", "/api/v1/campaigns?per_page=100", gate, idsOf(rec.campaigns, r, ""))
	for _, a := range rec.agents {
		var want []string
		if r.seesAgent(a) {
			want = idsOf(rec.campaigns, r, a)
		}
		e.checkIDs(t, r, "GET /campaigns?agent_id="+a, "/api/v1/campaigns?per_page=100&agent_id="+a, gate, want)
	}
	for id, a := range rec.campaigns {
		want := ruleStatus(gate, r.seesAgent(a))
		e.readAs(t, r, "/api/v1/campaigns/"+id, want)
		if res := e.readAs(t, r, "/api/v1/campaigns/"+id+"/recipients?per_page=100", want); res != nil && !sameSet(itemIDs(res.List()), rec.recipients[id]) {
			t.Errorf("recipients of %s: %v, want %v", id, itemIDs(res.List()), rec.recipients[id])
		}
	}
}

// checkExports reads the NDJSON and CSV exports, whole and by agent: the calls of the
// agents the reader sees, and in the CSV one analysis.<name> column per field of those
// agents (a hidden agent's field names are its configuration).
func (e *streamEnv) checkExports(t *testing.T, r reader, rec *agentRecords) {
	gate := r.reads(data.ModuleCallHistory)
	for _, a := range append([]string{""}, rec.agents...) {
		filter, calls, columns := "", []string(nil), []string(nil)
		if a != "" {
			filter = "&agent_id=" + a
		}
		for _, b := range rec.agents {
			if (a == "" || a == b) && r.seesAgent(b) {
				calls = append(calls, idsOf(rec.callAgent, r, b)...)
				columns = append(columns, "analysis."+rec.field[b])
			}
		}
		if res := e.readAs(t, r, "/api/v1/calls/export?format=ndjson"+filter, ruleStatus(gate, true)); res != nil {
			var got []string
			for _, line := range strings.Split(strings.TrimSpace(string(res.Body)), "\n") {
				var c struct{ ID string }
				if line != "" && json.Unmarshal([]byte(line), &c) == nil {
					got = append(got, c.ID)
				}
			}
			if !sameSet(got, calls) {
				t.Errorf("NDJSON export%s: %v, want %v", filter, got, calls)
			}
		}
		if res := e.readAs(t, r, "/api/v1/calls/export?format=csv"+filter, ruleStatus(gate, true)); res != nil {
			if got := exportedIDs(t, res); !sameSet(got, calls) {
				t.Errorf("CSV export%s: %v, want %v", filter, got, calls)
			}
			if got := exportAnalysisColumns(t, res); !slices.Equal(got, columns) {
				t.Errorf("CSV export%s has analysis columns %v, want %v", filter, got, columns)
			}
		}
	}
}

// exportAnalysisColumns reads the analysis.<name> columns of a CSV export.
func exportAnalysisColumns(t *testing.T, res *response) []string {
	header, err := csv.NewReader(strings.NewReader(string(res.Body))).Read()
	if err != nil {
		t.Fatalf("the export is no CSV: %v %s", err, res.Body)
	}
	var out []string
	for _, h := range header {
		if strings.HasPrefix(h, "analysis.") {
			out = append(out, h)
		}
	}
	return out
}

// recordEventTypes are the event types the records' setup makes (expectEventTypes checks
// the log holds each).
var recordEventTypes = []string{data.EventAgentUpdated, data.EventAgentPublished, data.EventRolloutUpdated,
	data.EventAgentTestCreated, data.EventTestRunQueued, data.EventTestRunStarted, data.EventTestRunCompleted,
	data.EventCampaignCreated, data.EventCampaignStarted, data.EventCallAnalyzed,
	// The newest features' events (docs/events.md).
	data.EventAgentVersionDeleted, data.EventCampaignCanceled, data.EventCampaignDeleted, data.EventCallAnalysisFailed, data.EventJobFailed}

// checkAuditByType reads the audit log filtered by each of the records' event types: the
// filter narrows what the rule lets the reader see, never widens it.
func (e *streamEnv) checkAuditByType(t *testing.T, r reader, events []loggedEvent) {
	if !r.admin() || !r.scope(data.ScopeAuditRead) {
		return // the whole log's 403 is checked in checkEvents
	}
	for _, typ := range recordEventTypes {
		var want []string
		for _, ev := range events {
			if ev.Type == typ && r.seesEvent(ev) {
				want = append(want, ev.ID)
			}
		}
		if res := e.readAs(t, r, "/api/v1/audit-log?per_page=100&type="+typ, 200); res != nil && !slices.Equal(itemIDs(res.List()), want) {
			t.Errorf("audit log of %s: %v, want %v", typ, itemIDs(res.List()), want)
		}
	}
}

// mayHook reports whether r may manage a webhook for typ: it needs to read every event of
// the type, of every agent (docs/api.md, "What a caller sees"), so an event of the type
// about no agent in particular stands for them all once the reader is not limited to some.
func (r reader) mayHook(typ string) bool {
	return r.admin() && len(r.agents()) == 0 && r.scope(data.ScopeWebhooksWrite) && r.seesEvent(loggedEvent{Type: typ})
}

// checkWebhookTypes creates, as each reader, a webhook for each of the records' event
// types. Last, as each webhook created adds a security event to the log.
func (e *streamEnv) checkWebhookTypes(t *testing.T, readers []reader) {
	for _, r := range readers {
		for _, typ := range recordEventTypes {
			res := e.do("POST", "/api/v1/webhooks", r.token, map[string]any{"url": "https://hooks.example.com/" + typ, "events": []string{typ}})
			if want := map[bool]int{true: 201, false: 403}[r.mayHook(typ)]; res.Status != want {
				t.Errorf("%s: a webhook for %s: %d, want %d; %s", r.name, typ, res.Status, want, res.Body)
			}
		}
	}
}

// recordReaders are readers the random draw seldom makes: owners' and admins' keys that
// may manage webhooks yet read only one module of the records' events, a member limited
// to two agents, and a runtime's key narrowed to one (it reads agents and their knowledge,
// nothing else).
func recordReaders(agents []string) []reader {
	return []reader{
		{name: "owner's key with webhooks:write and agents:read", role: data.RoleOwner, scopes: []string{data.ScopeWebhooksWrite, data.ReadScope(data.ModuleAgents)}},
		{name: "admin key with webhooks write and call history read", role: data.RoleAdmin, scopes: []string{data.ScopeWebhooksWrite, data.ReadScope(data.ModuleCallHistory)}},
		{name: "developer limited to B and C", role: data.RoleDeveloper, modules: data.Modules, member: agents[1:]},
		{name: "developer runtime key narrowed to A", role: data.RoleDeveloper, modules: data.Modules, scopes: []string{data.ScopeCallsRuntime}, keyAgents: agents[:1]},
	}
}
