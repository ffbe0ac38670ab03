package server_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/internal/testkit"
)

// newKey creates an API key with token and returns its token and id.
func newKey(t *testing.T, s *testkit.Server, token string, body map[string]any) (string, string) {
	t.Helper()
	r := s.Do("POST", "/api/v1/api-keys", token, body)
	testkit.Expect(t, r, 201)
	return r.JSON()["token"].(string), fmt.Sprint(r.Data()["id"])
}

func TestScopedKeys(t *testing.T) {
	s := testkit.NewServer(t, nil)
	ws := s.Owner.WorkspaceID
	agentA := s.Do("POST", "/api/v1/agents", s.Owner.Token, map[string]any{"name": "A"}).Data()["id"].(string)
	agentB := s.Do("POST", "/api/v1/agents", s.Owner.Token, map[string]any{"name": "B"}).Data()["id"].(string)
	reader, _ := newKey(t, s, s.Owner.Token, map[string]any{"name": "reader", "scopes": []string{"agents:read"}})
	writer, _ := newKey(t, s, s.Owner.Token, map[string]any{"name": "writer", "scopes": []string{"agents:write"}})
	narrow, _ := newKey(t, s, s.Owner.Token, map[string]any{"name": "narrow", "agent_ids": []string{agentA}})
	runtime, _ := newKey(t, s, s.Owner.Token, map[string]any{"name": "runtime", "scopes": []string{"calls:runtime"}})
	tok := func(v string) func(*testkit.Server) string { return func(*testkit.Server) string { return v } }
	vars := map[string]string{"a": agentA, "b": agentB, "ws": ws}
	scenarios := []testkit.Scenario{
		{Name: "the record shows scopes and agent_ids", Method: "GET", Path: "/api/v1/api-keys?per_page=100", Token: testkit.AsOwner, Status: 200,
			Contains: []string{`"scopes":["agents:read"]`, `"agent_ids":["{a}"]`, `"scopes":null`}},
		{Name: "a read scope reads", Method: "GET", Path: "/api/v1/agents/{a}", Token: tok(reader), Status: 200},
		{Name: "a read scope cannot write", Method: "PUT", Path: "/api/v1/agents/{a}", Token: tok(reader), Body: `{"name":"x"}`, Status: 403, Contains: []string{"agents:write"}},
		{Name: "another module's scope is missing", Method: "GET", Path: "/api/v1/numbers", Token: tok(reader), Status: 403, Contains: []string{"phone_numbers:read"}},
		{Name: "a write scope includes read", Method: "GET", Path: "/api/v1/agents", Token: tok(writer), Status: 200},
		{Name: "a write scope writes", Method: "PUT", Path: "/api/v1/agents/{b}", Token: tok(writer), Body: `{"name":"B2"}`, Status: 200},
		{Name: "any key reads its own profile", Method: "GET", Path: "/api/v1/user", Token: tok(reader), Status: 200},
		{Name: "a scoped key cannot change the account", Method: "PUT", Path: "/api/v1/user", Token: tok(reader), Body: `{"name":"x"}`, Status: 403, Code: "forbidden"},
		{Name: "a scoped key cannot manage members", Method: "GET", Path: "/api/v1/workspaces/{ws}/users", Token: tok(reader), Status: 403, Contains: []string{"workspace:admin"}},
		{Name: "a scoped key cannot make a wider key", Method: "POST", Path: "/api/v1/api-keys", Token: tok(reader), Body: `{"name":"k","scopes":["agents:write"]}`,
			Status: 403, Code: "forbidden", Contains: []string{"agents:write"}},
		{Name: "a key made without scopes has the scoped key's", Method: "POST", Path: "/api/v1/api-keys", Token: tok(reader), Body: `{"name":"k"}`,
			Status: 201, Contains: []string{`"scopes":["agents:read"]`}},
		{Name: "but a key within its own", Method: "POST", Path: "/api/v1/api-keys", Token: tok(reader), Body: `{"name":"k","scopes":["agents:read"]}`, Status: 201},
		{Name: "agent_ids narrow the list", Method: "GET", Path: "/api/v1/agents", Token: tok(narrow), Status: 200,
			Check: func(t *testing.T, s *testkit.Server, r *testkit.Response) {
				if ids := itemIDs(r.List()); len(ids) != 1 || ids[0] != agentA {
					t.Errorf("a key narrowed to agent A lists %v", ids)
				}
			}},
		{Name: "an agent outside agent_ids is not found", Method: "GET", Path: "/api/v1/agents/{b}", Token: tok(narrow), Status: 404},
		{Name: "a narrowed key cannot create agents", Method: "POST", Path: "/api/v1/agents", Token: tok(narrow), Body: `{"name":"C"}`, Status: 403},
		{Name: "the runtime preset registers calls", Method: "POST", Path: "/api/v1/calls", Token: tok(runtime), Body: `{"agent_id":"{a}","direction":"web"}`, Status: 201},
		{Name: "the runtime preset reads agents", Method: "GET", Path: "/api/v1/agents/{a}", Token: tok(runtime), Status: 200},
		{Name: "the runtime preset cannot delete agents", Method: "DELETE", Path: "/api/v1/agents/{a}", Token: tok(runtime), Status: 403},
		{Name: "the runtime preset cannot list calls", Method: "GET", Path: "/api/v1/calls", Token: tok(runtime), Status: 403, Contains: []string{"call_history:read"}},
	}
	for i := range scenarios {
		scenarios[i].Vars = vars
	}
	s.Run(t, scenarios)
}

func TestScopedKeyBodies(t *testing.T) {
	s := testkit.NewServer(t, nil)
	other := s.NewUser("other@example.com", false)
	foreign := s.Do("POST", "/api/v1/agents", other.Token, map[string]any{"name": "theirs"}).Data()["id"].(string)
	s.Run(t, []testkit.Scenario{
		{Name: "no scope at all", Method: "POST", Path: "/api/v1/api-keys", Token: testkit.AsOwner, Body: `{"name":"k","scopes":[]}`, Fields: []string{"scopes"}},
		{Name: "unknown and repeated scopes", Method: "POST", Path: "/api/v1/api-keys", Token: testkit.AsOwner,
			Body: `{"name":"k","scopes":["bogus","agents:read","agents:read"]}`, Fields: []string{"scopes.0", "scopes.2"}},
		{Name: "a malformed agent id", Method: "POST", Path: "/api/v1/api-keys", Token: testkit.AsOwner, Body: `{"name":"k","agent_ids":["nope"]}`, Fields: []string{"agent_ids.0"}},
		{Name: "another workspace's agent", Method: "POST", Path: "/api/v1/api-keys", Token: testkit.AsOwner,
			Body: `{"name":"k","agent_ids":["` + foreign + `"]}`, Fields: []string{"agent_ids.0"}},
		{Name: "scopes of the wrong type", Method: "POST", Path: "/api/v1/api-keys", Token: testkit.AsOwner, Body: `{"name":"","scopes":"agents:read"}`, Fields: []string{"name", "scopes"}},
		{Name: "nothing was created", Method: "GET", Path: "/api/v1/api-keys", Token: testkit.AsOwner, Status: 200,
			Check: func(t *testing.T, s *testkit.Server, r *testkit.Response) {
				if n := len(r.List()); n != 1 {
					t.Errorf("%d keys after refused creates, want the test key only", n)
				}
			}},
	})
}

// A key's rights are its user's as they are now: demoting the user narrows every key.
func TestScopedKeyFollowsItsUser(t *testing.T) {
	s := testkit.NewServer(t, nil)
	ws := s.Owner.WorkspaceID
	dev := s.Member("dev@example.com", ws, "developer", nil, nil)
	key, _ := newKey(t, s, dev.Token, map[string]any{"name": "k", "scopes": []string{"agents:write"}})
	testkit.Expect(t, s.Do("POST", "/api/v1/agents", key, map[string]any{"name": "ok"}), 201)
	testkit.Expect(t, s.Do("PUT", "/api/v1/workspaces/"+ws+"/users/"+dev.ID, s.Owner.Token, map[string]any{"role": "member"}), 200)
	r := s.Do("POST", "/api/v1/agents", key, map[string]any{"name": "no"})
	testkit.Expect(t, r, 403)
	if !strings.Contains(string(r.Body), "role") {
		t.Errorf("refusal does not name the role: %s", r.Body)
	}
}

func TestWorkspaceAPIKeys(t *testing.T) {
	s := testkit.NewServer(t, nil)
	ws := s.Owner.WorkspaceID
	admin := s.Member("admin@example.com", ws, "admin", nil, nil)
	dev := s.Member("dev@example.com", ws, "developer", nil, nil)
	devKey, devKeyID := newKey(t, s, dev.Token, map[string]any{"name": "laptop"})
	_, ownerKeyID := newKey(t, s, s.Owner.Token, map[string]any{"name": "owner's"})
	outsider := s.NewUser("out@example.com", false)
	_, outsiderKeyID := newKey(t, s, outsider.Token, map[string]any{"name": "elsewhere"})
	base := "/api/v1/workspaces/" + ws + "/api-keys"
	s.Run(t, []testkit.Scenario{
		{Name: "owners list every member's keys", Method: "GET", Path: base + "?per_page=100", Token: testkit.AsOwner, Status: 200,
			Contains: []string{`"user_id":"` + dev.ID + `"`, `"name":"laptop"`}},
		{Name: "a developer may not", Method: "GET", Path: base, Token: testkit.TokenOf(func(*testkit.Server) *testkit.Account { return dev }), Status: 403},
		{Name: "an admin cannot revoke an owner's key", Method: "DELETE", Path: base + "/" + ownerKeyID, Token: testkit.TokenOf(func(*testkit.Server) *testkit.Account { return admin }), Status: 403},
		{Name: "another workspace's key is not found", Method: "DELETE", Path: base + "/" + outsiderKeyID, Token: testkit.AsOwner, Status: 404},
		{Name: "an admin revokes a member's key", Method: "DELETE", Path: base + "/" + devKeyID, Token: testkit.TokenOf(func(*testkit.Server) *testkit.Account { return admin }), Status: 204},
		{Name: "the revoked key is refused", Method: "GET", Path: "/api/v1/user", Token: func(*testkit.Server) string { return devKey }, Status: 401},
		{Name: "the member's other tokens still work", Method: "GET", Path: "/api/v1/user", Token: testkit.TokenOf(func(*testkit.Server) *testkit.Account { return dev }), Status: 200},
	})
}

// Changing a password ends the user's other login sessions; API keys stay.
func TestPasswordChangeRevokesOtherLogins(t *testing.T) {
	s := testkit.NewServer(t, nil)
	u := s.NewUser("pat@example.com", false)
	login := func() string {
		r := s.Do("POST", "/api/v1/auth/login", "", map[string]any{"email": u.Email, "password": u.Password})
		testkit.Expect(t, r, 200)
		return r.JSON()["token"].(string)
	}
	here, elsewhere := login(), login()
	r := s.Do("PUT", "/api/v1/user", here, map[string]any{"password": "a-new-password", "current_password": u.Password})
	testkit.Expect(t, r, 200)
	testkit.Expect(t, s.Do("GET", "/api/v1/user", elsewhere, nil), 401)
	testkit.Expect(t, s.Do("GET", "/api/v1/user", here, nil), 200)
	testkit.Expect(t, s.Do("GET", "/api/v1/user", u.Token, nil), 200)
	// A name change is not a password change: sessions stay.
	other := login2(t, s, u.Email, "a-new-password")
	testkit.Expect(t, s.Do("PUT", "/api/v1/user", here, map[string]any{"name": "Pat"}), 200)
	testkit.Expect(t, s.Do("GET", "/api/v1/user", other, nil), 200)
}

func login2(t *testing.T, s *testkit.Server, email, password string) string {
	t.Helper()
	r := s.Do("POST", "/api/v1/auth/login", "", map[string]any{"email": email, "password": password})
	testkit.Expect(t, r, 200)
	return r.JSON()["token"].(string)
}
