package server_test

import (
	"reflect"
	"testing"
)

func TestWorkspaceUsers(t *testing.T) {
	e := newEnv(t)
	owner := e.newUser("ivy@example.com", false)
	joe := e.newUser("joe@example.com", false)
	kim := e.newUser("kim@example.com", false)
	r := e.do("POST", "/api/v1/workspaces", owner.Token, map[string]any{"name": "team"})
	ws := r.Data()["id"].(string)
	base := "/api/v1/workspaces/" + ws + "/users"

	// Add with defaults: every module, agent_ids [].
	r = e.do("POST", base, owner.Token, map[string]any{"id": joe.ID, "role": "developer"})
	expect(t, r, 201)
	want := map[string]any{
		"id": joe.ID, "name": "joe", "email": joe.Email, "role": "developer", "is_owner": false,
		"modules":   []any{"agents", "knowledge_base", "phone_numbers", "call_history", "analytics"},
		"agent_ids": []any{},
	}
	if !reflect.DeepEqual(r.Data(), want) {
		t.Errorf("added %s\nwant %v", r.Body, want)
	}
	if r.Header.Get("ETag") == "" {
		t.Error("no ETag")
	}
	r = e.do("POST", base, owner.Token, map[string]any{"id": kim.ID, "role": "member", "modules": []string{"call_history"}, "agent_ids": []string{}})
	expect(t, r, 201)
	if !reflect.DeepEqual(r.Data()["modules"], []any{"call_history"}) {
		t.Errorf("modules %v", r.Data()["modules"])
	}

	// Failures.
	r = e.do("POST", base, owner.Token, map[string]any{"id": joe.ID, "role": "member"})
	expect(t, r, 409)
	if r.Code() != "conflict" {
		t.Errorf("code %s", r.Code())
	}
	expectFields(t, e.do("POST", base, owner.Token, map[string]any{"id": "usr_01JD6000000000000000000000", "role": "member"}), "id")
	expectFields(t, e.do("POST", base, owner.Token, map[string]any{}), "id", "role")
	expectFields(t, e.do("POST", base, owner.Token, map[string]any{"id": e.Owner.ID, "role": "boss", "modules": []string{"agents", "billing", "agents"}}), "role", "modules.1", "modules.2")
	expectFields(t, e.do("POST", base, owner.Token, map[string]any{"id": e.Owner.ID, "role": "member", "agent_ids": []string{"agt_01JD6000000000000000000000"}}), "agent_ids.0")
	expectFields(t, e.do("POST", base, owner.Token, map[string]any{"id": e.Owner.ID, "role": "member", "agent_ids": []string{"agt_01JD6000000000000000000000", "nope"}}), "agent_ids.1")
	expectFields(t, e.do("POST", base, owner.Token, map[string]any{"id": e.Owner.ID, "role": "member", "agent_ids": nil}), "agent_ids")
	expectFields(t, e.do("POST", base, owner.Token, map[string]any{"id": e.Owner.ID, "role": "member", "modules": nil}), "modules")

	// List and show.
	// A route with {workspace_id} acts in that workspace whatever the token's own
	// workspace, as long as the caller is a member there.
	expect(t, e.do("GET", base, joe.Token, nil), 200)
	joeTok := e.tokenIn(joe, ws)
	l := e.do("GET", base, joeTok, nil)
	expect(t, l, 200)
	if len(l.List()) != 3 {
		t.Errorf("list %s", l.Body)
	}
	s := e.do("GET", base+"/"+kim.ID, joeTok, nil)
	expect(t, s, 200)
	if s.Data()["role"] != "member" || s.Data()["email"] != kim.Email {
		t.Errorf("show %s", s.Body)
	}
	expect(t, e.do("GET", base+"/"+e.Owner.ID, joeTok, nil), 404)

	// Update: modules, agent_ids, role; admins and owners always hold every module.
	u := e.do("PUT", base+"/"+kim.ID, owner.Token, map[string]any{"modules": []string{"agents", "analytics"}})
	expect(t, u, 200)
	if !reflect.DeepEqual(u.Data()["modules"], []any{"agents", "analytics"}) || u.Data()["role"] != "member" {
		t.Errorf("update %s", u.Body)
	}
	u = e.do("PUT", base+"/"+kim.ID, owner.Token, map[string]any{"role": "admin"})
	expect(t, u, 200)
	if len(u.Data()["modules"].([]any)) != 5 {
		t.Errorf("admin modules %v", u.Data()["modules"])
	}
	expectFields(t, e.do("PUT", base+"/"+kim.ID, owner.Token, map[string]any{"role": "root", "agent_ids": []string{"x"}}), "role", "agent_ids.0")
	expectFields(t, e.do("PUT", base+"/"+kim.ID, owner.Token, map[string]any{"role": nil}), "role")
	expect(t, e.do("PUT", base+"/"+e.Owner.ID, owner.Token, map[string]any{"role": "member"}), 404)

	// Remove; the removed member's tokens for the workspace stop working.
	kimTok := e.tokenIn(kim, ws)
	expect(t, e.do("DELETE", base+"/"+kim.ID, owner.Token, nil), 204)
	expect(t, e.do("GET", base+"/"+kim.ID, owner.Token, nil), 404)
	expect(t, e.do("DELETE", base+"/"+kim.ID, owner.Token, nil), 404)
	expect(t, e.do("GET", "/api/v1/user", kimTok, nil), 401)
	expect(t, e.do("GET", "/api/v1/user", kim.Token, nil), 200)
}

func TestOwnerRules(t *testing.T) {
	e := newEnv(t)
	owner := e.newUser("lea@example.com", false)
	admin := e.newUser("max@example.com", false)
	other := e.newUser("ned@example.com", false)
	r := e.do("POST", "/api/v1/workspaces", owner.Token, map[string]any{"name": "team"})
	ws := r.Data()["id"].(string)
	base := "/api/v1/workspaces/" + ws + "/users"
	expect(t, e.do("POST", base, owner.Token, map[string]any{"id": admin.ID, "role": "admin"}), 201)
	adminTok := e.tokenIn(admin, ws)

	// The last owner can neither leave nor be demoted.
	expectFields(t, e.do("DELETE", base+"/"+owner.ID, owner.Token, nil), "id")
	expectFields(t, e.do("PUT", base+"/"+owner.ID, owner.Token, map[string]any{"role": "admin"}), "role")

	// Admins cannot grant owner or touch owners.
	expect(t, e.do("POST", base, adminTok, map[string]any{"id": other.ID, "role": "owner"}), 403)
	expect(t, e.do("PUT", base+"/"+owner.ID, adminTok, map[string]any{"role": "member"}), 403)
	expect(t, e.do("PUT", base+"/"+owner.ID, adminTok, map[string]any{"modules": []string{"agents"}}), 403)
	expect(t, e.do("DELETE", base+"/"+owner.ID, adminTok, nil), 403)
	expect(t, e.do("PUT", base+"/"+admin.ID, adminTok, map[string]any{"role": "owner"}), 403)

	// An owner can grant owner; with two owners one may step down or leave.
	expect(t, e.do("PUT", base+"/"+admin.ID, owner.Token, map[string]any{"role": "owner"}), 200)
	r = e.do("PUT", base+"/"+owner.ID, owner.Token, map[string]any{"role": "developer"})
	expect(t, r, 200)
	if r.Data()["is_owner"] != false {
		t.Errorf("demoted %s", r.Body)
	}
	expectFields(t, e.do("DELETE", base+"/"+admin.ID, adminTok, nil), "id") // now the last owner
	expect(t, e.do("POST", base, adminTok, map[string]any{"id": other.ID, "role": "owner"}), 201)
	expect(t, e.do("DELETE", base+"/"+admin.ID, adminTok, nil), 204)
	// A user cannot be removed from their personal workspace.
	expect(t, e.do("POST", "/api/v1/workspaces/"+owner.WorkspaceID+"/users", owner.Token, map[string]any{"id": other.ID, "role": "owner"}), 201)
	expectFields(t, e.do("DELETE", "/api/v1/workspaces/"+owner.WorkspaceID+"/users/"+owner.ID, owner.Token, nil), "id")
}
