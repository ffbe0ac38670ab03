package server_test

import (
	"reflect"
	"sort"
	"strings"
	"testing"
)

func keysOf(m map[string]any) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func TestWorkspaces(t *testing.T) {
	e := newEnv(t)
	u := e.newUser("fay@example.com", false)

	r := e.do("POST", "/api/v1/workspaces", u.Token, map[string]any{"name": "Support", "description": "Tier 1"})
	expect(t, r, 201)
	ws := r.Data()
	if got := keysOf(ws); !reflect.DeepEqual(got, []string{"created_at", "description", "embeddings", "id", "name", "privacy", "simulation", "updated_at"}) {
		t.Errorf("workspace fields %v", got)
	}
	id := ws["id"].(string)
	if !strings.HasPrefix(id, "ws_") || ws["name"] != "Support" || ws["description"] != "Tier 1" {
		t.Errorf("created %s", r.Body)
	}
	if !strings.HasSuffix(ws["created_at"].(string), "Z") {
		t.Errorf("created_at %v", ws["created_at"])
	}
	// The creator is its owner.
	m := e.do("GET", "/api/v1/workspaces/"+id+"/users/"+u.ID, u.Token, nil)
	expect(t, m, 200)
	if m.Data()["role"] != "owner" || m.Data()["is_owner"] != true {
		t.Errorf("creator membership %s", m.Body)
	}
	expect(t, e.do("POST", "/api/v1/workspaces", u.Token, map[string]any{"name": "No description"}), 201)
	expectFields(t, e.do("POST", "/api/v1/workspaces", u.Token, map[string]any{"name": " ", "description": strings.Repeat("d", 1001)}), "name", "description")

	// List: spec-exact, newest first, only the caller's.
	l := e.do("GET", "/api/v1/workspaces", u.Token, nil)
	expect(t, l, 200)
	if got := keysOf(l.JSON()); !reflect.DeepEqual(got, []string{"data", "meta"}) {
		t.Errorf("list members %v", got)
	}
	if got := keysOf(l.Meta()); !reflect.DeepEqual(got, []string{"next_cursor", "per_page", "prev_cursor"}) {
		t.Errorf("meta members %v", got)
	}
	items := l.List()
	if len(items) != 3 || items[1].(map[string]any)["id"] != id || items[2].(map[string]any)["id"] != u.WorkspaceID {
		t.Errorf("list %s", l.Body)
	}
	for _, it := range items {
		if got := keysOf(it.(map[string]any)); !reflect.DeepEqual(got, []string{"created_at", "description", "embeddings", "id", "name", "privacy", "simulation", "updated_at"}) {
			t.Errorf("list item fields %v", got)
		}
	}
	if n := len(e.do("GET", "/api/v1/workspaces", e.Owner.Token, nil).List()); n != 1 {
		t.Errorf("another user sees %d workspaces", n)
	}

	// Show, update.
	s := e.do("GET", "/api/v1/workspaces/"+id, u.Token, nil)
	expect(t, s, 200)
	if !reflect.DeepEqual(s.Data(), ws) {
		t.Errorf("show %v != created %v", s.Data(), ws)
	}
	up := e.do("PUT", "/api/v1/workspaces/"+id, u.Token, map[string]any{"description": ""})
	expect(t, up, 200)
	if up.Data()["name"] != "Support" || up.Data()["description"] != "" {
		t.Errorf("update %s", up.Body)
	}
	expectFields(t, e.do("PUT", "/api/v1/workspaces/"+id, u.Token, map[string]any{"name": strings.Repeat("n", 256)}), "name")
	expectFields(t, e.do("PUT", "/api/v1/workspaces/"+id, u.Token, map[string]any{"name": nil}), "name")
	expect(t, e.do("GET", "/api/v1/workspaces/ws_unknown", u.Token, nil), 404)
	expect(t, e.do("GET", "/api/v1/workspaces/"+e.Owner.WorkspaceID, u.Token, nil), 404)

	// The personal workspace cannot be deleted.
	expectFields(t, e.do("DELETE", "/api/v1/workspaces/"+u.WorkspaceID, u.Token, nil), "workspace_id")
}

func TestWorkspaceDeleteRemovesItsRecords(t *testing.T) {
	e := newEnv(t)
	owner := e.newUser("gus@example.com", false)
	member := e.newUser("hal@example.com", false)
	r := e.do("POST", "/api/v1/workspaces", owner.Token, map[string]any{"name": "doomed"})
	id := r.Data()["id"].(string)
	expect(t, e.do("POST", "/api/v1/workspaces/"+id+"/users", owner.Token, map[string]any{"id": member.ID, "role": "admin"}), 201)
	memberTok := e.tokenIn(member, id)
	ownerTok := e.tokenIn(owner, id)
	keyInWS := e.do("POST", "/api/v1/api-keys", memberTok, map[string]any{"name": "in doomed"})
	expect(t, keyInWS, 201)
	expect(t, e.do("PUT", "/api/v1/workspaces/"+id, memberTok, map[string]any{"name": "renamed"}), 200) // an event

	expect(t, e.do("DELETE", "/api/v1/workspaces/"+id, memberTok, nil), 403) // admins cannot
	expect(t, e.do("DELETE", "/api/v1/workspaces/"+id, owner.Token, nil), 204)

	expect(t, e.do("GET", "/api/v1/workspaces/"+id, owner.Token, nil), 404)
	expect(t, e.do("GET", "/api/v1/workspaces/"+id+"/users", owner.Token, nil), 404)
	expect(t, e.do("DELETE", "/api/v1/workspaces/"+id, owner.Token, nil), 404)
	// Tokens bound to it are gone; tokens elsewhere are not.
	for _, tok := range []string{memberTok, ownerTok, keyInWS.JSON()["token"].(string)} {
		expect(t, e.do("GET", "/api/v1/user", tok, nil), 401)
	}
	expect(t, e.do("GET", "/api/v1/user", member.Token, nil), 200)
	if n := len(e.do("GET", "/api/v1/workspaces", member.Token, nil).List()); n != 1 {
		t.Errorf("member still lists %d workspaces", n)
	}
	if n := len(e.do("GET", "/api/v1/api-keys", member.Token, nil).List()); n != 1 {
		t.Errorf("member still lists %d keys", n)
	}
	if left := e.countWorkspaceRecords(id); left != "" {
		t.Errorf("records of the deleted workspace remain: %s", left)
	}
}

// TestWorkspaceVectorShareOverHTTP: embeddings.vector_share is set, shown and carried by
// workspace.updated; a value out of [0, 1] or of the wrong type is a 422 on its field that
// changes nothing; null returns to the default.
func TestWorkspaceVectorShareOverHTTP(t *testing.T) {
	e := newEnv(t)
	u := e.newUser("ivy@example.com", false)
	ws := "/api/v1/workspaces/" + u.WorkspaceID
	share := func() any { return at(e.do("GET", ws, u.Token, nil).Data(), "embeddings.vector_share") }
	if got := share(); got != nil {
		t.Fatalf("a new workspace's vector_share %v, want null", got)
	}
	for _, v := range []float64{0, 1, 0.35} {
		r := e.do("PUT", ws, u.Token, map[string]any{"embeddings": map[string]any{"vector_share": v}})
		expect(t, r, 200)
		if got := at(r.Data(), "embeddings.vector_share"); got != v {
			t.Errorf("PUT vector_share %v answered %v", v, got)
		}
	}
	ev := e.do("GET", "/api/v1/audit-log?type=workspace.updated&per_page=1", u.Token, nil)
	expect(t, ev, 200)
	if l := ev.List(); len(l) != 1 || at(l[0], "data.embeddings.vector_share") != 0.35 {
		t.Errorf("workspace.updated carries %v, want vector_share 0.35", l)
	}
	for _, bad := range []any{-0.0001, 1.0001, "0.5", true} {
		expectFields(t, e.do("PUT", ws, u.Token, map[string]any{"embeddings": map[string]any{"vector_share": bad}}), "embeddings.vector_share")
		if got := share(); got != 0.35 {
			t.Errorf("after vector_share %v was refused the stored share is %v", bad, got)
		}
	}
	expect(t, e.do("PUT", ws, u.Token, map[string]any{"embeddings": map[string]any{"vector_share": nil}}), 200)
	if got := share(); got != nil {
		t.Errorf("after null the share is %v, want null (the default)", got)
	}
}

// TestWorkspaceEmbeddingsEnabledOverHTTP: embeddings.enabled shows true by default, is set
// to false and back, and null or a non-boolean is a 422 on its field that changes nothing.
func TestWorkspaceEmbeddingsEnabledOverHTTP(t *testing.T) {
	e := newEnv(t)
	u := e.newUser("jon@example.com", false)
	ws := "/api/v1/workspaces/" + u.WorkspaceID
	enabled := func() any { return at(e.do("GET", ws, u.Token, nil).Data(), "embeddings.enabled") }
	if got := enabled(); got != true {
		t.Fatalf("a new workspace's embeddings.enabled %v, want true", got)
	}
	r := e.do("PUT", ws, u.Token, map[string]any{"embeddings": map[string]any{"enabled": false}})
	expect(t, r, 200)
	if got := at(r.Data(), "embeddings.enabled"); got != false {
		t.Errorf("PUT enabled false answered %v", got)
	}
	for _, bad := range []any{nil, "false", 0} {
		expectFields(t, e.do("PUT", ws, u.Token, map[string]any{"embeddings": map[string]any{"enabled": bad}}), "embeddings.enabled")
		if got := enabled(); got != false {
			t.Errorf("after enabled %v was refused the setting is %v", bad, got)
		}
	}
	expect(t, e.do("PUT", ws, u.Token, map[string]any{"embeddings": map[string]any{"enabled": true}}), 200)
	if got := enabled(); got != true {
		t.Errorf("enabled again, the setting is %v", got)
	}
}
