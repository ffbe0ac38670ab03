package server_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
)

func TestMe(t *testing.T) {
	e := newEnv(t)
	u := e.newUser("carol@example.com", false)
	r := e.do("GET", "/api/v1/user", u.Token, nil)
	expect(t, r, 200)
	d := r.Data()
	for _, f := range []string{"id", "name", "email", "is_admin", "current_workspace_id", "created_at", "updated_at"} {
		if _, ok := d[f]; !ok {
			t.Errorf("user lacks %s: %s", f, r.Body)
		}
	}
	if d["email"] != u.Email || d["is_admin"] != false || d["current_workspace_id"] != u.WorkspaceID {
		t.Errorf("me: %s", r.Body)
	}
	if strings.Contains(string(r.Body), "password") {
		t.Errorf("password data in %s", r.Body)
	}

	// Name and email; the email is normalized and must be free.
	r = e.do("PUT", "/api/v1/user", u.Token, map[string]any{"name": "Carol C", "email": "Carol2@Example.com"})
	expect(t, r, 200)
	if r.Data()["name"] != "Carol C" || r.Data()["email"] != "carol2@example.com" {
		t.Errorf("update: %s", r.Body)
	}
	r = e.do("PUT", "/api/v1/user", u.Token, map[string]any{"email": e.Owner.Email})
	expect(t, r, 409)
	if r.Code() != "conflict" {
		t.Errorf("code %s", r.Code())
	}
	expect(t, e.do("PUT", "/api/v1/user", u.Token, map[string]any{"email": "CAROL2@example.com"}), 200)
	expectFields(t, e.do("PUT", "/api/v1/user", u.Token, map[string]any{"email": "not-an-email", "name": ""}), "email", "name")
	expectFields(t, e.do("PUT", "/api/v1/user", u.Token, map[string]any{"name": nil}), "name")
	expectFields(t, e.do("PUT", "/api/v1/user", u.Token, map[string]any{"is_admin": true}), "is_admin")
	expect(t, e.do("PUT", "/api/v1/user", u.Token, map[string]any{}), 200)

	// Password: needs the right current_password.
	expectFields(t, e.do("PUT", "/api/v1/user", u.Token, map[string]any{"password": "new-password-1"}), "current_password")
	expectFields(t, e.do("PUT", "/api/v1/user", u.Token, map[string]any{"password": "new-password-1", "current_password": "wrong"}), "current_password")
	expectFields(t, e.do("PUT", "/api/v1/user", u.Token, map[string]any{"password": "short", "current_password": u.Password}), "password")
	expect(t, e.do("PUT", "/api/v1/user", u.Token, map[string]any{"password": "new-password-1", "current_password": u.Password}), 200)
	expectFields(t, e.do("POST", "/api/v1/auth/login", "", map[string]any{"email": "carol2@example.com", "password": u.Password}), "email")
	expect(t, e.do("POST", "/api/v1/auth/login", "", map[string]any{"email": "carol2@example.com", "password": "new-password-1"}), 200)
}

func TestAdminUsers(t *testing.T) {
	e := newEnv(t)
	admin := e.Owner.Token
	plain := e.newUser("dave@example.com", false)

	// Non-admins: 403 on every admin route.
	for _, c := range []struct{ method, path string }{
		{"GET", "/api/v1/users"}, {"POST", "/api/v1/users"}, {"GET", "/api/v1/users/" + e.Owner.ID}, {"DELETE", "/api/v1/users/" + e.Owner.ID},
	} {
		var body any
		if c.method == "POST" {
			body = map[string]any{"name": "x", "email": "x@example.com", "password": "password1"}
		}
		r := e.do(c.method, c.path, plain.Token, body)
		expect(t, r, 403)
		if r.Code() != "forbidden" {
			t.Errorf("%s %s: code %s", c.method, c.path, r.Code())
		}
	}

	r := e.do("POST", "/api/v1/users", admin, map[string]any{"name": "Erin", "email": "Erin@Example.com", "password": "password-erin"})
	expect(t, r, 201)
	erin := r.Data()
	if erin["email"] != "erin@example.com" || erin["is_admin"] != false || !strings.HasPrefix(erin["id"].(string), "usr_") {
		t.Errorf("created: %s", r.Body)
	}
	if r.Header.Get("ETag") == "" {
		t.Error("no ETag")
	}
	expect(t, e.do("POST", "/api/v1/users", admin, map[string]any{"name": "Erin", "email": "erin@example.com", "password": "password-erin"}), 409)
	expectFields(t, e.do("POST", "/api/v1/users", admin, map[string]any{}), "name", "email", "password")
	if r := e.do("POST", "/auth/login", "", nil); r.Status != 404 { // outside /api: the console's 404 page
		t.Errorf("POST /auth/login: %d, want 404", r.Status)
	}
	login := e.do("POST", "/api/v1/auth/login", "", map[string]any{"email": "erin@example.com", "password": "password-erin"})
	expect(t, login, 200)
	erinTok := login.JSON()["token"].(string)

	l := e.do("GET", "/api/v1/users", admin, nil)
	expect(t, l, 200)
	if len(l.List()) != 3 || l.List()[0].(map[string]any)["id"] != erin["id"] {
		t.Errorf("list (newest first): %s", l.Body)
	}
	s := e.do("GET", "/api/v1/users/"+erin["id"].(string), admin, nil)
	expect(t, s, 200)
	if s.Data()["email"] != "erin@example.com" {
		t.Errorf("show: %s", s.Body)
	}
	expect(t, e.do("GET", "/api/v1/users/usr_nope", admin, nil), 404)

	// Delete: the account, its tokens and its personal workspace go.
	expect(t, e.do("DELETE", "/api/v1/users/"+erin["id"].(string), admin, nil), 204)
	expect(t, e.do("GET", "/api/v1/users/"+erin["id"].(string), admin, nil), 404)
	expect(t, e.do("GET", "/api/v1/user", erinTok, nil), 401)
	expect(t, e.do("DELETE", "/api/v1/users/"+erin["id"].(string), admin, nil), 404)
	if n := len(e.do("GET", "/api/v1/users", admin, nil).List()); n != 2 {
		t.Errorf("%d users after delete", n)
	}

	// The last owner of a shared workspace cannot be deleted.
	ws := e.do("POST", "/api/v1/workspaces", plain.Token, map[string]any{"name": "dave's team"})
	expect(t, ws, 201)
	expectFields(t, e.do("DELETE", "/api/v1/users/"+plain.ID, admin, nil), "id")
	expect(t, e.do("GET", "/api/v1/user", plain.Token, nil), 200)
}

// TestAdminCannotDeleteOwnAccount: an instance administrator's DELETE of their own
// account is a 422 on id (conventions §2: a rule of this project; as §6 answers the
// removal of a workspace's last owner) that changes nothing stored, with its login
// tokens and keys still working; another administrator may delete it.
func TestAdminCannotDeleteOwnAccount(t *testing.T) {
	e := newEnv(t)
	other := e.newUser("ada@example.com", true)
	before := dumpStore(t, e.DB)
	r := e.do("DELETE", "/api/v1/users/"+e.Owner.ID, e.Owner.Token, nil)
	expectFields(t, r, "id")
	if got := asStrings(r.FieldErrors()["id"]); !slices.Equal(got, []string{data.OwnAccountKept}) {
		t.Errorf("id's errors are %v", got)
	}
	if changed := before.diff(dumpStore(t, e.DB), 8); len(changed) > 0 {
		t.Errorf("the refused delete changed the store: %v", changed)
	}
	expect(t, e.do("GET", "/api/v1/user", e.Owner.Token, nil), 200)
	expect(t, e.do("DELETE", "/api/v1/users/"+e.Owner.ID, other.Token, nil), 204)
	expect(t, e.do("GET", "/api/v1/user", e.Owner.Token, nil), 401)
	expectFields(t, e.do("DELETE", "/api/v1/users/"+other.ID, other.Token, nil), "id")
}
