package server_test

import (
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
)

// The life cycle's records seen by callers limited to one agent (conventions §6, §20):
// what TestEveryChannelShowsWhatTheRuleAllows checks by the ids each list holds, checked
// here by what any answer says. Agents A and B each have versions, a rollout, a test and a
// run, a conversation, a campaign with recipients, calls, analysis and jobs
// (makeAgentRecords); the callers see A only.

// hiddenRecords are B's records, by the path parameter that names each kind.
type hiddenRecords map[string]string

// limitedToFirst makes agents A and B with their records and returns them with the
// callers limited to A: a developer and a read-only member limited to A, an owner's key
// narrowed to A.
func limitedToFirst(t *testing.T) (*streamEnv, []string, *agentRecords, []reader) {
	e, stand := newRecordsEnv(t)
	agents := []string{e.newAgent("A"), e.newAgent("B")}
	callAgent := map[string]string{}
	for _, a := range agents {
		r := e.do("POST", "/api/v1/calls", e.Owner.Token, map[string]any{"agent_id": a, "direction": "web", "status": "ended",
			"disconnection_reason": "user_hangup", "transcript": []map[string]any{{"role": "user", "content": "where is my parcel"}}})
		expect(t, r, 201)
		callAgent[r.Data()["id"].(string)] = a
	}
	rec := e.makeAgentRecords(t, stand, agents, callAgent)
	readers := []reader{
		{name: "developer limited to A", role: data.RoleDeveloper, modules: data.Modules, member: agents[:1]},
		{name: "member limited to A", role: data.RoleMember, modules: data.Modules, member: agents[:1]},
		{name: "owner's key narrowed to A", role: data.RoleOwner, keyAgents: agents[:1]},
	}
	for i := range readers {
		readers[i].token = e.readerToken(&readers[i], e.Owner.WorkspaceID)
	}
	return e, agents, rec, readers
}

// recordsOf names one record of each kind of agent a, by path parameter.
func recordsOf(rec *agentRecords, a string) hiddenRecords {
	one := func(m map[string]string) string {
		for id, x := range m {
			if x == a {
				return id
			}
		}
		return ""
	}
	out := hiddenRecords{"agent_id": a, "test_id": one(rec.tests), "run_id": one(rec.runs), "conversation_id": one(rec.convs),
		"campaign_id": one(rec.campaigns), "call_id": one(rec.callAgent)}
	for id, j := range rec.jobs {
		if j.agent == a {
			out["job_id"] = id
		}
	}
	return out
}

// allIDsOf lists every id of agent a's records, and its analysis field's name.
func allIDsOf(rec *agentRecords, a string) []string {
	out := []string{a, rec.field[a]}
	for _, m := range []map[string]string{rec.tests, rec.runs, rec.convs, rec.campaigns, rec.callAgent} {
		for id, x := range m {
			if x == a {
				out = append(out, id)
			}
		}
	}
	for id, j := range rec.jobs {
		if j.agent == a {
			out = append(out, id)
		}
	}
	for c, list := range rec.recipients {
		if rec.campaigns[c] == a {
			out = append(out, list...)
		}
	}
	return out
}

// fillPath puts ids in path's parameters, and version 1 against the current one.
func fillPath(path string, ids hiddenRecords) string {
	for k, v := range ids {
		path = strings.ReplaceAll(path, "{"+k+"}", v)
	}
	return strings.NewReplacer("{version_number}", "1", "{other}", "current").Replace(path)
}

// TestLimitedCallersMeetNoHiddenRecord: every GET route of the route table, read with A's
// records and the agent and field filters, answers nothing that names any of B's records
// (in a record's data, an event, a job, a list, a figure); and with one of B's ids in any
// of its parameters, never a 200.
func TestLimitedCallersMeetNoHiddenRecord(t *testing.T) {
	e, agents, rec, readers := limitedToFirst(t)
	visible, hidden := recordsOf(rec, agents[0]), recordsOf(rec, agents[1])
	names := allIDsOf(rec, agents[1])
	reads := 0
	for _, r := range readers {
		for _, rt := range e.srv.Routes() {
			if rt[0] != "GET" || !strings.HasPrefix(rt[1], "/api/v1/") || strings.HasSuffix(rt[1], "/events/stream") {
				continue
			}
			if path := fillPath(rt[1], visible); !strings.Contains(path, "{") {
				for _, q := range []string{"", "?per_page=100", "?per_page=100&agent_id=" + agents[0], "?field=" + rec.field[agents[0]] + "&agent_id=" + agents[0]} {
					res := e.do("GET", path+q, r.token, nil)
					reads++
					for _, id := range names {
						if strings.Contains(string(res.Body), id) {
							t.Errorf("%s: GET %s%s (%d) names B's %s: %.300s", r.name, path, q, res.Status, id, res.Body)
						}
					}
				}
			}
			for k, id := range hidden {
				if !strings.Contains(rt[1], "{"+k+"}") {
					continue
				}
				path := fillPath(strings.ReplaceAll(rt[1], "{"+k+"}", id), visible)
				if res := e.do("GET", path, r.token, nil); res.Status == 200 {
					t.Errorf("%s: GET %s with B's %s: 200 %.300s", r.name, path, k, res.Body)
				}
			}
		}
	}
	if reads < 100 {
		t.Fatalf("only %d reads: the route table lost its GET routes?", reads)
	}
}

// TestHiddenRecordsAnswerAsUnknownOnes: every route that names an agent's record in its
// path, whatever its method and body, and every request naming an agent in its body or
// filters, answers B's record exactly as an id that names nothing (status, code, body):
// no 403, 409 or 422 tells a limited caller that B exists (conventions §2).
func TestHiddenRecordsAnswerAsUnknownOnes(t *testing.T) {
	e, agents, rec, readers := limitedToFirst(t)
	hidden := recordsOf(rec, agents[1])
	unknown := hiddenRecords{}
	for k, id := range hidden {
		unknown[k] = id[:len(id)-6] + "ZZZZZZ" // of the id's shape, naming nothing
	}
	same := func(r reader, what string, h, u *response) {
		body := string(h.Body)
		for k, id := range hidden {
			body = strings.ReplaceAll(body, id, unknown[k])
		}
		if h.Status != u.Status || body != string(u.Body) {
			t.Errorf("%s: %s: B's record %d %.300s; an unknown one %d %.300s", r.name, what, h.Status, h.Body, u.Status, u.Body)
		}
	}
	bodies := []any{nil, map[string]any{}, map[string]any{"name": "x", "content": "hi", "query": "parcel", "version": 1, "force": true}}
	agentBodies := map[string]func(id string) any{
		"POST /api/v1/campaigns": func(id string) any {
			return map[string]any{"name": "x", "agent_id": id, "number_id": "num_00000000000000000000000000", "window": everyDay,
				"max_concurrent": 1, "recipients": []any{map[string]any{"phone_number": "+14155550109"}}}
		},
		"POST /api/v1/calls/start": func(id string) any {
			return map[string]any{"direction": "outbound", "to_number": "+14155550109", "agent_id": id}
		},
		"POST /api/v1/calls": func(id string) any { return map[string]any{"direction": "web", "agent_id": id} },
		"POST /api/v1/numbers": func(id string) any {
			return map[string]any{"phone_number": "+14155550177", "provider": "twilio", "inbound_agent_id": id}
		},
		"POST /api/v1/api-keys": func(id string) any { return map[string]any{"name": "k", "agent_ids": []string{id}} },
	}
	filters := []string{"/api/v1/jobs?agent_id=", "/api/v1/calls?agent_id=", "/api/v1/campaigns?agent_id=", "/api/v1/numbers?agent_id=",
		"/api/v1/analytics/calls?to=2030-01-01T00:00:00Z&agent_id=", "/api/v1/calls/export?format=csv&agent_id=",
		"/api/v1/analytics/analysis?to=2030-01-01T00:00:00Z&field=" + rec.field[agents[1]] + "&agent_id="}
	asked := 0
	for _, r := range readers {
		for _, rt := range e.srv.Routes() {
			named := false
			for k := range hidden {
				named = named || strings.Contains(rt[1], "{"+k+"}")
			}
			if !named || strings.Contains(rt[1], "{knowledge_base_id}") {
				continue
			}
			for _, body := range bodies {
				if rt[0] == "GET" && body != nil {
					continue
				}
				asked++
				same(r, rt[0]+" "+rt[1], e.do(rt[0], fillPath(rt[1], hidden), r.token, body), e.do(rt[0], fillPath(rt[1], unknown), r.token, body))
			}
		}
		for route, body := range agentBodies {
			method, path, _ := strings.Cut(route, " ")
			asked++
			same(r, route, e.do(method, path, r.token, body(hidden["agent_id"])), e.do(method, path, r.token, body(unknown["agent_id"])))
		}
		for _, f := range filters {
			asked++
			same(r, "GET "+f, e.do("GET", f+hidden["agent_id"], r.token, nil), e.do("GET", f+unknown["agent_id"], r.token, nil))
		}
	}
	if asked < 100 {
		t.Fatalf("only %d requests: the route table lost its routes of agents' records?", asked)
	}
}
