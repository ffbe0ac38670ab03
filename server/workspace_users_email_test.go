package server_test

import (
	"strings"
	"testing"
)

// A member is added by email as well as by id (the console's form asks for an email):
// the address is matched whatever its case; an unknown address, an address with an id,
// or a malformed one is 422 on email, and adds no one.
func TestWorkspaceUserAddByEmail(t *testing.T) {
	e := newEnv(t)
	owner := e.newUser("lea@example.com", false)
	max := e.newUser("max@example.com", false)
	ws := e.do("POST", "/api/v1/workspaces", owner.Token, map[string]any{"name": "team"}).Data()["id"].(string)
	base := "/api/v1/workspaces/" + ws + "/users"

	expectFields(t, e.do("POST", base, owner.Token, map[string]any{"email": "nobody@example.com", "role": "member"}), "email")
	expectFields(t, e.do("POST", base, owner.Token, map[string]any{"email": "max", "role": "member"}), "email")
	expectFields(t, e.do("POST", base, owner.Token, map[string]any{"email": max.Email, "id": max.ID, "role": "member"}), "email")
	expectFields(t, e.do("POST", base, owner.Token, map[string]any{"email": strings.Repeat("m", 243) + "@example.com", "role": "member"}), "email")
	if l := e.do("GET", base, owner.Token, nil); len(l.List()) != 1 {
		t.Fatalf("refused adds added members: %s", l.Body)
	}

	r := e.do("POST", base, owner.Token, map[string]any{"email": "  MAX@Example.com ", "role": "developer"})
	expect(t, r, 201)
	if r.Data()["id"] != max.ID || r.Data()["role"] != "developer" {
		t.Errorf("added by email: %s", r.Body)
	}
	// Twice is a conflict, by email as by id.
	expect(t, e.do("POST", base, owner.Token, map[string]any{"email": max.Email, "role": "member"}), 409)
}
