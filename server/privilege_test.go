package server_test

import (
	"encoding/csv"
	"fmt"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
)

// The regression suite of issue 23: each test fails on the version the probe found the
// limits broken in. TestEveryChannelShowsWhatTheRuleAllows (privilege_property_test.go) is
// point 1's property; the console's redirect is console/redirect_test.go; redaction's cost
// is service/privilege_test.go; the migrations are in bolt/ and postgres/.

// privilegeWorld is a workspace with two agents, a call of each with a transcript, and
// the owner's tokens.
type privilegeWorld struct {
	s            *testkit.Server
	ws, a, b     string
	callA, callB string
}

func newPrivilegeWorld(t *testing.T) *privilegeWorld {
	s := testkit.NewServer(t, nil)
	w := &privilegeWorld{s: s, ws: s.Owner.WorkspaceID}
	w.a = s.Do("POST", "/api/v1/agents", s.Owner.Token, map[string]any{"name": "A"}).Data()["id"].(string)
	w.b = s.Do("POST", "/api/v1/agents", s.Owner.Token, map[string]any{"name": "B"}).Data()["id"].(string)
	call := func(agent, words string) string {
		r := s.Do("POST", "/api/v1/calls", s.Owner.Token, map[string]any{"agent_id": agent, "direction": "web",
			"transcript": []map[string]any{{"role": "user", "content": words}}})
		testkit.Expect(t, r, 201)
		return r.Data()["id"].(string)
	}
	w.callA, w.callB = call(w.a, "secret of agent a"), call(w.b, "secret of agent b")
	return w
}

// key makes an API key with token and body and returns its token.
func (w *privilegeWorld) key(t *testing.T, token string, body map[string]any) string {
	t.Helper()
	body["name"] = "k"
	r := w.s.Do("POST", "/api/v1/api-keys", token, body)
	testkit.Expect(t, r, 201)
	return r.JSON()["token"].(string)
}

// 23.1: a caller limited to agent A reads nothing of agent B's calls through the audit
// log or the event stream, as through /calls.
func TestPrivilegeAuditLogKeepsAgentLimits(t *testing.T) {
	w := newPrivilegeWorld(t)
	narrow := w.key(t, w.s.Owner.Token, map[string]any{"agent_ids": []string{w.a}, "scopes": []string{data.ScopeAuditRead, "call_history:read"}})
	testkit.Expect(t, w.s.Do("GET", "/api/v1/calls/"+w.callB, narrow, nil), 404)
	r := w.s.Do("GET", "/api/v1/audit-log?per_page=100", narrow, nil)
	testkit.Expect(t, r, 200)
	if body := string(r.Body); strings.Contains(body, "secret of agent b") || strings.Contains(body, w.callB) || !strings.Contains(body, w.callA) {
		t.Errorf("the audit log of a key limited to agent A: %s", body)
	}
	for _, it := range r.List() {
		if typ := it.(map[string]any)["type"].(string); !strings.HasPrefix(typ, "call.") {
			t.Errorf("a key narrowed to an agent reads a %s event", typ)
		}
	}
	// A member limited to A: no audit log (403), and its stream carries only A's calls.
	member := w.s.Member("m@example.com", w.ws, data.RoleMember, nil, []string{w.a})
	testkit.Expect(t, w.s.Do("GET", "/api/v1/audit-log", member.Token, nil), 403)
}

// 23.2: a key limited to an agent makes no wider key and manages no member.
func TestPrivilegeLimitedKeyMintsNothingWider(t *testing.T) {
	w := newPrivilegeWorld(t)
	narrow := w.key(t, w.s.Owner.Token, map[string]any{"agent_ids": []string{w.a}})
	reader := w.key(t, w.s.Owner.Token, map[string]any{"scopes": []string{"call_history:read"}})
	other := w.s.NewUser("other@example.com", false)
	w.s.Run(t, []testkit.Scenario{
		{Name: "a key made without agent_ids has the maker's", Method: "POST", Path: "/api/v1/api-keys", Token: tok(narrow), Body: `{"name":"x"}`,
			Status: 201, Contains: []string{`"agent_ids":["` + w.a + `"]`},
			Check: func(t *testing.T, s *testkit.Server, r *testkit.Response) {
				testkit.Expect(t, s.Do("GET", "/api/v1/calls/"+w.callB, r.JSON()["token"].(string), nil), 404)
			}},
		{Name: "every agent is more", Method: "POST", Path: "/api/v1/api-keys", Token: tok(narrow), Body: `{"name":"x","agent_ids":[]}`, Status: 403, Code: data.EFORBIDDEN},
		{Name: "another agent is more", Method: "POST", Path: "/api/v1/api-keys", Token: tok(narrow), Body: `{"name":"x","agent_ids":["` + w.b + `"]}`, Status: 403},
		{Name: "an agent that does not exist reads the same", Method: "POST", Path: "/api/v1/api-keys", Token: tok(narrow),
			Body: `{"name":"x","agent_ids":["agt_01JD6ZZZZZZZZZZZZZZZZZZZZZ"]}`, Status: 403},
		{Name: "a scope the maker lacks is more", Method: "POST", Path: "/api/v1/api-keys", Token: tok(reader), Body: `{"name":"x","scopes":["call_history:write"]}`, Status: 403},
		{Name: "a key without scopes is the maker's scopes", Method: "POST", Path: "/api/v1/api-keys", Token: tok(reader), Body: `{"name":"x"}`,
			Status: 201, Contains: []string{`"scopes":["call_history:read"]`}},
		{Name: "the narrow key adds no admin", Method: "POST", Path: "/api/v1/workspaces/" + w.ws + "/users", Token: tok(narrow),
			Body: `{"id":"` + other.ID + `","role":"admin"}`, Status: 403},
		{Name: "nor changes its own membership", Method: "PUT", Path: "/api/v1/workspaces/" + w.ws + "/users/" + w.s.Owner.ID, Token: tok(narrow),
			Body: `{"modules":["agents"]}`, Status: 403},
		{Name: "nor removes a member", Method: "DELETE", Path: "/api/v1/workspaces/" + w.ws + "/users/" + w.s.Owner.ID, Token: tok(narrow), Status: 403},
		{Name: "a scoped key adds no member either", Method: "POST", Path: "/api/v1/workspaces/" + w.ws + "/users", Token: tok(w.key(t, w.s.Owner.Token, map[string]any{"scopes": []string{data.ScopeWorkspaceAdmin}})),
			Body: `{"id":"` + other.ID + `","role":"member"}`, Status: 403},
		{Name: "nobody was added", Method: "GET", Path: "/api/v1/workspaces/" + w.ws + "/users/" + other.ID, Token: testkit.AsOwner, Status: 404},
	})
	// In another workspace of its user, the narrow key's agent_ids name no agent there:
	// it sees none, never every one.
	second := w.s.Do("POST", "/api/v1/workspaces", w.s.Owner.Token, map[string]any{"name": "Second"})
	testkit.Expect(t, second, 201)
	ws2 := second.Data()["id"].(string)
	testkit.Expect(t, w.s.Do("GET", "/api/v1/workspaces/"+ws2+"/export", narrow, nil), 403)
	testkit.Expect(t, w.s.Do("POST", "/api/v1/workspaces/"+ws2+"/users", narrow, map[string]any{"id": other.ID, "role": "admin"}), 403)
}

// Issue 23 leftover: a workspace's API key list shows every member's keys with their
// agent_ids and scopes, and revoking one manages a member; a token narrowed by a key's
// agent_ids does neither (403), whatever its user's role, and revokes nothing. Before, an
// owner's key narrowed to agent A listed every key, with agent B named in them.
func TestPrivilegeNarrowKeySeesNoWorkspaceKeys(t *testing.T) {
	w := newPrivilegeWorld(t)
	wide := w.key(t, w.s.Owner.Token, map[string]any{"agent_ids": []string{w.b}})
	narrow := w.key(t, w.s.Owner.Token, map[string]any{"agent_ids": []string{w.a}})
	adminKey := w.key(t, w.s.Member("admin@example.com", w.ws, data.RoleAdmin, nil, nil).Token, map[string]any{"scopes": []string{data.ScopeWorkspaceAdmin}})
	keys := "/api/v1/workspaces/" + w.ws + "/api-keys"
	var wideID string
	w.s.Run(t, []testkit.Scenario{
		{Name: "the owner lists every key", Method: "GET", Path: keys + "?per_page=100", Token: testkit.AsOwner, Status: 200, Contains: []string{w.b},
			Check: func(t *testing.T, s *testkit.Server, r *testkit.Response) {
				for _, it := range r.List() {
					k := it.(map[string]any)
					if ids, _ := k["agent_ids"].([]any); len(ids) == 1 && ids[0] == w.b {
						wideID = fmt.Sprint(k["id"])
					}
				}
			}},
		{Name: "a key narrowed to agent A lists none", Method: "GET", Path: keys, Token: tok(narrow), Status: 403, Code: data.EFORBIDDEN},
		{Name: "nor revokes one", Method: "DELETE", Path: keys + "/" + strings.Split(wide, "|")[0], Token: tok(narrow), Status: 403, Code: data.EFORBIDDEN},
		{Name: "an admin's workspace:admin key lists them", Method: "GET", Path: keys, Token: tok(adminKey), Status: 200},
	})
	if wideID == "" || wideID != strings.Split(wide, "|")[0] {
		t.Fatalf("the key narrowed to B (%s) is not in the owner's list (%s)", wide, wideID)
	}
	testkit.Expect(t, w.s.Do("GET", "/api/v1/agents/"+w.b, wide, nil), 200) // not revoked
}

// 23.3: owners and admins are never limited to some agents.
func TestPrivilegeAdminsAreNeverLimited(t *testing.T) {
	w := newPrivilegeWorld(t)
	admin := w.s.Member("admin@example.com", w.ws, data.RoleAdmin, nil, nil)
	dev := w.s.Member("dev@example.com", w.ws, data.RoleDeveloper, nil, []string{w.a})
	newbie := w.s.NewUser("new@example.com", false)
	users := "/api/v1/workspaces/" + w.ws + "/users/"
	w.s.Run(t, []testkit.Scenario{
		{Name: "adding an admin with agent_ids", Method: "POST", Path: "/api/v1/workspaces/" + w.ws + "/users", Token: testkit.AsOwner,
			Body: `{"id":"` + newbie.ID + `","role":"admin","agent_ids":["` + w.a + `"]}`, Fields: []string{"agent_ids"}},
		{Name: "an admin limiting himself", Method: "PUT", Path: users + admin.ID, Token: tok(admin.Token), Body: `{"agent_ids":["` + w.a + `"]}`, Fields: []string{"agent_ids"}},
		{Name: "the owner limiting an admin", Method: "PUT", Path: users + admin.ID, Token: testkit.AsOwner, Body: `{"agent_ids":["` + w.a + `"]}`, Fields: []string{"agent_ids"}},
		{Name: "an owner with no agent at all", Method: "PUT", Path: users + w.s.Owner.ID, Token: testkit.AsOwner, Body: `{"agent_ids":["` + data.NoAgent + `"]}`, Fields: []string{"agent_ids"}},
		{Name: "the admin is as he was", Method: "GET", Path: users + admin.ID, Token: testkit.AsOwner, Status: 200, Contains: []string{`"role":"admin"`, `"agent_ids":[]`}},
		{Name: "a promotion lifts the limit", Method: "PUT", Path: users + dev.ID, Token: testkit.AsOwner, Body: `{"role":"admin"}`, Status: 200, Contains: []string{`"agent_ids":[]`}},
		{Name: "a demotion may set one", Method: "PUT", Path: users + dev.ID, Token: testkit.AsOwner, Body: `{"role":"developer","agent_ids":["` + w.b + `"]}`,
			Status: 200, Contains: []string{`"agent_ids":["` + w.b + `"]`}},
	})
}

// 23.4: webhooks carry every event of the workspace, so only owners and admins who may
// read them all manage them.
func TestPrivilegeWebhooksAreForOwnersAndAdmins(t *testing.T) {
	w := newPrivilegeWorld(t)
	dev := w.s.Member("dev@example.com", w.ws, data.RoleDeveloper, []string{data.ModuleAgents}, nil)
	admin := w.s.Member("admin@example.com", w.ws, data.RoleAdmin, nil, nil)
	hook := w.s.Do("POST", "/api/v1/webhooks", admin.Token, map[string]any{"url": "https://hooks.example.com/a", "events": []string{"*"}})
	testkit.Expect(t, hook, 201)
	id := hook.Data()["id"].(string)
	body := `{"url":"https://hooks.example.com/x","events":["*"]}`
	replay := `{"from":"2020-01-01T00:00:00Z","to":"2030-01-01T00:00:00Z"}`
	writer := w.key(t, w.s.Owner.Token, map[string]any{"scopes": []string{data.ScopeWebhooksWrite}})
	calls := w.key(t, w.s.Owner.Token, map[string]any{"scopes": []string{data.ScopeWebhooksWrite, "call_history:read"}})
	every := w.key(t, w.s.Owner.Token, map[string]any{"scopes": []string{data.ScopeWebhooksWrite, data.ScopeAuditRead,
		"agents:read", "knowledge_base:read", "phone_numbers:read", "call_history:read"}})
	narrow := w.key(t, w.s.Owner.Token, map[string]any{"agent_ids": []string{w.a}})
	w.s.Run(t, []testkit.Scenario{
		{Name: "a developer creates none", Method: "POST", Path: "/api/v1/webhooks", Token: tok(dev.Token), Body: body, Status: 403},
		{Name: "nor lists them", Method: "GET", Path: "/api/v1/webhooks", Token: tok(dev.Token), Status: 403},
		{Name: "nor replays a year", Method: "POST", Path: "/api/v1/webhooks/" + id + "/replay", Token: tok(dev.Token), Body: replay, Status: 403},
		{Name: "nor tests one", Method: "POST", Path: "/api/v1/webhooks/" + id + "/test", Token: tok(dev.Token), Status: 403},
		{Name: "nor reads its deliveries", Method: "GET", Path: "/api/v1/webhooks/" + id + "/deliveries", Token: tok(dev.Token), Status: 403},
		{Name: "a key narrowed to an agent manages none", Method: "GET", Path: "/api/v1/webhooks", Token: tok(narrow), Status: 403},
		{Name: "webhooks:write alone carries no call", Method: "POST", Path: "/api/v1/webhooks", Token: tok(writer), Body: body, Status: 403, Contains: []string{"call.ended"}},
		{Name: "nor replays one that does", Method: "POST", Path: "/api/v1/webhooks/" + id + "/replay", Token: tok(writer), Body: replay, Status: 403},
		{Name: "nor widens one", Method: "PUT", Path: "/api/v1/webhooks/" + id, Token: tok(writer), Body: `{"description":"mine"}`, Status: 403},
		{Name: "with call_history:read it carries calls", Method: "POST", Path: "/api/v1/webhooks", Token: tok(calls), Body: `{"url":"https://hooks.example.com/c","events":["call.ended"]}`, Status: 201},
		{Name: "but not everything", Method: "POST", Path: "/api/v1/webhooks", Token: tok(calls), Body: body, Status: 403},
		{Name: "a key reading everything carries everything", Method: "POST", Path: "/api/v1/webhooks", Token: tok(every), Body: body, Status: 201},
		{Name: "an admin replays", Method: "POST", Path: "/api/v1/webhooks/" + id + "/replay", Token: tok(admin.Token), Body: replay, Status: 202},
	})
	// An import creates webhooks too: a workspace:admin key alone may not bring one in.
	exported := w.s.Do("GET", "/api/v1/workspaces/"+w.ws+"/export", w.s.Owner.Token, nil)
	testkit.Expect(t, exported, 200)
	before := len(w.s.Do("GET", "/api/v1/webhooks?per_page=100", w.s.Owner.Token, nil).List())
	importer := w.key(t, w.s.Owner.Token, map[string]any{"scopes": []string{data.ScopeWorkspaceAdmin}})
	r := w.s.Do("POST", "/api/v1/workspaces/"+w.ws+"/import", importer, string(exported.Body))
	testkit.Expect(t, r, 403)
	if !strings.Contains(string(r.Body), "every event the webhook carries") {
		t.Errorf("the import is refused for another reason: %s", r.Body)
	}
	if after := len(w.s.Do("GET", "/api/v1/webhooks?per_page=100", w.s.Owner.Token, nil).List()); after != before {
		t.Errorf("a refused import left %d webhooks, %d before", after, before)
	}
}

// 23.6: a text cell a spreadsheet would read as a formula is neutralized in the CSV export.
func TestPrivilegeCSVCellsAreNoFormulas(t *testing.T) {
	w := newPrivilegeWorld(t)
	reasons := []string{"=HYPERLINK(\"http://evil.example\",\"x\")", "+1+cmd|' /C calc'!A0", "-2+3", "@SUM(A1)", "\tx=1", "\rx", "user_hangup"}
	for _, reason := range reasons {
		r := w.s.Do("POST", "/api/v1/calls", w.s.Owner.Token, map[string]any{"agent_id": w.a, "direction": "inbound", "status": "ended",
			"from_number": "+14155550123", "to_number": "+14155550124", "disconnection_reason": reason})
		testkit.Expect(t, r, 201)
	}
	r := w.s.Do("GET", "/api/v1/calls/export?format=csv&direction=inbound", w.s.Owner.Token, nil)
	testkit.Expect(t, r, 200)
	rows, err := csv.NewReader(strings.NewReader(string(r.Body))).ReadAll()
	if err != nil || len(rows) != len(reasons)+1 {
		t.Fatalf("%d rows (%v): %s", len(rows), err, r.Body)
	}
	got := map[string]bool{}
	for _, row := range rows[1:] {
		for _, cell := range row {
			if cell != "" && strings.ContainsRune("=+-@\t\r", rune(cell[0])) && cell != "+14155550123" && cell != "+14155550124" {
				t.Errorf("a cell a spreadsheet reads as a formula: %q", cell)
			}
		}
		got[row[12]] = true
	}
	for _, reason := range reasons {
		want := reason
		if reason != "user_hangup" {
			want = "'" + reason
		}
		if !got[want] {
			t.Errorf("disconnection_reason %q is not exported as %q: %v", reason, want, got)
		}
	}
}

// 23.8: a calls:runtime key updates a call without reading it; nesting is bounded; a
// recording_url is a URL; the catalog and export take the scopes docs/api.md names.
func TestPrivilegeSmallerOnes(t *testing.T) {
	w := newPrivilegeWorld(t)
	runtime := w.key(t, w.s.Owner.Token, map[string]any{"scopes": []string{data.ScopeCallsRuntime}})
	deep := func(n int) string { return strings.Repeat(`{"a":`, n-1) + `{}` + strings.Repeat(`}`, n-1) }
	w.s.Run(t, []testkit.Scenario{
		{Name: "a runtime key cannot read a call", Method: "GET", Path: "/api/v1/calls/" + w.callB, Token: tok(runtime), Status: 403},
		{Name: "nor through an empty update", Method: "PUT", Path: "/api/v1/calls/" + w.callB, Token: tok(runtime), Body: `{}`, Status: 204,
			Check: func(t *testing.T, s *testkit.Server, r *testkit.Response) {
				if len(r.Body) != 0 {
					t.Errorf("a 204 with a body: %s", r.Body)
				}
			}},
		{Name: "its update is made", Method: "PUT", Path: "/api/v1/calls/" + w.callA, Token: tok(runtime), Body: `{"status":"ongoing"}`, Status: 204},
		{Name: "as the owner reads", Method: "GET", Path: "/api/v1/calls/" + w.callA, Token: testkit.AsOwner, Status: 200, Contains: []string{`"status":"ongoing"`}},
		// A hold lifted lets retention delete the call, which the runtime key may not.
		{Name: "the owner holds a call", Method: "PUT", Path: "/api/v1/calls/" + w.callA, Token: testkit.AsOwner, Body: `{"legal_hold":true}`, Status: 200},
		{Name: "a runtime key cannot lift the hold", Method: "PUT", Path: "/api/v1/calls/" + w.callA, Token: tok(runtime), Body: `{"legal_hold":false,"status":"ended"}`, Status: 403,
			Contains: []string{`"code":"forbidden"`, "lacks the call_history:write scope"}},
		{Name: "nor set one", Method: "PUT", Path: "/api/v1/calls/" + w.callB, Token: tok(runtime), Body: `{"legal_hold":true}`, Status: 403},
		{Name: "the hold stands, the call unchanged", Method: "GET", Path: "/api/v1/calls/" + w.callA, Token: testkit.AsOwner, Status: 200, Contains: []string{`"legal_hold":true`, `"status":"ongoing"`}},
		{Name: "a key with call_history:write lifts it", Method: "PUT", Path: "/api/v1/calls/" + w.callA, Body: `{"legal_hold":false}`, Status: 200, Contains: []string{`"legal_hold":false`},
			Token: tok(w.key(t, w.s.Owner.Token, map[string]any{"scopes": []string{"call_history:write"}}))},
		{Name: "32 levels", Method: "PUT", Path: "/api/v1/calls/" + w.callA, Token: testkit.AsOwner, Body: `{"variables":` + deep(32) + `}`, Status: 200},
		{Name: "33 levels", Method: "PUT", Path: "/api/v1/calls/" + w.callA, Token: testkit.AsOwner,
			Body: `{"variables":` + deep(33) + `,"analysis":` + deep(33) + `,"metadata":` + deep(3000) + `}`, Fields: []string{"variables", "analysis", "metadata"}},
		{Name: "a registration 3000 levels deep", Method: "POST", Path: "/api/v1/calls", Token: testkit.AsOwner,
			Body: `{"agent_id":"` + w.a + `","direction":"web","metadata":` + deep(3000) + `}`, Fields: []string{"metadata"}},
		{Name: "a recording_url with a space and markup", Method: "PUT", Path: "/api/v1/calls/" + w.callA, Token: testkit.AsOwner,
			Body: `{"recording_url":"https://rec.example.com/a b<script>alert(1)</script>"}`, Fields: []string{"recording_url"}},
		{Name: "a recording_url escaped", Method: "PUT", Path: "/api/v1/calls/" + w.callA, Token: testkit.AsOwner,
			Body: `{"recording_url":"https://rec.example.com/a%20b?x=1"}`, Status: 200},
		{Name: "the catalog with agents:read", Method: "GET", Path: "/api/v1/catalog", Token: tok(w.key(t, w.s.Owner.Token, map[string]any{"scopes": []string{"agents:read"}})), Status: 200},
		{Name: "the export with workspace:admin", Method: "GET", Path: fmt.Sprintf("/api/v1/workspaces/%s/export", w.ws),
			Token: tok(w.key(t, w.s.Owner.Token, map[string]any{"scopes": []string{data.ScopeWorkspaceAdmin}})), Status: 200},
	})
}

// tok is a Scenario token function for a fixed token.
func tok(token string) func(*testkit.Server) string {
	return func(*testkit.Server) string { return token }
}
