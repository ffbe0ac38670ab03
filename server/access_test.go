package server_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// Nothing of workspace A can be read, changed or deleted with a token bound to workspace
// B by a user who is not a member of A: every such request is 404, and A is unchanged.
func TestWorkspaceIsolation(t *testing.T) {
	e := newEnv(t)
	a := e.newUser("alice@example.com", false)
	mate := e.newUser("mate@example.com", false)
	b := e.newUser("bruno@example.com", false)
	wsA := e.do("POST", "/api/v1/workspaces", a.Token, map[string]any{"name": "A"}).Data()["id"].(string)
	wsB := e.do("POST", "/api/v1/workspaces", b.Token, map[string]any{"name": "B"}).Data()["id"].(string)
	expect(t, e.do("POST", "/api/v1/workspaces/"+wsA+"/users", a.Token, map[string]any{"id": mate.ID, "role": "member"}), 201)
	keyA := e.do("POST", "/api/v1/api-keys", e.tokenIn(a, wsA), map[string]any{"name": "a's key"})
	expect(t, keyA, 201)
	tokB := e.tokenIn(b, wsB)

	snapshot := func() string {
		return string(e.do("GET", "/api/v1/workspaces/"+wsA, a.Token, nil).Body) +
			string(e.do("GET", "/api/v1/workspaces/"+wsA+"/users", a.Token, nil).Body) +
			string(e.do("GET", "/api/v1/api-keys", a.Token, nil).Body)
	}
	before := snapshot()
	for _, tok := range []string{tokB, b.Token} {
		for _, c := range []struct {
			method, path string
			body         any
		}{
			{"GET", "/api/v1/workspaces/" + wsA, nil},
			{"PUT", "/api/v1/workspaces/" + wsA, map[string]any{"name": "pwned"}},
			{"DELETE", "/api/v1/workspaces/" + wsA, nil},
			{"GET", "/api/v1/workspaces/" + wsA + "/users", nil},
			{"POST", "/api/v1/workspaces/" + wsA + "/users", map[string]any{"id": b.ID, "role": "owner"}},
			{"GET", "/api/v1/workspaces/" + wsA + "/users/" + mate.ID, nil},
			{"PUT", "/api/v1/workspaces/" + wsA + "/users/" + mate.ID, map[string]any{"role": "admin"}},
			{"DELETE", "/api/v1/workspaces/" + wsA + "/users/" + mate.ID, nil},
			{"GET", "/api/v1/workspaces/" + wsA + "/users/" + a.ID, nil},
			{"DELETE", "/api/v1/workspaces/" + wsA + "/users/" + a.ID, nil},
			{"DELETE", fmt.Sprint("/api/v1/api-keys/", keyA.Data()["id"]), nil},
		} {
			r := e.do(c.method, c.path, tok, c.body)
			if r.Status != 404 {
				t.Errorf("%s %s with B's token: %d %s", c.method, c.path, r.Status, r.Body)
			}
			expect(t, r, 404)
		}
	}
	// The list endpoints show nothing of A.
	for _, path := range []string{"/api/v1/workspaces", "/api/v1/api-keys"} {
		if body := string(e.do("GET", path, tokB, nil).Body); strings.Contains(body, wsA) || strings.Contains(body, "a's key") {
			t.Errorf("%s shows A: %s", path, body)
		}
	}
	if after := snapshot(); after != before {
		t.Errorf("workspace A changed:\n%s\n%s", before, after)
	}
	// A's key still works.
	expect(t, e.do("GET", "/api/v1/user", keyA.JSON()["token"].(string), nil), 200)
}

// The role matrix of conventions §6, walked operation by operation for every role.
func TestRoleMatrix(t *testing.T) {
	m := newRoleMatrix(newEnv(t))
	ops := append(m.workspaceOps(), m.ownAccountOps()...)
	for _, op := range ops {
		for _, role := range []string{"owner", "admin", "developer", "member"} {
			t.Run(op.name+"/"+role, func(t *testing.T) {
				s := m.prepare(t, role)
				r := op.do(s)
				want := 403
				for _, a := range op.allowed {
					if a == role {
						want = op.ok
					}
				}
				expect(t, r, want)
				if want == 403 && r.Code() != "forbidden" {
					t.Errorf("code %s", r.Code())
				}
			})
		}
	}
}

// roleSetup is one case's fresh workspace, with its actor's token.
type roleSetup struct {
	ws, base, tok string
	actor         *testUser
	target        *testUser // a member (role member) of ws
	owner2        *testUser // a second owner of ws
}

// roleOp is one operation of the matrix: what it does, its status when allowed, and the
// roles allowed it.
type roleOp struct {
	name    string
	do      func(s roleSetup) *response
	ok      int
	allowed []string
}

// roleMatrix holds the accounts the cases share; each case gets a fresh workspace.
type roleMatrix struct {
	e              *env
	boss           *testUser
	actors         map[string]*testUser
	target, owner2 *testUser
	n              int // the cases prepared so far, naming the users they add
}

// newRoleMatrix makes the shared accounts: the boss who makes each workspace, an actor
// per role, the target member and the second owner.
func newRoleMatrix(e *env) *roleMatrix {
	m := &roleMatrix{e: e, boss: e.newUser("boss@example.com", false), actors: map[string]*testUser{}}
	for _, role := range []string{"owner", "admin", "developer", "member"} {
		m.actors[role] = e.newUser("actor-"+role+"@example.com", false)
	}
	m.target = e.newUser("target@example.com", false)
	m.owner2 = e.newUser("owner2@example.com", false)
	return m
}

// prepare makes a fresh workspace with the actor in role, the target a member and a
// second owner.
func (m *roleMatrix) prepare(t *testing.T, role string) roleSetup {
	t.Helper()
	e := m.e
	m.n++
	actor := m.actors[role]
	ws := e.do("POST", "/api/v1/workspaces", m.boss.Token, map[string]any{"name": "ws"}).Data()["id"].(string)
	base := "/api/v1/workspaces/" + ws + "/users"
	expect(t, e.do("POST", base, m.boss.Token, map[string]any{"id": actor.ID, "role": role}), 201)
	expect(t, e.do("POST", base, m.boss.Token, map[string]any{"id": m.target.ID, "role": "member"}), 201)
	expect(t, e.do("POST", base, m.boss.Token, map[string]any{"id": m.owner2.ID, "role": "owner"}), 201)
	return roleSetup{ws: ws, base: base, tok: e.tokenIn(actor, ws), actor: actor, target: m.target, owner2: m.owner2}
}

// workspaceOps are the operations on the workspace and its members.
func (m *roleMatrix) workspaceOps() []roleOp {
	return []roleOp{
		{"list workspace users", func(s roleSetup) *response { return m.e.do("GET", s.base, s.tok, nil) }, 200, []string{"owner", "admin", "developer", "member"}},
		{"show workspace user", func(s roleSetup) *response { return m.e.do("GET", s.base+"/"+s.target.ID, s.tok, nil) }, 200, []string{"owner", "admin", "developer", "member"}},
		{"show workspace", func(s roleSetup) *response { return m.e.do("GET", "/api/v1/workspaces/"+s.ws, s.tok, nil) }, 200, []string{"owner", "admin", "developer", "member"}},
		{"add member", func(s roleSetup) *response {
			return m.e.do("POST", s.base, s.tok, map[string]any{"id": m.e.newUser(fmt.Sprintf("new%d@example.com", m.n), false).ID, "role": "developer"})
		}, 201, []string{"owner", "admin"}},
		{"update member", func(s roleSetup) *response {
			return m.e.do("PUT", s.base+"/"+s.target.ID, s.tok, map[string]any{"role": "developer", "modules": []string{"agents"}})
		}, 200, []string{"owner", "admin"}},
		{"remove member", func(s roleSetup) *response { return m.e.do("DELETE", s.base+"/"+s.target.ID, s.tok, nil) }, 204, []string{"owner", "admin"}},
		{"update workspace", func(s roleSetup) *response {
			return m.e.do("PUT", "/api/v1/workspaces/"+s.ws, s.tok, map[string]any{"name": "renamed"})
		}, 200, []string{"owner", "admin"}},
		{"delete workspace", func(s roleSetup) *response { return m.e.do("DELETE", "/api/v1/workspaces/"+s.ws, s.tok, nil) }, 204, []string{"owner"}},
		{"grant owner", func(s roleSetup) *response {
			return m.e.do("PUT", s.base+"/"+s.target.ID, s.tok, map[string]any{"role": "owner"})
		}, 200, []string{"owner"}},
		{"add an owner", func(s roleSetup) *response {
			return m.e.do("POST", s.base, s.tok, map[string]any{"id": m.e.newUser(fmt.Sprintf("own%d@example.com", m.n), false).ID, "role": "owner"})
		}, 201, []string{"owner"}},
		{"revoke owner", func(s roleSetup) *response {
			return m.e.do("PUT", s.base+"/"+s.owner2.ID, s.tok, map[string]any{"role": "admin"})
		}, 200, []string{"owner"}},
		{"remove an owner", func(s roleSetup) *response { return m.e.do("DELETE", s.base+"/"+s.owner2.ID, s.tok, nil) }, 204, []string{"owner"}},
	}
}

// ownAccountOps are the operations on the caller's own account, open to every role.
func (m *roleMatrix) ownAccountOps() []roleOp {
	return []roleOp{
		{"own profile", func(s roleSetup) *response { return m.e.do("GET", "/api/v1/user", s.tok, nil) }, 200, []string{"owner", "admin", "developer", "member"}},
		{"update own profile", func(s roleSetup) *response {
			return m.e.do("PUT", "/api/v1/user", s.tok, map[string]any{"name": "New Name"})
		}, 200, []string{"owner", "admin", "developer", "member"}},
		{"create own key", func(s roleSetup) *response {
			return m.e.do("POST", "/api/v1/api-keys", s.tok, map[string]any{"name": "mine"})
		}, 201, []string{"owner", "admin", "developer", "member"}},
		{"list own keys", func(s roleSetup) *response { return m.e.do("GET", "/api/v1/api-keys", s.tok, nil) }, 200, []string{"owner", "admin", "developer", "member"}},
		{"create workspace", func(s roleSetup) *response {
			return m.e.do("POST", "/api/v1/workspaces", s.tok, map[string]any{"name": "mine"})
		}, 201, []string{"owner", "admin", "developer", "member"}},
		{"logout", func(s roleSetup) *response { return m.e.do("POST", "/api/v1/auth/logout", s.tok, nil) }, 204, []string{"owner", "admin", "developer", "member"}},
	}
}

func TestPrincipalRoleFromPath(t *testing.T) {
	// The role used is the caller's role in the path's workspace, not in the token's.
	e := newEnv(t)
	u := e.newUser("rex@example.com", false)
	other := e.newUser("sid@example.com", false)
	ws := e.do("POST", "/api/v1/workspaces", e.Owner.Token, map[string]any{"name": "shared"}).Data()["id"].(string)
	expect(t, e.do("POST", "/api/v1/workspaces/"+ws+"/users", e.Owner.Token, map[string]any{"id": u.ID, "role": "member"}), 201)
	// u owns its personal workspace, but is a member in ws: u.Token (bound to the personal
	// workspace) may not add members to ws.
	expect(t, e.do("POST", "/api/v1/workspaces/"+ws+"/users", u.Token, map[string]any{"id": other.ID, "role": "member"}), 403)
	got := e.do("GET", "/api/v1/workspaces/"+ws+"/users/"+u.ID, u.Token, nil)
	if !reflect.DeepEqual(got.Data()["role"], "member") {
		t.Errorf("%s", got.Body)
	}
}
