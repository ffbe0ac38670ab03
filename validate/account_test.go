package validate

import (
	"strings"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/strictjson"
)

// fields returns the failing paths of err, or nil.
func fields(err error) map[string][]string {
	if err == nil {
		return nil
	}
	e, ok := err.(*data.Error)
	if !ok || e.Code != data.EINVALID {
		panic(err)
	}
	return e.Fields
}

func expectPaths(t *testing.T, name string, err error, paths ...string) {
	t.Helper()
	got := fields(err)
	if len(got) != len(paths) {
		t.Errorf("%s: %v, want %v", name, got, paths)
		return
	}
	for _, p := range paths {
		if _, ok := got[p]; !ok {
			t.Errorf("%s: %v lacks %s", name, got, p)
		}
	}
}

func TestUserCreateBounds(t *testing.T) {
	ok := data.UserCreate{Name: "A", Email: "a@example.com", Password: "12345678"}
	cases := []struct {
		name  string
		edit  func(*data.UserCreate)
		paths []string
	}{
		{"valid", func(*data.UserCreate) {}, nil},
		{"name 255", func(u *data.UserCreate) { u.Name = strings.Repeat("n", 255) }, nil},
		{"name 256", func(u *data.UserCreate) { u.Name = strings.Repeat("n", 256) }, []string{"name"}},
		{"name 255 runes of 2 bytes", func(u *data.UserCreate) { u.Name = strings.Repeat("é", 255) }, nil},
		{"name blank", func(u *data.UserCreate) { u.Name = "  " }, []string{"name"}},
		{"email missing", func(u *data.UserCreate) { u.Email = "" }, []string{"email"}},
		{"email no domain dot", func(u *data.UserCreate) { u.Email = "a@localhost" }, []string{"email"}},
		{"email no at", func(u *data.UserCreate) { u.Email = "a.example.com" }, []string{"email"}},
		{"email with name", func(u *data.UserCreate) { u.Email = "A <a@example.com>" }, []string{"email"}},
		{"email 254", func(u *data.UserCreate) { u.Email = strings.Repeat("a", 64) + "@" + strings.Repeat("b", 185) + ".com" }, nil},
		{"email 255", func(u *data.UserCreate) { u.Email = strings.Repeat("a", 64) + "@" + strings.Repeat("b", 186) + ".com" }, []string{"email"}},
		{"password 7", func(u *data.UserCreate) { u.Password = "1234567" }, []string{"password"}},
		{"password 8", func(u *data.UserCreate) { u.Password = "12345678" }, nil},
		{"password 8 runes", func(u *data.UserCreate) { u.Password = "ééééééé1" }, nil},
		{"password 72 bytes", func(u *data.UserCreate) { u.Password = strings.Repeat("p", 72) }, nil},
		{"password 73 bytes", func(u *data.UserCreate) { u.Password = strings.Repeat("p", 73) }, []string{"password"}},
		{"password 37 two-byte runes", func(u *data.UserCreate) { u.Password = strings.Repeat("é", 37) }, []string{"password"}},
		{"everything wrong", func(u *data.UserCreate) { *u = data.UserCreate{} }, []string{"name", "email", "password"}},
	}
	for _, c := range cases {
		in := ok
		c.edit(&in)
		expectPaths(t, c.name, UserCreate(in), c.paths...)
	}
}

func TestUserUpdateRules(t *testing.T) {
	expectPaths(t, "empty", UserUpdate(data.UserUpdate{}))
	expectPaths(t, "password without current", UserUpdate(data.UserUpdate{Password: data.Some("new-password")}), "current_password")
	expectPaths(t, "password with empty current", UserUpdate(data.UserUpdate{Password: data.Some("new-password"), CurrentPassword: data.Some("")}), "current_password")
	expectPaths(t, "short password", UserUpdate(data.UserUpdate{Password: data.Some("short"), CurrentPassword: data.Some("x")}), "password")
	expectPaths(t, "valid", UserUpdate(data.UserUpdate{Name: data.Some("N"), Email: data.Some("n@example.org"), Password: data.Some("new-password"), CurrentPassword: data.Some("old")}))
	expectPaths(t, "bad name and email", UserUpdate(data.UserUpdate{Name: data.Some(""), Email: data.Some("x")}), "name", "email")
}

func TestLoginRules(t *testing.T) {
	ws := func(v string) *string { return &v }
	expectPaths(t, "ok", Login("a@b.co", "x", nil))
	expectPaths(t, "a workspace", Login("a@b.co", "x", ws("ws_01JD6ZZZZZZZZZZZZZZZZZZZZZ")))
	expectPaths(t, "missing", Login(" ", "", nil), "email", "password")
	// An empty workspace_id names no workspace (absent or null is the personal one).
	expectPaths(t, "empty workspace", Login("a@b.co", "x", ws("")), "workspace_id")
	expectPaths(t, "blank workspace with the rest missing", Login("", "", ws(" ")), "email", "password", "workspace_id")
}

func TestWorkspaceBounds(t *testing.T) {
	expectPaths(t, "ok", WorkspaceCreate(data.WorkspaceCreate{Name: strings.Repeat("n", 255), Description: strings.Repeat("d", 1000)}))
	expectPaths(t, "too long", WorkspaceCreate(data.WorkspaceCreate{Name: strings.Repeat("n", 256), Description: strings.Repeat("d", 1001)}), "name", "description")
	expectPaths(t, "no name", WorkspaceCreate(data.WorkspaceCreate{}), "name")
	expectPaths(t, "update ok", WorkspaceUpdate(data.WorkspaceUpdate{Description: data.Some("")}, nil))
	expectPaths(t, "update too long", WorkspaceUpdate(data.WorkspaceUpdate{Name: data.Some(""), Description: data.Some(strings.Repeat("d", 1001))}, nil), "name", "description")
}

func TestAPIKeyExpiration(t *testing.T) {
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	s := func(v string) *string { return &v }
	exp, err := APIKeyCreate(data.APIKeyCreate{Name: "k", Expiration: s("2026-11-22")}, now)
	if err != nil || !exp.Equal(time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("tomorrow: %v %v", exp, err)
	}
	if exp, err := APIKeyCreate(data.APIKeyCreate{Name: "k"}, now); exp != nil || err != nil {
		t.Errorf("none: %v %v", exp, err)
	}
	for _, bad := range []string{"2026-11-21", "2026-11-20", "2026-11-31", "2026-1-22", "22-11-2026", "2026-11-22T00:00:00Z", "", " 2026-11-22"} {
		_, err := APIKeyCreate(data.APIKeyCreate{Name: "k", Expiration: s(bad)}, now)
		expectPaths(t, "expiration "+bad, err, "expiration")
	}
	_, err = APIKeyCreate(data.APIKeyCreate{Name: strings.Repeat("k", 256), Expiration: s("x")}, now)
	expectPaths(t, "both", err, "name", "expiration")
}

func TestWorkspaceUserRules(t *testing.T) {
	agent := "agt_01JD6000000000000000000000"
	expectPaths(t, "ok", WorkspaceUserAdd(data.WorkspaceUserAdd{ID: "usr_x", Role: "member", Modules: data.Some([]string{"agents"}), AgentIDs: data.Some([]string{agent})}))
	expectPaths(t, "empty", WorkspaceUserAdd(data.WorkspaceUserAdd{}), "id", "role")
	expectPaths(t, "by email", WorkspaceUserAdd(data.WorkspaceUserAdd{Email: "ada@example.com", Role: "member"}))
	expectPaths(t, "id and email", WorkspaceUserAdd(data.WorkspaceUserAdd{ID: "usr_x", Email: "ada@example.com", Role: "member"}), "email")
	expectPaths(t, "not an email", WorkspaceUserAdd(data.WorkspaceUserAdd{Email: "ada", Role: "member"}), "email")
	expectPaths(t, "email at its bound", WorkspaceUserAdd(data.WorkspaceUserAdd{Email: strings.Repeat("a", MaxEmailLen-12) + "@example.com", Role: "member"}))
	expectPaths(t, "email past its bound", WorkspaceUserAdd(data.WorkspaceUserAdd{Email: strings.Repeat("a", MaxEmailLen-11) + "@example.com", Role: "member"}), "email")
	expectPaths(t, "bad", WorkspaceUserAdd(data.WorkspaceUserAdd{ID: "u", Role: "god",
		Modules: data.Some([]string{"agents", "billing", "agents"}), AgentIDs: data.Some([]string{agent, agent, "x"})}),
		"role", "modules.1", "modules.2", "agent_ids.1", "agent_ids.2")
	expectPaths(t, "six modules", WorkspaceUserAdd(data.WorkspaceUserAdd{ID: "u", Role: "member",
		Modules: data.Some([]string{"agents", "knowledge_base", "phone_numbers", "call_history", "analytics", "agents"})}), "modules", "modules.5")
	for _, role := range data.Roles {
		expectPaths(t, role, WorkspaceUserUpdate(data.WorkspaceUserUpdate{Role: data.Some(role)}))
	}
	expectPaths(t, "update bad", WorkspaceUserUpdate(data.WorkspaceUserUpdate{Role: data.Some(""), Modules: data.Some([]string{"x"})}), "role", "modules.0")
	// Owners and admins are never limited to some agents: agent_ids on them is a fault
	// (an empty list is none; the "no agent at all" id is a limit too).
	for _, c := range []struct {
		role  string
		ids   []string
		fault bool
	}{
		{data.RoleOwner, []string{agent}, true}, {data.RoleAdmin, []string{agent}, true}, {data.RoleAdmin, []string{data.NoAgent}, true},
		{data.RoleOwner, []string{}, false}, {data.RoleAdmin, []string{}, false},
		{data.RoleDeveloper, []string{agent}, false}, {data.RoleMember, []string{data.NoAgent}, false},
	} {
		want := []string{}
		if c.fault {
			want = []string{"agent_ids"}
		}
		expectPaths(t, "add "+c.role, WorkspaceUserAdd(data.WorkspaceUserAdd{ID: "u", Role: c.role, AgentIDs: data.Some(c.ids)}), want...)
		expectPaths(t, "update "+c.role, WorkspaceUserUpdate(data.WorkspaceUserUpdate{Role: data.Some(c.role), AgentIDs: data.Some(c.ids)}), want...)
	}
}

func TestDecodeStrict(t *testing.T) {
	var in data.WorkspaceUserUpdate
	err := strictjson.Decode([]byte(`{"role": null, "modules": "agents", "agent_ids": [1], "extra": 1}`), &in)
	expectPaths(t, "strict", err, "role", "modules", "agent_ids.0", "extra")
	var c data.APIKeyCreate
	if err := strictjson.Decode([]byte(`{"name": "k", "expiration": null}`), &c); err != nil || c.Expiration != nil || c.Name != "k" {
		t.Errorf("nullable expiration: %v %+v", err, c)
	}
	for _, body := range []string{`[]`, `null`, `{`, `{} {}`, `"x"`} {
		if err := strictjson.Decode([]byte(body), &c); data.ErrorCode(err) != data.EMALFORMED {
			t.Errorf("%s: %v", body, err)
		}
	}
}
