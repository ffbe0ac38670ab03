package client_test

import (
	"bytes"
	"context"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/client"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// tour calls the client against one real server; each method covers one group of routes.
type tour struct {
	t   *testing.T
	s   *testServer
	c   *client.Client
	ctx context.Context
}

func (tr *tour) check(what string, err error) {
	tr.t.Helper()
	if err != nil {
		tr.t.Fatalf("%s: %v", what, err)
	}
}

// TestEveryOperationAgainstServer calls every method of the client against a real server
// and checks each answer; at the end every operation of the route table must have
// reached the server, so none of them is a path the server does not route.
func TestEveryOperationAgainstServer(t *testing.T) {
	s := newServer(t, nil)
	tr := &tour{t: t, s: s, c: s.client(t), ctx: context.Background()}
	tr.operations()
	other := tr.accounts()
	ws := tr.workspaces(other)
	agent := tr.agents()
	kb := tr.knowledgeBases(agent)
	tr.exportImport(ws)
	tr.records(agent)
	hook := tr.webhooks()
	tr.eventStream()
	tr.conversations()
	tr.agentTests()
	tr.callStart(agent)
	tr.campaigns(agent)
	c, ctx, check := tr.c, tr.ctx, tr.check
	check("webhook delete", c.Webhooks.Delete(ctx, hook.ID))
	check("kb delete", c.KnowledgeBases.Delete(ctx, kb.ID))
	check("agent delete", c.Agents.Delete(ctx, agent.ID))

	if missing := sortedMissing(client.Operations(), s.covered()); len(missing) > 0 {
		t.Errorf("operations never sent to the server: %v", missing)
	}
	for _, line := range s.calls.all() {
		if strings.Contains(line, "{") {
			t.Errorf("a path template reached the server unfilled: %s", line)
		}
	}
}

func (tr *tour) operations() {
	t, c, ctx, check := tr.t, tr.c, tr.ctx, tr.check
	st, err := c.Operations.Health(ctx)
	check("health", err)
	if st != "ok" {
		t.Errorf("health = %q", st)
	}
	st, err = c.Operations.Ready(ctx)
	check("ready", err)
	if st != "ready" {
		t.Errorf("ready = %q", st)
	}
	m, err := c.Operations.Metrics(ctx)
	check("metrics", err)
	if !strings.Contains(m, "# TYPE") {
		t.Errorf("metrics is not a Prometheus exposition: %.80q", m)
	}
	doc, err := c.Operations.OpenAPI(ctx)
	check("openapi", err)
	if !bytes.Contains(doc, []byte(`"openapi"`)) {
		t.Errorf("openapi document: %.80q", doc)
	}
	var backup bytes.Buffer
	check("backup", c.Operations.Backup(ctx, &backup, true))
	if b := backup.Bytes(); len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		t.Errorf("the backup is not gzip (%d bytes)", len(b))
	}
}

func (tr *tour) accounts() *data.User {
	t, s, c, ctx, check := tr.t, tr.s, tr.c, tr.ctx, tr.check
	tok, err := c.Auth.Login(ctx, s.Email, s.Password, "")
	check("login", err)
	if tok.Token == "" || tok.Key == nil {
		t.Fatalf("login gave no token: %+v", tok)
	}
	session, _ := client.New(s.URL, client.WithToken(tok.Token))
	check("logout", session.Auth.Logout(ctx))
	_, _, err = session.Users.Me(ctx)
	mustErr(t, err, http.StatusUnauthorized)
	key, err := c.APIKeys.Create(ctx, data.APIKeyCreate{Name: "ci"})
	check("api key create", err)
	keys, err := client.Collect(c.APIKeys.All(ctx))
	check("api key list", err)
	if len(keys) < 2 {
		t.Errorf("api keys: %d", len(keys))
	}
	check("api key delete", c.APIKeys.Delete(ctx, key.Key.ID))
	key, err = c.APIKeys.Create(ctx, data.APIKeyCreate{Name: "departing"})
	check("api key create", err)
	wsKeys, err := client.Collect(c.Workspaces.AllAPIKeys(ctx, s.WorkspaceID))
	check("workspace api keys", err)
	if !slices.ContainsFunc(wsKeys, func(k *data.WorkspaceAPIKey) bool { return k.ID == key.Key.ID && k.UserID == s.UserID }) {
		t.Errorf("the workspace's keys lack the new one: %+v", wsKeys)
	}
	check("workspace api key revoke", c.Workspaces.RevokeAPIKey(ctx, s.WorkspaceID, key.Key.ID))
	departed, _ := client.New(s.URL, client.WithToken(key.Token))
	_, _, err = departed.Users.Me(ctx)
	mustErr(t, err, http.StatusUnauthorized)
	me, _, err := c.Users.Me(ctx)
	check("me", err)
	me, _, err = c.Users.UpdateMe(ctx, data.UserUpdate{Name: data.Some("Renamed")})
	check("me update", err)
	if me.Name != "Renamed" || me.Email != s.Email {
		t.Errorf("me after rename: %+v", me)
	}
	other, _, err := c.Users.Create(ctx, data.UserCreate{Name: "Other", Email: "other@example.com", Password: "other-password"})
	check("user create", err)
	got, _, err := c.Users.Get(ctx, other.ID)
	check("user show", err)
	if got.Email != "other@example.com" {
		t.Errorf("user show: %+v", got)
	}
	users, _, err := c.Users.List(ctx, data.PageRequest{})
	check("user list", err)
	if len(users) != 2 {
		t.Errorf("users: %d", len(users))
	}
	return other
}

func (tr *tour) workspaces(other *data.User) *data.Workspace {
	t, c, ctx, check := tr.t, tr.c, tr.ctx, tr.check
	ws, _, err := c.Workspaces.Create(ctx, data.WorkspaceCreate{Name: "Second"})
	check("workspace create", err)
	ws, etag, err := c.Workspaces.Get(ctx, ws.ID)
	check("workspace show", err)
	ws, _, err = c.Workspaces.Update(ctx, ws.ID, data.WorkspaceUpdate{Description: data.Some("for tests")}, client.IfMatch(etag))
	check("workspace update", err)
	if ws.Description != "for tests" || ws.Name != "Second" {
		t.Errorf("workspace after update: %+v", ws)
	}
	wss, _, err := c.Workspaces.List(ctx, data.PageRequest{})
	check("workspace list", err)
	if len(wss) != 2 {
		t.Errorf("workspaces: %d", len(wss))
	}
	_, _, err = c.Workspaces.AddUser(ctx, ws.ID, data.WorkspaceUserAdd{ID: other.ID, Role: data.RoleMember})
	check("workspace user add", err)
	wu, _, err := c.Workspaces.UpdateUser(ctx, ws.ID, other.ID, data.WorkspaceUserUpdate{Role: data.Some(data.RoleAdmin)})
	check("workspace user update", err)
	if wu.Role == nil || *wu.Role != data.RoleAdmin {
		t.Errorf("workspace user after update: %+v", wu)
	}
	_, _, err = c.Workspaces.GetUser(ctx, ws.ID, other.ID)
	check("workspace user show", err)
	members, _, err := c.Workspaces.ListUsers(ctx, ws.ID, data.PageRequest{})
	check("workspace user list", err)
	if len(members) != 2 {
		t.Errorf("members: %d", len(members))
	}
	check("workspace user remove", c.Workspaces.RemoveUser(ctx, ws.ID, other.ID))
	check("user delete", c.Users.Delete(ctx, other.ID))
	return ws
}

func (tr *tour) agents() *data.Agent {
	t, c, ctx, check := tr.t, tr.c, tr.ctx, tr.check
	agent, _, err := c.Agents.Create(ctx, client.AgentInput{Name: ptr("Support")})
	check("agent create", err)
	agent, etag, err := c.Agents.Get(ctx, agent.ID)
	check("agent show", err)
	agent, etag, err = c.Agents.Update(ctx, agent.ID, client.AgentInput{Patch: map[string]map[string]any{"call_config": {"ring_duration_ms": 20000}}}, client.IfMatch(etag))
	check("agent update", err)
	if agent.CallConfig.RingDurationMS != 20000 || agent.CallConfig.MaxCallDurationMS != data.DefaultMaxCallDurationMS {
		t.Errorf("a patch sets its member and keeps the others: %+v", agent.CallConfig)
	}
	check("publish", c.Agents.Publish(ctx, agent.ID, ptr("first"), client.IfMatch(etag)))
	versions, err := client.Collect(c.Agents.AllVersions(ctx, agent.ID))
	check("versions", err)
	if len(versions) != 1 || versions[0].Description == nil || *versions[0].Description != "first" {
		t.Fatalf("versions: %+v", versions)
	}
	v, _, err := c.Agents.GetVersion(ctx, agent.ID, 1)
	check("version show", err)
	if v.CallConfig.RingDurationMS != 20000 {
		t.Errorf("version 1: %+v", v.CallConfig)
	}
	_, _, err = c.Agents.Update(ctx, agent.ID, client.AgentInput{Name: ptr("Support 2")})
	check("agent rename", err)
	changes, err := c.Agents.DiffVersions(ctx, agent.ID, 1, 0)
	check("diff", err)
	if len(changes) != 1 || changes[0].Path != "name" {
		t.Errorf("diff to current: %+v", changes)
	}
	agent, _, err = c.Agents.RestoreVersion(ctx, agent.ID, 1)
	check("restore", err)
	if agent.Name != "Support" {
		t.Errorf("restored name: %q", agent.Name)
	}
	if err := c.Agents.DeleteVersion(ctx, agent.ID, 1); !client.IsCode(err, data.ECONFLICT) {
		t.Errorf("deleting the published version: %v, want %s", err, data.ECONFLICT)
	}
	if err := c.Agents.DeleteVersion(ctx, agent.ID, 7); !client.IsCode(err, data.ENOTFOUND) {
		t.Errorf("deleting a version never published: %v, want %s", err, data.ENOTFOUND)
	}
	cat, err := c.Agents.Catalog(ctx)
	check("catalog", err)
	if cat == nil {
		t.Error("no catalog")
	}
	agents, _, err := c.Agents.List(ctx, client.AgentFilter{Status: data.AgentStatusPublished}, data.PageRequest{})
	check("agent list", err)
	if len(agents) != 1 {
		t.Errorf("published agents: %d", len(agents))
	}
	return agent
}

func (tr *tour) knowledgeBases(agent *data.Agent) *data.KnowledgeBase {
	t, c, ctx, check := tr.t, tr.c, tr.ctx, tr.check
	kb, _, err := c.KnowledgeBases.Create(ctx, data.KnowledgeBaseCreate{Name: "Docs", Texts: []data.TextInput{{Title: "hours", Content: "We are open from nine to five on weekdays."}}})
	check("kb create", err)
	kb, _, err = c.KnowledgeBases.AddSources(ctx, kb.ID, data.SourcesAdd{
		Files: []data.FileUpload{{Filename: "refunds.md", Content: []byte("# Refunds\n\nRefunds take fourteen days to reach your account.\n")}},
		URLs:  []string{"https://example.com/faq"},
	})
	check("sources add (multipart)", err)
	if len(kb.Files) != 1 || len(kb.URLs) != 1 || kb.Files[0].Status != data.SourceIndexed {
		t.Fatalf("sources after add: files %+v urls %+v", kb.Files, kb.URLs)
	}
	// The url's fetch job (no runner runs here: it stays queued), read by its id.
	var jobs []*data.JobRecord
	check("jobs", tr.s.DB.View(ctx, func(tx service.Tx) (err error) {
		jobs, _, err = tx.Jobs(tr.s.WorkspaceID, data.PageRequest{})
		return err
	}))
	if len(jobs) != 1 {
		t.Fatalf("jobs after adding a url: %+v", jobs)
	}
	job, _, err := c.Jobs.Get(ctx, jobs[0].ID)
	check("job show", err)
	if job.Kind != service.JobKindFetchURL || job.Status != data.JobQueued {
		t.Errorf("job show: %+v", job)
	}
	listed, _, err := c.Jobs.List(ctx, data.JobFilter{Kind: service.JobKindFetchURL, Status: data.JobQueued}, data.PageRequest{PerPage: 1})
	check("job list", err)
	if len(listed) != 1 || listed[0].ID != job.ID {
		t.Errorf("job list: %+v", listed)
	}
	content, ctype, err := c.KnowledgeBases.FileContent(ctx, kb.ID, kb.Files[0].ID)
	check("file content", err)
	if !strings.Contains(string(content), "fourteen days") || ctype == "" {
		t.Errorf("file content %q (%s)", content, ctype)
	}
	kb, _, err = c.KnowledgeBases.AddSources(ctx, kb.ID, data.SourcesAdd{Texts: []data.TextInput{{Title: "phone", Content: "Call us on weekdays."}}})
	check("sources add (json)", err)
	chunks, err := c.KnowledgeBases.Query(ctx, kb.ID, data.KnowledgeQuery{Query: "refund days"})
	check("kb query", err)
	if len(chunks) == 0 || !strings.Contains(chunks[0].Text, "fourteen") {
		t.Errorf("kb query: %+v", chunks)
	}
	_, _, err = c.KnowledgeBases.RefetchURL(ctx, kb.ID, kb.URLs[0].ID)
	check("refetch", err)
	kb, etag, err := c.KnowledgeBases.DeleteSource(ctx, kb.ID, data.SourceURLs, kb.URLs[0].ID)
	check("source delete", err)
	kb, _, err = c.KnowledgeBases.Update(ctx, kb.ID, data.KnowledgeBaseUpdate{Name: data.Some("Help")}, client.IfMatch(etag))
	check("kb update", err)
	shown, _, err := c.KnowledgeBases.Get(ctx, kb.ID)
	check("kb show", err)
	if !shown.Access.Write {
		t.Errorf("kb show: the owner may not change it (access %+v)", shown.Access)
	}
	kbs, _, err := c.KnowledgeBases.List(ctx, data.PageRequest{})
	check("kb list", err)
	if len(kbs) != 1 || kbs[0].Name != "Help" {
		t.Errorf("kb list: %+v", kbs)
	}
	_, _, err = c.Agents.Update(ctx, agent.ID, client.AgentInput{Patch: map[string]map[string]any{"llm_config": {"knowledge_base_ids": []string{kb.ID}}}})
	check("agent kb", err)
	_, err = c.Agents.QueryKnowledge(ctx, agent.ID, data.AgentKnowledgeQuery{Query: "opening hours"})
	check("agent knowledge query", err)
	return kb
}

func (tr *tour) exportImport(ws *data.Workspace) {
	t, s, c, ctx, check := tr.t, tr.s, tr.c, tr.ctx, tr.check
	exp, err := c.Workspaces.Export(ctx, s.WorkspaceID, false)
	check("export", err)
	imp, err := c.Workspaces.Import(ctx, ws.ID, exp)
	check("import", err)
	if len(imp.Result.Agents) != 1 || len(imp.Result.KnowledgeBases) != 1 {
		t.Errorf("import result: %+v", imp.Result)
	}
	check("workspace delete", c.Workspaces.Delete(ctx, ws.ID))
}

// records covers numbers, calls, the subscription, prices, analysis and the audit log.
func (tr *tour) records(agent *data.Agent) {
	num := tr.numbers(agent)
	tr.calls(agent)
	tr.check("number delete", tr.c.Numbers.Delete(tr.ctx, num.ID))
	tr.pricedAnalysis(agent)
	tr.audit()
}

// numbers creates a number bound to agent, unbinds it, reads and lists it.
func (tr *tour) numbers(agent *data.Agent) *data.Number {
	t, c, ctx, check := tr.t, tr.c, tr.ctx, tr.check
	num, _, err := c.Numbers.Create(ctx, data.NumberCreate{PhoneNumber: "+14155550100", Provider: data.ProviderTwilio, InboundAgentID: &agent.ID})
	check("number create", err)
	num, _, err = c.Numbers.Update(ctx, num.ID, data.NumberUpdate{InboundAgentID: data.Some[*string](nil), Nickname: data.Some("front desk")})
	check("number update", err)
	if num.InboundAgentID != nil || num.Nickname != "front desk" {
		t.Errorf("a set null unbinds: %+v", num)
	}
	shownNum, _, err := c.Numbers.Get(ctx, num.ID)
	check("number show", err)
	if !shownNum.Access.Write || !shownNum.Access.Dial {
		t.Errorf("number show: the owner may not change it or dial from it (access %+v)", shownNum.Access)
	}
	nums, _, err := c.Numbers.List(ctx, data.NumberFilter{}, data.PageRequest{})
	check("number list", err)
	if len(nums) != 1 {
		t.Errorf("numbers: %d", len(nums))
	} else if nums[0].Access != shownNum.Access {
		t.Errorf("number list: access %+v, the show's %+v (the list's access by id kept on each number)", nums[0].Access, shownNum.Access)
	}
	return num
}

// calls registers a call of agent, searches, exports, updates, reads and lists it,
// reads the analytics, and deletes it.
func (tr *tour) calls(agent *data.Agent) {
	t, c, ctx, check := tr.t, tr.c, tr.ctx, tr.check
	call, _, err := c.Calls.Register(ctx, data.CallCreate{AgentID: agent.ID, Direction: data.DirectionWeb,
		Transcript: []data.TranscriptItem{{Role: "user", Content: "Please cancel my order.", StartMS: 0}}})
	check("call register", err)
	hits, _, err := c.Calls.Search(ctx, data.CallFilter{}, "cancel order", data.SortRelevance, data.PageRequest{})
	check("call search", err)
	if len(hits) != 1 || hits[0].ID != call.ID || hits[0].Search == nil || hits[0].Search.Snippet != "Please cancel my order." {
		t.Errorf("search hits: %+v", hits)
	}
	var exported bytes.Buffer
	res, err := c.Calls.Export(ctx, client.CallExport{Q: "cancel", Format: "csv"}, &exported)
	check("call export", err)
	if res.Count != 1 || res.Cursor != "" || !strings.HasPrefix(exported.String(), "id,workspace_id,") || !strings.Contains(exported.String(), call.ID) {
		t.Errorf("export %+v: %q", res, exported.String())
	}
	call, _, err = c.Calls.Update(ctx, call.ID, data.CallUpdate{Status: data.Some(data.CallEnded), DurationMS: data.Some[int64](61000)})
	check("call update", err)
	if call.Status != data.CallEnded {
		t.Errorf("call status %q", call.Status)
	}
	_, _, err = c.Calls.Get(ctx, call.ID)
	check("call show", err)
	calls, err := client.Collect(c.Calls.All(ctx, data.CallFilter{AgentID: agent.ID}))
	check("call list", err)
	if len(calls) != 1 {
		t.Errorf("calls: %d", len(calls))
	}
	an, err := c.Analytics.Calls(ctx, data.CallAnalyticsQuery{From: time.Now().Add(-time.Hour), To: time.Now().Add(time.Hour), Interval: data.IntervalHour})
	check("analytics", err)
	if an.Totals.Calls != 1 {
		t.Errorf("analytics totals: %+v", an.Totals)
	}
	check("call delete", c.Calls.Delete(ctx, call.ID))
}

// pricedAnalysis reads the subscription, sets the price table, and registers a priced
// call of agent, analysed, whose figures, analysis job and backfill are read back.
func (tr *tour) pricedAnalysis(agent *data.Agent) {
	t, c, ctx, check := tr.t, tr.c, tr.ctx, tr.check
	sub, _, err := c.Subscription.Get(ctx)
	check("subscription", err)
	if sub == nil {
		t.Error("no subscription")
	}
	price := data.Money(590_000)
	prices, etag, err := c.Prices.Set(ctx, data.PriceTableSet{Currency: "USD", Prices: []data.PriceSet{
		{Provider: "groq", Model: data.AnyModel, Unit: data.UnitLLMInput, Price: &price}}})
	check("price table set", err)
	if got, again, err := c.Prices.Get(ctx); err != nil || again != etag || len(got.Prices) != 1 || got.Prices[0].Price != price {
		t.Errorf("price table %+v (%s, %v), set %+v (%s)", got, again, err, prices, etag)
	}
	_, _, err = c.Agents.Update(ctx, agent.ID, client.AgentInput{Patch: map[string]map[string]any{"analysis_config": {"summary": true}}})
	check("analysis_config update", err)
	check("publish with analysis", c.Agents.Publish(ctx, agent.ID, nil))
	priced, _, err := c.Calls.Register(ctx, data.CallCreate{AgentID: agent.ID, Direction: data.DirectionWeb,
		Analysis: map[string]any{"call_successful": true},
		Usage:    &data.CallUsageInput{LLM: []data.LLMUsage{{Provider: "groq", Model: "llama-3.3-70b-versatile", InputTokens: 2000}}}})
	check("a call with usage", err)
	if priced.Cost == nil || priced.Cost.TotalMicros != 1180 || *priced.AnalysisSource != data.AnalysisRuntime {
		t.Errorf("cost %+v, analysis source %v", priced.Cost, priced.AnalysisSource)
	}
	figures, err := c.Analytics.Analysis(ctx, data.AnalysisQuery{AgentID: agent.ID, Field: data.AnalysisKeySuccessful})
	check("analysis figures", err)
	if figures.Success.Judged != 1 || figures.Values["true"] != 1 {
		t.Errorf("analysis figures %+v", figures)
	}
	// Post-call analysis: queued as jobs (no runner runs here), read back.
	job, err := c.Calls.Analyze(ctx, priced.ID)
	check("call analyze", err)
	if job, _, err = c.Jobs.Get(ctx, job.ID); err != nil || job.Kind != "analysis.call" || job.Status != data.JobQueued {
		t.Errorf("analysis job %+v, %v", job, err)
	}
	backfill, err := c.Agents.BackfillAnalysis(ctx, agent.ID, data.AnalysisBackfill{From: data.NewTime(time.Now().Add(-time.Hour)), To: data.NewTime(time.Now().Add(time.Hour))})
	check("analysis backfill", err)
	if backfill.Kind != "analysis.backfill" {
		t.Errorf("backfill job %+v", backfill)
	}
	check("priced call delete", c.Calls.Delete(ctx, priced.ID))
}

// audit lists, heads and verifies the audit log.
func (tr *tour) audit() {
	t, c, ctx, check := tr.t, tr.c, tr.ctx, tr.check
	events, _, err := c.Audit.List(ctx, data.AuditFilter{Type: "agent.created"}, data.PageRequest{})
	check("audit", err)
	if len(events) == 0 {
		t.Error("no agent.created event in the audit log")
	}
	head, err := c.Audit.Head(ctx)
	check("audit head", err)
	if head == nil || reflect.ValueOf(*head).IsZero() {
		t.Errorf("audit head: %+v", head)
	}
	verified, err := c.Audit.Verify(ctx)
	check("audit verify", err)
	if verified == nil || !verified.Intact || verified.Checked == 0 || len(verified.Problems) != 0 {
		t.Errorf("audit verify: %+v", verified)
	}
}

func (tr *tour) webhooks() *data.Webhook {
	t, c, ctx, check := tr.t, tr.c, tr.ctx, tr.check
	types, err := c.Webhooks.EventTypes(ctx)
	check("webhook event types", err)
	if types == nil || !slices.Equal(types.Types, data.EventTypes) || len(types.Withheld) != 0 {
		t.Errorf("an owner's webhook event types: %+v", types)
	}
	wh, err := c.Webhooks.Create(ctx, data.WebhookCreate{URL: "https://example.com/hook", Events: []string{"*"}})
	check("webhook create", err)
	if !strings.HasPrefix(wh.Secret, "whsec_") {
		t.Errorf("secret %q", wh.Secret)
	}
	rot, err := c.Webhooks.RotateSecret(ctx, wh.Webhook.ID, client.IfMatch(wh.ETag))
	check("rotate", err)
	if rot.Secret == wh.Secret || !strings.HasPrefix(rot.Secret, "whsec_") {
		t.Errorf("rotated secret %q", rot.Secret)
	}
	_, _, err = c.Webhooks.Update(ctx, wh.Webhook.ID, data.WebhookUpdate{Description: data.Some("ops")})
	check("webhook update", err)
	hook, _, err := c.Webhooks.Get(ctx, wh.Webhook.ID)
	check("webhook show", err)
	if hook.Description != "ops" || hook.URL != "https://example.com/hook" {
		t.Errorf("webhook: %+v", hook)
	}
	ev, err := c.Webhooks.Test(ctx, hook.ID)
	check("webhook test", err)
	if ev.Type != data.EventWebhookTest {
		t.Errorf("test event type %q", ev.Type)
	}
	rep, err := c.Webhooks.Replay(ctx, hook.ID, data.WebhookReplay{From: data.NewTime(time.Now().Add(-time.Hour)), To: data.NewTime(time.Now().Add(time.Minute))})
	check("replay", err)
	if rep.Count == 0 {
		t.Error("replay queued nothing")
	}
	deliveries, err := client.Collect(c.Webhooks.AllDeliveries(ctx, hook.ID))
	check("deliveries", err)
	if len(deliveries) == 0 {
		t.Fatal("no deliveries")
	}
	// A pending delivery cannot be retried: 409 — the route exists and answered.
	_, err = c.Webhooks.RetryDelivery(ctx, hook.ID, deliveries[0].ID)
	mustErr(t, err, http.StatusConflict)
	hooks, _, err := c.Webhooks.List(ctx, data.PageRequest{})
	check("webhook list", err)
	if len(hooks) != 1 {
		t.Errorf("webhooks: %d", len(hooks))
	}
	return hook
}
