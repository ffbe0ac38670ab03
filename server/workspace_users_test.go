package server_test

import (
	"reflect"
	"testing"

	"github.com/voiceapi/voiceapi/internal/testkit"
)

func TestWorkspaceUsers(t *testing.T) {
	e := newEnv(t)
	w := &teamWorkspace{e: e, owner: e.newUser("ivy@example.com", false), joe: e.newUser("joe@example.com", false), kim: e.newUser("kim@example.com", false)}
	r := e.do("POST", "/api/v1/workspaces", w.owner.Token, map[string]any{"name": "team"})
	w.ws = r.Data()["id"].(string)
	w.base = "/api/v1/workspaces/" + w.ws + "/users"
	w.addMembers(t)
	w.checkAddRefusals(t)
	w.checkListAndShow(t)
	w.checkUpdates(t)
	w.checkRemove(t)
}

// teamWorkspace is the owner's workspace team, where joe and kim are added.
type teamWorkspace struct {
	e               *env
	owner, joe, kim *testUser
	ws, base        string // base is the workspace's users route
}

// addMembers adds joe with the defaults (every module, agent_ids []) and kim with one
// module.
func (w *teamWorkspace) addMembers(t *testing.T) {
	t.Helper()
	r := w.e.do("POST", w.base, w.owner.Token, map[string]any{"id": w.joe.ID, "role": "developer"})
	expect(t, r, 201)
	want := map[string]any{
		"id": w.joe.ID, "name": "joe", "email": w.joe.Email, "role": "developer", "is_owner": false,
		"modules":   []any{"agents", "knowledge_base", "phone_numbers", "call_history", "analytics"},
		"agent_ids": []any{},
	}
	if !reflect.DeepEqual(r.Data(), want) {
		t.Errorf("added %s\nwant %v", r.Body, want)
	}
	if r.Header.Get("ETag") == "" {
		t.Error("no ETag")
	}
	r = w.e.do("POST", w.base, w.owner.Token, map[string]any{"id": w.kim.ID, "role": "member", "modules": []string{"call_history"}, "agent_ids": []string{}})
	expect(t, r, 201)
	if !reflect.DeepEqual(r.Data()["modules"], []any{"call_history"}) {
		t.Errorf("modules %v", r.Data()["modules"])
	}
}

// checkAddRefusals checks adds refused: a member twice, and bad fields.
func (w *teamWorkspace) checkAddRefusals(t *testing.T) {
	t.Helper()
	r := w.e.do("POST", w.base, w.owner.Token, map[string]any{"id": w.joe.ID, "role": "member"})
	expect(t, r, 409)
	if r.Code() != "conflict" {
		t.Errorf("code %s", r.Code())
	}
	expectFields(t, w.e.do("POST", w.base, w.owner.Token, map[string]any{"id": "usr_01JD6000000000000000000000", "role": "member"}), "id")
	expectFields(t, w.e.do("POST", w.base, w.owner.Token, map[string]any{}), "id", "role")
	expectFields(t, w.e.do("POST", w.base, w.owner.Token, map[string]any{"id": w.e.Owner.ID, "role": "boss", "modules": []string{"agents", "billing", "agents"}}), "role", "modules.1", "modules.2")
	expectFields(t, w.e.do("POST", w.base, w.owner.Token, map[string]any{"id": w.e.Owner.ID, "role": "member", "agent_ids": []string{"agt_01JD6000000000000000000000"}}), "agent_ids.0")
	expectFields(t, w.e.do("POST", w.base, w.owner.Token, map[string]any{"id": w.e.Owner.ID, "role": "member", "agent_ids": []string{"agt_01JD6000000000000000000000", "nope"}}), "agent_ids.0", "agent_ids.1") // every fault at once
	expectFields(t, w.e.do("POST", w.base, w.owner.Token, map[string]any{"id": w.e.Owner.ID, "role": "member", "agent_ids": nil}), "agent_ids")
	expectFields(t, w.e.do("POST", w.base, w.owner.Token, map[string]any{"id": w.e.Owner.ID, "role": "member", "modules": nil}), "modules")
}

// checkListAndShow checks the list and a member shown. A route with {workspace_id} acts
// in that workspace whatever the token's own workspace, as long as the caller is a
// member there.
func (w *teamWorkspace) checkListAndShow(t *testing.T) {
	t.Helper()
	expect(t, w.e.do("GET", w.base, w.joe.Token, nil), 200)
	joeTok := w.e.tokenIn(w.joe, w.ws)
	l := w.e.do("GET", w.base, joeTok, nil)
	expect(t, l, 200)
	if len(l.List()) != 3 {
		t.Errorf("list %s", l.Body)
	}
	s := w.e.do("GET", w.base+"/"+w.kim.ID, joeTok, nil)
	expect(t, s, 200)
	if s.Data()["role"] != "member" || s.Data()["email"] != w.kim.Email {
		t.Errorf("show %s", s.Body)
	}
	expect(t, w.e.do("GET", w.base+"/"+w.e.Owner.ID, joeTok, nil), 404)
}

// checkUpdates checks updates of modules, agent_ids and role; admins and owners always
// hold every module.
func (w *teamWorkspace) checkUpdates(t *testing.T) {
	t.Helper()
	u := w.e.do("PUT", w.base+"/"+w.kim.ID, w.owner.Token, map[string]any{"modules": []string{"agents", "analytics"}})
	expect(t, u, 200)
	if !reflect.DeepEqual(u.Data()["modules"], []any{"agents", "analytics"}) || u.Data()["role"] != "member" {
		t.Errorf("update %s", u.Body)
	}
	u = w.e.do("PUT", w.base+"/"+w.kim.ID, w.owner.Token, map[string]any{"role": "admin"})
	expect(t, u, 200)
	if len(u.Data()["modules"].([]any)) != 5 {
		t.Errorf("admin modules %v", u.Data()["modules"])
	}
	expectFields(t, w.e.do("PUT", w.base+"/"+w.kim.ID, w.owner.Token, map[string]any{"role": "root", "agent_ids": []string{"x"}}), "role", "agent_ids.0")
	expectFields(t, w.e.do("PUT", w.base+"/"+w.kim.ID, w.owner.Token, map[string]any{"role": nil}), "role")
	expect(t, w.e.do("PUT", w.base+"/"+w.e.Owner.ID, w.owner.Token, map[string]any{"role": "member"}), 404)
}

// checkRemove removes kim: the removed member's tokens for the workspace stop working.
func (w *teamWorkspace) checkRemove(t *testing.T) {
	t.Helper()
	kimTok := w.e.tokenIn(w.kim, w.ws)
	expect(t, w.e.do("DELETE", w.base+"/"+w.kim.ID, w.owner.Token, nil), 204)
	expect(t, w.e.do("GET", w.base+"/"+w.kim.ID, w.owner.Token, nil), 404)
	expect(t, w.e.do("DELETE", w.base+"/"+w.kim.ID, w.owner.Token, nil), 404)
	expect(t, w.e.do("GET", "/api/v1/user", kimTok, nil), 401)
	expect(t, w.e.do("GET", "/api/v1/user", w.kim.Token, nil), 200)
}

// TestOwnerRules walks the owner rules as a scenario table: the last owner can neither
// leave nor be demoted, admins cannot grant owner or touch owners, an owner can, and
// nobody leaves their personal workspace.
func TestOwnerRules(t *testing.T) {
	s := testkit.NewServer(t, nil)
	owner := s.NewUser("lea@example.com", false)
	other := s.NewUser("ned@example.com", false)
	ws := s.Do("POST", "/api/v1/workspaces", owner.Token, map[string]any{"name": "team"}).Data()["id"].(string)
	admin := s.NewUser("max@example.com", false)
	s.Do("POST", "/api/v1/workspaces/"+ws+"/users", owner.Token, map[string]any{"id": admin.ID, "role": "admin"})
	adminTok := s.TokenIn(admin, ws)
	byOwner := testkit.TokenOf(func(*testkit.Server) *testkit.Account { return owner })
	byAdmin := func(*testkit.Server) string { return adminTok }
	vars := map[string]string{"ws": ws, "owner": owner.ID, "admin": admin.ID, "other": other.ID, "personal": owner.WorkspaceID}
	base := "/api/v1/workspaces/{ws}/users"
	scenarios := []testkit.Scenario{
		{Name: "last owner cannot leave", Method: "DELETE", Path: base + "/{owner}", Token: byOwner, Fields: []string{"id"}},
		{Name: "last owner cannot be demoted", Method: "PUT", Path: base + "/{owner}", Token: byOwner, Body: `{"role":"admin"}`, Fields: []string{"role"}},
		{Name: "admin cannot grant owner", Method: "POST", Path: base, Token: byAdmin, Body: `{"id":"{other}","role":"owner"}`, Status: 403, Code: "forbidden"},
		{Name: "admin cannot demote an owner", Method: "PUT", Path: base + "/{owner}", Token: byAdmin, Body: `{"role":"member"}`, Status: 403, Code: "forbidden"},
		{Name: "admin cannot change an owner's modules", Method: "PUT", Path: base + "/{owner}", Token: byAdmin, Body: `{"modules":["agents"]}`, Status: 403},
		{Name: "admin cannot remove an owner", Method: "DELETE", Path: base + "/{owner}", Token: byAdmin, Status: 403},
		{Name: "admin cannot promote itself", Method: "PUT", Path: base + "/{admin}", Token: byAdmin, Body: `{"role":"owner"}`, Status: 403},
		{Name: "owner grants owner", Method: "PUT", Path: base + "/{admin}", Token: byOwner, Body: `{"role":"owner"}`, Status: 200, Contains: []string{`"is_owner":true`}},
		{Name: "with two owners one steps down", Method: "PUT", Path: base + "/{owner}", Token: byOwner, Body: `{"role":"developer"}`, Status: 200, Contains: []string{`"is_owner":false`}},
		{Name: "the remaining owner is the last one", Method: "DELETE", Path: base + "/{admin}", Token: byAdmin, Fields: []string{"id"}},
		{Name: "a new owner joins", Method: "POST", Path: base, Token: byAdmin, Body: `{"id":"{other}","role":"owner"}`, Status: 201},
		{Name: "then an owner may leave", Method: "DELETE", Path: base + "/{admin}", Token: byAdmin, Status: 204},
		{Name: "an owner joins a personal workspace", Method: "POST", Path: "/api/v1/workspaces/{personal}/users", Token: byOwner, Body: `{"id":"{other}","role":"owner"}`, Status: 201},
		{Name: "nobody leaves their personal workspace", Method: "DELETE", Path: "/api/v1/workspaces/{personal}/users/{owner}", Token: byOwner, Fields: []string{"id"}},
	}
	for i := range scenarios {
		scenarios[i].Vars = vars
	}
	s.Run(t, scenarios)
}
