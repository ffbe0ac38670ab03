package postgres_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/postgres"
)

// Migration 0008 moves memberships written before owners and admins were never limited
// to the rule, as bbolt's open does (bolt/migrate_members.go): the owner loses the limit,
// the admin keeps it as a developer with every module, the rest is left as stored, and
// each changed row takes a new revision (so cached tokens are read again).
func TestMigrationUnlimitsOwnersAndAdmins(t *testing.T) {
	pool := schemaAt(t, 7)
	ctx := context.Background()
	limit := []string{"agt_01JD6000000000000000000001"}
	type row struct {
		ws, user, role  string
		modules, agents []string
	}
	before := []row{
		{"ws_1", "usr_owner", data.RoleOwner, data.Modules, limit},
		{"ws_1", "usr_admin", data.RoleAdmin, []string{data.ModuleAgents}, limit},
		{"ws_1", "usr_free_admin", data.RoleAdmin, data.Modules, []string{}},
		{"ws_1", "usr_null_admin", data.RoleAdmin, nil, nil},
		{"ws_1", "usr_dev", data.RoleDeveloper, []string{data.ModuleCallHistory}, limit},
		{"ws_2", "usr_admin", data.RoleAdmin, data.Modules, []string{data.NoAgent}},
	}
	now := time.Now()
	for _, r := range before {
		if _, err := pool.Exec(ctx, `INSERT INTO members (workspace_id, user_id, role, modules, agent_ids, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $6)`,
			r.ws, r.user, r.role, r.modules, r.agents, now); err != nil {
			t.Fatal(err)
		}
	}
	revisions := func() map[string]int64 {
		out := map[string]int64{}
		rows, _ := pool.Query(ctx, `SELECT workspace_id || '/' || user_id, revision FROM members`)
		for rows.Next() {
			var k string
			var v int64
			rows.Scan(&k, &v)
			out[k] = v
		}
		return out
	}
	revBefore := revisions()

	if applied, err := postgres.Migrate(ctx, pool); err != nil || !slices.Contains(applied, 8) {
		t.Fatalf("migrate: applied %v, %v", applied, err)
	}
	want := map[string]row{
		"ws_1/usr_owner":      {role: data.RoleOwner, modules: data.Modules, agents: []string{}},
		"ws_1/usr_admin":      {role: data.RoleDeveloper, modules: data.Modules, agents: limit},
		"ws_1/usr_free_admin": {role: data.RoleAdmin, modules: data.Modules, agents: []string{}},
		"ws_1/usr_null_admin": {role: data.RoleAdmin},
		"ws_1/usr_dev":        {role: data.RoleDeveloper, modules: []string{data.ModuleCallHistory}, agents: limit},
		"ws_2/usr_admin":      {role: data.RoleDeveloper, modules: data.Modules, agents: []string{data.NoAgent}},
	}
	changed := map[string]bool{"ws_1/usr_owner": true, "ws_1/usr_admin": true, "ws_2/usr_admin": true}
	revAfter := revisions()
	for _, r := range before {
		key := r.ws + "/" + r.user
		var got row
		err := pool.QueryRow(ctx, `SELECT role, modules, agent_ids FROM members WHERE workspace_id = $1 AND user_id = $2`, r.ws, r.user).
			Scan(&got.role, &got.modules, &got.agents)
		w := want[key]
		if err != nil || got.role != w.role || !slices.Equal(got.modules, w.modules) || !slices.Equal(got.agents, w.agents) ||
			(got.agents == nil) != (w.agents == nil) {
			t.Errorf("%s: %+v (%v), want %+v", key, got, err, w)
		}
		if moved := revAfter[key] != revBefore[key]; moved != changed[key] {
			t.Errorf("%s: revision %d -> %d; want a new one only for a changed row", key, revBefore[key], revAfter[key])
		}
	}
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM members WHERE role IN ('owner', 'admin') AND cardinality(agent_ids) > 0`).Scan(&n); err != nil || n != 0 {
		t.Errorf("%d owners or admins still limited (%v)", n, err)
	}
}
