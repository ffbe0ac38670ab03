package server_test

import (
	"os"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
)

// maskedWorkspace is a workspace of agents A and B with every record of each (the
// property test's), numbers bound to B inbound and outbound, and their number.* events
// (created, updated, deleted); and the readers limited to A: a developer whose agent_ids
// are [A], and the owner's API key narrowed to A.
type maskedWorkspace struct {
	*streamEnv
	a, b                 string
	rec                  *agentRecords
	inboundB, outboundB  string
	kb                   string
	developer, narrowKey string
}

func newMaskedWorkspace(t *testing.T) *maskedWorkspace {
	t.Helper()
	e, stand := newRecordsEnv(t)
	w := &maskedWorkspace{streamEnv: e}
	w.a, w.b = e.newAgent("A"), e.newAgent("B")
	w.rec = e.makeAgentRecords(t, stand, []string{w.a, w.b}, map[string]string{})
	ws := e.Owner.WorkspaceID
	u := e.User(t, "limited@example.com")
	res := e.do("POST", "/api/v1/workspaces/"+ws+"/users", e.Owner.Token, map[string]any{"id": u.ID, "role": data.RoleDeveloper, "agent_ids": []string{w.a}})
	expect(t, res, 201)
	w.developer = e.Token(t, u, ws)
	res = e.do("POST", "/api/v1/api-keys", e.Owner.Token, map[string]any{"name": "narrow", "agent_ids": []string{w.a}})
	expect(t, res, 201)
	w.narrowKey = res.JSON()["token"].(string)
	w.kb = w.create(t, "/api/v1/knowledge-bases", map[string]any{"name": "Policies"})
	return w
}

// makeNumbers binds numbers to B (one with A beside it) and makes every number.* event of
// them: a create, an update and a delete.
func (w *maskedWorkspace) makeNumbers(t *testing.T) {
	t.Helper()
	w.inboundB = w.create(t, "/api/v1/numbers", map[string]any{"phone_number": "+14155550601", "provider": "twilio", "inbound_agent_id": w.b})
	w.outboundB = w.create(t, "/api/v1/numbers", map[string]any{"phone_number": "+14155550602", "provider": "twilio", "inbound_agent_id": w.a, "outbound_agent_id": w.b})
	expect(t, w.do("PUT", "/api/v1/numbers/"+w.outboundB, w.Owner.Token, map[string]any{"nickname": "Sales"}), 200)
	gone := w.create(t, "/api/v1/numbers", map[string]any{"phone_number": "+14155550603", "provider": "twilio", "outbound_agent_id": w.b})
	expect(t, w.do("DELETE", "/api/v1/numbers/"+gone, w.Owner.Token, nil), 204)
}

func (w *maskedWorkspace) create(t *testing.T, path string, body map[string]any) string {
	t.Helper()
	res := w.do("POST", path, w.Owner.Token, body)
	expect(t, res, 201)
	return res.Data()["id"].(string)
}

// TestNumbersShowAHiddenAgentAsTheSentinel: a reader limited to agent A reads every
// number, but a binding to agent B reads data.HiddenAgent, in the show, the list and the
// number.* events of the audit log and the event stream; the list filtered by B answers
// as for an agent that does not exist; the owner reads B's id. Both engines.
func TestNumbersShowAHiddenAgentAsTheSentinel(t *testing.T) {
	w := newMaskedWorkspace(t)
	stream := w.openStream(w.developer, "types=number.created,number.updated,number.deleted")
	w.makeNumbers(t)
	for _, tok := range []string{w.developer, w.narrowKey} {
		n := w.do("GET", "/api/v1/numbers/"+w.inboundB, tok, nil)
		expect(t, n, 200)
		if got := n.Data()["inbound_agent_id"]; got != data.HiddenAgent {
			t.Errorf("show: inbound_agent_id %v, want the sentinel %s", got, data.HiddenAgent)
		}
		if n.JSON()["access"].(map[string]any)["write"] != false {
			t.Errorf("show: access %v, want write false", n.JSON()["access"])
		}
		n = w.do("GET", "/api/v1/numbers/"+w.outboundB, tok, nil)
		if in, out := n.Data()["inbound_agent_id"], n.Data()["outbound_agent_id"]; in != w.a || out != data.HiddenAgent {
			t.Errorf("show: bindings %v and %v, want A's id and the sentinel", in, out)
		}
		list := w.do("GET", "/api/v1/numbers?per_page=100", tok, nil)
		expect(t, list, 200)
		if len(list.List()) != 3 {
			t.Errorf("list: %d numbers, want all 3", len(list.List()))
		}
		byB := w.do("GET", "/api/v1/numbers?agent_id="+w.b, tok, nil)
		byNone := w.do("GET", "/api/v1/numbers?agent_id="+missing("agent_id", w.b), tok, nil)
		if byB.Status != byNone.Status || string(byB.Body) != string(byNone.Body) {
			t.Errorf("list by B's id answers %d %s, by an id of nothing %d %s", byB.Status, byB.Body, byNone.Status, byNone.Body)
		}
		for _, res := range []*response{n, list, byB} {
			if strings.Contains(string(res.Body), w.b) {
				t.Errorf("B's id %s is in an answer to a reader limited to A: %.400s", w.b, res.Body)
			}
		}
		audit := w.do("GET", "/api/v1/audit-log?per_page=100", tok, nil)
		if tok == w.developer {
			expect(t, audit, 403) // the audit log is an owner's or admin's: their key narrowed to A reads it
			continue
		}
		expect(t, audit, 200)
		numberEvents := 0
		for _, it := range audit.List() {
			if ev := it.(map[string]any); strings.HasPrefix(ev["type"].(string), "number.") {
				numberEvents++
			}
		}
		if numberEvents < 6 { // the records' unbound number, and B's 5
			t.Errorf("audit log: %d number events, want B's numbers' 5 and the records' one", numberEvents)
		}
		if strings.Contains(string(audit.Body), w.b) || !strings.Contains(string(audit.Body), data.HiddenAgent) {
			t.Errorf("the audit log names B's id %s, or not the sentinel: %.400s", w.b, audit.Body)
		}
	}
	masked := 0
	for range 6 { // three creates, an update, a delete: each names B
		m := stream.next()
		if strings.Contains(m.data, w.b) {
			t.Errorf("stream: %s names B: %s", m.event, m.data)
		}
		if strings.Contains(m.data, data.HiddenAgent) {
			masked++
		}
		if m.event == "number.deleted" {
			break
		}
	}
	if masked != 5 {
		t.Errorf("stream: %d number events with the sentinel, want 5", masked)
	}
	stream.kill()
	// The owner reads B.
	if got := w.do("GET", "/api/v1/numbers/"+w.inboundB, w.Owner.Token, nil).Data()["inbound_agent_id"]; got != w.b {
		t.Errorf("owner reads inbound_agent_id %v, want B's %s", got, w.b)
	}
	if body := w.do("GET", "/api/v1/audit-log?type=number.deleted", w.Owner.Token, nil).Body; !strings.Contains(string(body), w.b) {
		t.Errorf("the owner's audit log does not name B in number.deleted: %s", body)
	}
	// A write still refuses, and the sentinel given back binds nothing.
	for _, body := range []map[string]any{{"nickname": "mine"}, {"inbound_agent_id": data.HiddenAgent}} {
		expect(t, w.do("PUT", "/api/v1/numbers/"+w.inboundB, w.developer, body), 403)
	}
	expectFields(t, w.do("PUT", "/api/v1/numbers/"+w.outboundB, w.Owner.Token, map[string]any{"inbound_agent_id": data.HiddenAgent}), "inbound_agent_id")
	// The docs name the sentinel clients meet.
	for _, doc := range []string{"../docs/numbers.md", "../docs/upgrading.md"} {
		if text, err := os.ReadFile(doc); err != nil || !strings.Contains(string(text), data.HiddenAgent) {
			t.Errorf("%s does not name the sentinel %s (%v)", doc, data.HiddenAgent, err)
		}
	}
}

// TestNoReadableRouteNamesAHiddenAgent walks every GET operation of the OpenAPI document
// (the stream aside: TestNumbersShowAHiddenAgentAsTheSentinel reads it) as readers
// limited to agent A, with A's records and the shared ones (B's numbers, a knowledge
// base) in the path, and with B's id for each agent_id filter: no answer names agent B
// or any record of B's. Both engines.
func TestNoReadableRouteNamesAHiddenAgent(t *testing.T) {
	w := newMaskedWorkspace(t)
	w.makeNumbers(t)
	ids := map[string]string{"workspace_id": w.Owner.WorkspaceID, "agent_id": w.a, "version_number": "1", "other": "current",
		"number_id": w.inboundB, "knowledge_base_id": w.kb, "user_id": w.Owner.ID}
	secrets := []string{w.b}
	for kind, m := range map[string]map[string]string{"test_id": w.rec.tests, "run_id": w.rec.runs, "conversation_id": w.rec.convs,
		"campaign_id": w.rec.campaigns, "call_id": w.rec.callAgent} {
		for id, agent := range m {
			if agent == w.a {
				ids[kind] = id
			} else {
				secrets = append(secrets, id)
			}
		}
	}
	for id, j := range w.rec.jobs {
		if j.agent == w.a {
			ids["job_id"] = id
		} else {
			secrets = append(secrets, id)
		}
	}
	_, doc := openapiDocument(t)
	n := 0
	for _, op := range documentedOps(t) {
		if op.method != "GET" || op.path == "/api/v1/events/stream" {
			continue
		}
		path := pathParam.ReplaceAllStringFunc(op.path, func(p string) string { return ids[strings.Trim(p, "{}")] })
		queries := []string{"per_page=100"}
		if takesQuery(doc, op.path, "agent_id") {
			queries = append(queries, "per_page=100&agent_id="+w.b)
		}
		for _, tok := range []string{w.developer, w.narrowKey} {
			for _, q := range queries {
				res := w.do("GET", path+"?"+q, tok, nil)
				if res.Status == 422 && res.FieldErrors()["per_page"] != nil {
					res = w.do("GET", path+"?"+strings.TrimPrefix(strings.TrimPrefix(q, "per_page=100"), "&"), tok, nil)
				}
				for _, s := range secrets {
					if strings.Contains(string(res.Body), s) {
						t.Errorf("GET %s?%s (%d) names %s of agent B: %.300s", path, q, res.Status, s, res.Body)
					}
				}
				n++
			}
		}
	}
	if n < 100 {
		t.Errorf("only %d reads walked", n)
	}
}

// takesQuery reports whether the document's GET path declares query parameter name.
func takesQuery(doc map[string]any, path, name string) bool {
	item := doc["paths"].(map[string]any)[path].(map[string]any)
	op := item["get"].(map[string]any)
	params, _ := op["parameters"].([]any)
	shared, _ := item["parameters"].([]any)
	for _, p := range append(params, shared...) {
		if m, _ := p.(map[string]any); m["in"] == "query" && m["name"] == name {
			return true
		}
	}
	return false
}
