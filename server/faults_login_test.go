package server_test

import "testing"

// Conventions §5: login's workspace_id is optional; §1: a nullable field accepts null.
// Absent and null both bind the token to the personal workspace; an empty (or blank)
// workspace_id, which can name no workspace, is a 422 naming it with the body's other
// faults, and is no attempt at the credentials (it reveals nothing, and issues no token);
// a workspace the user is not in is still the one 422 on email. Before, "" meant the
// personal workspace and null was a 422.
func TestFaultsLoginWorkspaceID(t *testing.T) {
	e := newEnv(t)
	u := e.newUser("ann@example.com", false)
	other := e.newUser("bob@example.com", false)
	login := func(body map[string]any) *response {
		return e.do("POST", "/api/v1/auth/login", "", body)
	}
	for _, c := range []struct {
		name string
		body map[string]any
	}{
		{"absent", map[string]any{"email": u.Email, "password": u.Password}},
		{"null", map[string]any{"email": u.Email, "password": u.Password, "workspace_id": nil}},
	} {
		r := login(c.body)
		expect(t, r, 200)
		me := e.do("GET", "/api/v1/user", r.JSON()["token"].(string), nil)
		if me.Data()["current_workspace_id"] != u.WorkspaceID {
			t.Errorf("workspace_id %s: the token acts in %v, not the personal workspace", c.name, me.Data()["current_workspace_id"])
		}
	}
	keys := len(e.do("GET", "/api/v1/api-keys", u.Token, nil).List())
	expectFields(t, login(map[string]any{"email": u.Email, "password": u.Password, "workspace_id": ""}), "workspace_id")
	expectFields(t, login(map[string]any{"email": u.Email, "password": "wrong", "workspace_id": " "}), "workspace_id")
	expectFields(t, login(map[string]any{"email": "", "password": "", "workspace_id": ""}), "email", "password", "workspace_id")
	expectFields(t, login(map[string]any{"email": u.Email, "password": u.Password, "workspace_id": other.WorkspaceID}), "email")
	if n := len(e.do("GET", "/api/v1/api-keys", u.Token, nil).List()); n != keys {
		t.Errorf("refused logins left %d keys, %d before", n, keys)
	}
}
