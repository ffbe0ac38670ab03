package server_test

import (
	"cmp"
	"encoding/csv"
	"fmt"
	"math/rand/v2"
	"net/url"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
)

// reader is a random principal of the property test: a member (role, modules, agent_ids)
// reading through an API key (scopes, agent_ids) it made itself.
type reader struct {
	name      string
	role      string
	modules   []string // as stored; owners and admins hold all five anyway
	member    []string // the membership's agent_ids ([]: every agent)
	scopes    []string // the key's; nil for a key with its user's rights
	keyAgents []string // the key's agent_ids
	token     string
}

// The rule as docs/api.md ("What a caller sees") states it, written here again on its own
// so that the test does not read the code it checks.

func (r reader) holds(module string) bool {
	return r.role == data.RoleOwner || r.role == data.RoleAdmin || slices.Contains(r.modules, module)
}

func (r reader) scope(s string) bool {
	if r.scopes == nil || slices.Contains(r.scopes, s) {
		return true
	}
	base, isRead := strings.CutSuffix(s, ":read")
	return isRead && slices.Contains(r.scopes, base+":write")
}

// agents is the effective agent limit: empty for every agent.
func (r reader) agents() []string {
	switch {
	case len(r.keyAgents) == 0:
		return r.member
	case len(r.member) == 0:
		return r.keyAgents
	}
	var out []string
	for _, a := range r.keyAgents {
		if slices.Contains(r.member, a) {
			out = append(out, a)
		}
	}
	if out == nil {
		out = []string{data.NoAgent}
	}
	return out
}

func (r reader) seesAgent(id string) bool {
	return len(r.agents()) == 0 || slices.Contains(r.agents(), id)
}
func (r reader) reads(module string) bool { return r.holds(module) && r.scope(data.ReadScope(module)) }
func (r reader) admin() bool              { return r.role == data.RoleOwner || r.role == data.RoleAdmin }
func (r reader) audits() bool {
	return r.admin() && len(r.agents()) == 0 && r.scope(data.ScopeAuditRead)
}

// seesEvent is the rule for an event: its record's, or the audit log's for the rest.
func (r reader) seesEvent(e loggedEvent) bool {
	switch {
	// An agent's own events name it as id; its rollout's, tests' and runs' as agent_id.
	case strings.HasPrefix(e.Type, "agent.") || strings.HasPrefix(e.Type, "agent_test.") || strings.HasPrefix(e.Type, "test_run."):
		return r.reads(data.ModuleAgents) && r.seesAgent(cmp.Or(e.Data["agent_id"], e.Data["id"]))
	// A campaign is of the call_history module, as its calls are (docs/campaigns.md).
	case strings.HasPrefix(e.Type, "call.") || strings.HasPrefix(e.Type, "campaign."):
		return r.reads(data.ModuleCallHistory) && r.seesAgent(e.Data["agent_id"])
	case strings.HasPrefix(e.Type, "knowledge_base."):
		return r.reads(data.ModuleKnowledgeBase)
	case strings.HasPrefix(e.Type, "number."):
		return r.reads(data.ModulePhoneNumbers)
	// A failed job is read as GET /jobs reads it: its kind's module, its agent when it
	// has one. Its type alone (a webhook's) needs every kind's module and every agent.
	case e.Type == data.EventJobFailed:
		if e.Data["kind"] == "" {
			return len(r.agents()) == 0 && r.reads(data.ModuleAgents) && r.reads(data.ModuleKnowledgeBase) && r.reads(data.ModuleCallHistory)
		}
		module := data.ModuleCallHistory // analysis.*, campaign.start
		switch {
		case strings.HasPrefix(e.Data["kind"], "knowledge_base."):
			module = data.ModuleKnowledgeBase
		case strings.HasPrefix(e.Data["kind"], "agent."):
			module = data.ModuleAgents
		}
		return r.reads(module) && (e.Data["agent_id"] == "" || r.seesAgent(e.Data["agent_id"]))
	}
	return r.audits()
}

// carriesEverything: may the reader manage a webhook for every event type.
func (r reader) carriesEverything() bool {
	if !r.admin() || len(r.agents()) > 0 || !r.scope(data.ScopeWebhooksWrite) || !r.scope(data.ScopeAuditRead) {
		return false
	}
	for _, m := range []string{data.ModuleAgents, data.ModuleKnowledgeBase, data.ModulePhoneNumbers, data.ModuleCallHistory} {
		if !r.scope(data.ReadScope(m)) {
			return false
		}
	}
	return true
}

// loggedEvent is an event as the audit log lists it, with the members of its data the rule
// reads.
type loggedEvent struct {
	ID, Type string
	Data     map[string]string
}

// randomReader draws a member and a key of it.
func randomReader(rng *rand.Rand, i int, agents []string) reader {
	r := reader{name: fmt.Sprintf("reader%d", i), role: []string{data.RoleAdmin, data.RoleDeveloper, data.RoleMember}[rng.IntN(3)]}
	subset := func(of []string) []string {
		var out []string
		for _, x := range of {
			if rng.IntN(2) == 0 {
				out = append(out, x)
			}
		}
		return out
	}
	r.modules = subset(data.Modules)
	if r.role != data.RoleAdmin && rng.IntN(2) == 0 {
		r.member = subset(agents)
	}
	if rng.IntN(3) > 0 {
		r.scopes = subset(data.Scopes)
		if len(r.scopes) == 0 {
			r.scopes = []string{data.Scopes[rng.IntN(len(data.Scopes))]}
		}
	}
	if rng.IntN(2) == 0 {
		within := agents
		if len(r.member) > 0 {
			within = r.member
		}
		r.keyAgents = subset(within)
	}
	return r
}

// TestEveryChannelShowsWhatTheRuleAllows: for random principals (role, modules, agent_ids,
// the key's scopes and agent_ids) over a workspace of agents, calls, a knowledge base, a
// number, security events and each agent's own records (privilege_records_test.go:
// versions, a rollout, tests and runs, a conversation, a campaign, analysis, jobs), every
// channel shows exactly what the rule allows: the agent list, the call list, search, show,
// the CSV and NDJSON exports, analytics, every route of the agents' records, the audit
// log, the live event stream (403 where the route refuses), and creating a webhook for
// every event.
func TestEveryChannelShowsWhatTheRuleAllows(t *testing.T) {
	e, stand := newRecordsEnv(t)
	ws := e.Owner.WorkspaceID
	agents := []string{e.newAgent("A"), e.newAgent("B"), e.newAgent("C")}
	expect(t, e.do("POST", "/api/v1/knowledge-bases", e.Owner.Token, map[string]any{"name": "KB"}), 201)
	expect(t, e.do("POST", "/api/v1/numbers", e.Owner.Token, map[string]any{"phone_number": "+14155550100", "provider": "twilio"}), 201)
	callAgent := map[string]string{}
	for i, a := range append(slices.Clone(agents), agents...) {
		r := e.do("POST", "/api/v1/calls", e.Owner.Token, map[string]any{"agent_id": a, "direction": "web", "status": "ended",
			"disconnection_reason": "user_hangup", "transcript": []map[string]any{{"role": "user", "content": fmt.Sprintf("where is my parcel number %d", i)}}})
		expect(t, r, 201)
		callAgent[r.Data()["id"].(string)] = a
	}
	records := e.makeAgentRecords(t, stand, agents, callAgent)

	rng := rand.New(rand.NewPCG(23, 2026))
	readers := []reader{
		// The two: a member limited to an agent, and an owner's key narrowed to
		// an agent reading the audit log and the stream.
		{name: "member limited to A", role: data.RoleMember, modules: data.Modules, member: agents[:1]},
		{name: "owner's key narrowed to A with audit:read", role: data.RoleOwner, scopes: []string{data.ScopeAuditRead, data.ReadScope(data.ModuleCallHistory)}, keyAgents: agents[:1]},
		{name: "owner's key with audit:read alone", role: data.RoleOwner, scopes: []string{data.ScopeAuditRead}},
		{name: "owner", role: data.RoleOwner},
	}
	readers = append(readers, recordReaders(agents)...)
	for i := range 40 {
		readers = append(readers, randomReader(rng, i, agents))
	}
	for i := range readers {
		readers[i].token = e.readerToken(&readers[i], ws)
	}

	events := e.auditLog(e.Owner.Token)
	if len(events) < 30 {
		t.Fatalf("the owner's audit log lists %d events; the setup made more", len(events))
	}
	expectEventTypes(t, events)
	first := events[len(events)-1].ID // the oldest: streams start after it
	for _, r := range readers {
		t.Run(r.name, func(t *testing.T) {
			t.Logf("%+v", r)
			e.checkLists(t, r, agents, callAgent)
			e.checkEvents(t, r, events, first)
			e.checkAgentRecords(t, r, records)
			e.checkAuditByType(t, r, events)
		})
	}
	// Last, as each webhook created adds a security event to the log read above.
	for _, r := range readers {
		res := e.do("POST", "/api/v1/webhooks", r.token, map[string]any{"url": "https://hooks.example.com/" + url.PathEscape(r.name), "events": []string{"*"}})
		if want := map[bool]int{true: 201, false: 403}[r.carriesEverything()]; res.Status != want {
			t.Errorf("%s: a webhook for every event: %d, want %d; %s", r.name, res.Status, want, res.Body)
		}
	}
	e.checkWebhookTypes(t, readers)
}

// readerToken makes r a member of ws (the owner's reader uses the owner's membership) and
// returns the token of a key r makes itself through the API.
func (e *streamEnv) readerToken(r *reader, ws string) string {
	e.t.Helper()
	user := e.Owner.Token
	if r.role != data.RoleOwner {
		// The key is made while the user is an owner, then the membership narrows to the
		// reader's: a key holds only scopes its creator could use when it was made
		// (data.GivesScope), and these keys hold any, as a demoted user's keys do.
		u := e.User(e.t, strings.ReplaceAll(r.name, " ", "-")+"@example.com")
		owner := testkit.AsRole(&data.User{ID: e.Owner.ID}, ws, data.RoleOwner)
		if _, err := e.Svc.WorkspaceUsers.AddWorkspaceUser(owner, ws, data.WorkspaceUserAdd{ID: u.ID, Role: data.RoleOwner}); err != nil {
			e.t.Fatalf("%s: %v", r.name, err)
		}
		token := e.readerKey(r, e.Token(e.t, u, ws))
		in := data.WorkspaceUserUpdate{Role: data.Some(r.role), Modules: data.Some(r.modules), AgentIDs: data.Some(r.member)}
		if r.modules == nil {
			in.Modules = data.Some([]string{})
		}
		if r.member == nil {
			in.AgentIDs = data.Some([]string{})
		}
		if _, err := e.Svc.WorkspaceUsers.UpdateWorkspaceUser(owner, ws, u.ID, in); err != nil {
			e.t.Fatalf("%s: %v", r.name, err)
		}
		return token
	}
	return e.readerKey(r, user)
}

// readerKey makes r's key (its scopes and agent_ids) with user's token.
func (e *streamEnv) readerKey(r *reader, user string) string {
	e.t.Helper()
	body := map[string]any{"name": r.name}
	if r.scopes != nil {
		body["scopes"] = r.scopes
	}
	if len(r.keyAgents) > 0 {
		body["agent_ids"] = r.keyAgents
	}
	res := e.do("POST", "/api/v1/api-keys", user, body)
	expect(e.t, res, 201)
	return res.JSON()["token"].(string)
}

// checkLists checks the agent list, the call list, search, show, the CSV export and
// analytics against the rule.
func (e *streamEnv) checkLists(t *testing.T, r reader, agents []string, callAgent map[string]string) {
	var wantAgents, wantCalls []string
	for _, a := range agents {
		if r.seesAgent(a) {
			wantAgents = append(wantAgents, a)
		}
	}
	for id, a := range callAgent {
		if r.seesAgent(a) {
			wantCalls = append(wantCalls, id)
		}
	}
	agentsGate := r.holds(data.ModuleAgents) && (r.scope(data.ReadScope(data.ModuleAgents)) || slices.Contains(r.scopes, data.ScopeCallsRuntime))
	e.checkIDs(t, r, "GET /agents", "/api/v1/agents?per_page=100", agentsGate, wantAgents)
	callsGate := r.reads(data.ModuleCallHistory)
	e.checkIDs(t, r, "GET /calls", "/api/v1/calls?per_page=100", callsGate, wantCalls)
	e.checkIDs(t, r, "search", "/api/v1/calls?q=parcel&per_page=100", callsGate, wantCalls)
	for id, a := range callAgent {
		want := map[bool]int{true: 200, false: 404}[r.seesAgent(a)]
		if !callsGate {
			want = 403
		}
		if res := e.do("GET", "/api/v1/calls/"+id, r.token, nil); res.Status != want {
			t.Errorf("GET /calls/%s (agent %s): %d, want %d", id, a, res.Status, want)
		}
	}
	res := e.do("GET", "/api/v1/calls/export?format=csv", r.token, nil)
	if got := exportedIDs(t, res); callsGate && res.Status == 200 {
		if !sameSet(got, wantCalls) {
			t.Errorf("CSV export: %v, want %v", got, wantCalls)
		}
	} else if callsGate || res.Status != 403 {
		t.Errorf("CSV export: %d, want %d", res.Status, map[bool]int{true: 200, false: 403}[callsGate])
	}
	from := url.QueryEscape(time.Now().Add(-time.Hour).UTC().Format(time.RFC3339))
	res = e.do("GET", "/api/v1/analytics/calls?interval=hour&from="+from, r.token, nil)
	switch analyticsGate := r.reads(data.ModuleAnalytics); {
	case !analyticsGate && res.Status != 403:
		t.Errorf("analytics: %d, want 403", res.Status)
	case analyticsGate && res.Status != 200:
		t.Errorf("analytics: %d %s, want 200", res.Status, res.Body)
	case analyticsGate:
		if n := res.Data()["totals"].(map[string]any)["calls"]; n != float64(len(wantCalls)) {
			t.Errorf("analytics counts %v calls, want %d", n, len(wantCalls))
		}
	}
}

// checkIDs checks a list route: 403 where the gate refuses, else exactly want.
func (e *streamEnv) checkIDs(t *testing.T, r reader, name, path string, gate bool, want []string) {
	res := e.do("GET", path, r.token, nil)
	if !gate {
		if res.Status != 403 {
			t.Errorf("%s: %d, want 403", name, res.Status)
		}
		return
	}
	if res.Status != 200 {
		t.Errorf("%s: %d %s, want 200", name, res.Status, res.Body)
		return
	}
	if got := itemIDs(res.List()); !sameSet(got, want) {
		t.Errorf("%s: %v, want %v", name, got, want)
	}
}

// checkEvents checks the audit log and the live event stream against the rule, over
// every event of the workspace (events, newest first, as the owner's log lists them).
func (e *streamEnv) checkEvents(t *testing.T, r reader, events []loggedEvent, first string) {
	var want []string
	for _, ev := range events {
		if r.seesEvent(ev) {
			want = append(want, ev.ID)
		}
	}
	auditGate := r.admin() && r.scope(data.ScopeAuditRead)
	if res := e.do("GET", "/api/v1/audit-log?per_page=1", r.token, nil); !auditGate {
		if res.Status != 403 {
			t.Errorf("audit log: %d, want 403", res.Status)
		}
	} else if got := eventIDs(e.auditLog(r.token)); !slices.Equal(got, want) {
		t.Errorf("audit log: %d events %v\nwant %d %v", len(got), got, len(want), want)
	}

	c, res := e.tryStream(r.token, "last_event_id="+first)
	if !r.scope(data.ScopeAuditRead) {
		if c != nil || res.Status != 403 {
			t.Errorf("the event stream opened, want 403")
		}
		return
	}
	// A position is an event the caller sees: resuming from one it may not see is
	// answered as from an unknown id (issue 23), so streams resume from the oldest it sees.
	if !slices.Contains(want, first) {
		_, unknown := e.tryStream(r.token, "last_event_id=evt_00000000000000000000000000")
		if c != nil || res.Status != unknown.Status || string(res.Body) != string(unknown.Body) {
			t.Fatalf("resuming after an event the caller may not see: %d %s, want as an unknown id: %d %s", res.Status, res.Body, unknown.Status, unknown.Body)
		}
		if len(want) == 0 {
			return
		}
		c, res = e.tryStream(r.token, "last_event_id="+want[len(want)-1])
	}
	wantStream := want[:max(len(want)-1, 0)]
	if c == nil {
		t.Errorf("the event stream: %d %s, want it open", res.Status, res.Body)
		return
	}
	defer c.kill()
	// Everything the log holds goes out before the first heartbeat.
	var got []string
	for m := c.nextAny(); m.comment != "heartbeat"; m = c.nextAny() {
		if m.comment == "" {
			got = append([]string{m.id}, got...) // newest first, as want
		}
	}
	if !slices.Equal(got, wantStream) {
		t.Errorf("event stream: %d events %v\nwant %d %v", len(got), got, len(wantStream), wantStream)
	}
}

// auditLog reads the whole audit log as token, newest first.
func (e *streamEnv) auditLog(token string) []loggedEvent {
	e.t.Helper()
	var out []loggedEvent
	path := "/api/v1/audit-log?per_page=100"
	for {
		res := e.do("GET", path, token, nil)
		expect(e.t, res, 200)
		for _, it := range res.List() {
			m := it.(map[string]any)
			ev := loggedEvent{ID: m["id"].(string), Type: m["type"].(string), Data: map[string]string{}}
			if d, ok := m["data"].(map[string]any); ok {
				for _, k := range []string{"id", "agent_id", "kind"} {
					ev.Data[k], _ = d[k].(string)
				}
			}
			out = append(out, ev)
		}
		next, _ := res.Meta()["next_cursor"].(string)
		if next == "" {
			return out
		}
		path = "/api/v1/audit-log?per_page=100&cursor=" + url.QueryEscape(next)
	}
}

func eventIDs(list []loggedEvent) []string {
	out := make([]string, len(list))
	for i, ev := range list {
		out[i] = ev.ID
	}
	return out
}

// exportedIDs reads the id column of a CSV export (nil unless it is a 200).
func exportedIDs(t *testing.T, res *response) []string {
	if res.Status != 200 {
		return nil
	}
	rows, err := csv.NewReader(strings.NewReader(string(res.Body))).ReadAll()
	if err != nil || len(rows) == 0 {
		t.Fatalf("the export is no CSV: %v %s", err, res.Body)
	}
	var ids []string
	for _, row := range rows[1:] {
		ids = append(ids, row[0])
	}
	return ids
}

func sameSet(a, b []string) bool {
	x, y := slices.Clone(a), slices.Clone(b)
	sort.Strings(x)
	sort.Strings(y)
	return slices.Equal(x, y) && (len(x) > 0 || len(y) == 0)
}
