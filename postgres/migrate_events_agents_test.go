package postgres_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/postgres"
	"github.com/voiceapi/voiceapi/service"
)

// Migration 0043 fills the agent_id of the events stored before it by the rule its SQL
// states a second time: for every event type (and events whose data names no agent, or
// is no object) the column holds what service.EventAgent, the rule the service inserts
// by, gives. A page of (agent, type) pairs then lists those events.
func TestMigrationFillsEventAgents(t *testing.T) {
	pool := schemaAt(t, 42)
	ctx := context.Background()
	events := eventsOfEveryType(`{"id":"agt_by_id","agent_id":"agt_by_agent_id","name":"x"}`, `{"id":"x","agent_id":null}`, `{"name":"x"}`, `null`, `[1]`, `{"id":7,"agent_id":7}`)
	for _, e := range events {
		if _, err := pool.Exec(ctx, `INSERT INTO events (id, workspace_id, type, created_at, actor_type, actor_user_id, actor_token_id, actor_address, data, prev_hash, hash)
			VALUES ($1, $2, $3, now(), 'system', '', 0, '', $4::json, '', 'h')`, e.ID, e.WorkspaceID, e.Type, string(e.Data)); err != nil {
			t.Fatal(err)
		}
	}
	got := migratedColumn(t, pool, 43, "agent_id")
	named := 0
	for _, e := range events {
		if want := service.EventAgent(e); got[e.ID] != want {
			t.Errorf("%s (%s, data %s): agent_id %q after the migration; service.EventAgent gives %q", e.ID, e.Type, e.Data, got[e.ID], want)
		} else if want != "" {
			named++
		}
	}
	if named < 25 {
		t.Errorf("only %d events name an agent: the test's data does not reach the rule", named)
	}
	expectPageOfTwo(t, pool, service.EventScope{Agent: "agt_by_id", Type: data.EventAgentCreated}, service.EventScope{Agent: "agt_by_agent_id", Type: data.EventCallEnded})
}

// eventsOfEveryType is an event of each body for every event type, in workspace ws_1.
func eventsOfEveryType(bodies ...string) []*data.Event {
	var events []*data.Event
	for i, typ := range data.EventTypes {
		for j, body := range bodies {
			events = append(events, &data.Event{ID: fmt.Sprintf("evt_%03d_%d", i, j), WorkspaceID: "ws_1", Type: typ, Data: []byte(body)})
		}
	}
	return events
}

// migratedColumn migrates pool, which must apply migration version, and returns each
// event's column by its id.
func migratedColumn(t *testing.T, pool *pgxpool.Pool, version int, column string) map[string]string {
	t.Helper()
	ctx := context.Background()
	if applied, err := postgres.Migrate(ctx, pool); err != nil || !slices.Contains(applied, version) {
		t.Fatalf("migrate: applied %v, %v", applied, err)
	}
	got := map[string]string{}
	rows, err := pool.Query(ctx, `SELECT id, `+column+` FROM events`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id, value string
		if err := rows.Scan(&id, &value); err != nil {
			t.Fatal(err)
		}
		got[id] = value
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return got
}

// expectPageOfTwo opens the migrated pool and expects a page of scopes to list two
// events of ws_1, and no next page.
func expectPageOfTwo(t *testing.T, pool *pgxpool.Pool, scopes ...service.EventScope) {
	t.Helper()
	db := openMigrated(t, pool)
	defer db.Close()
	f := service.EventFilter{Key: "k", MaxScan: 10, Scopes: scopes, Keep: func(*data.Event) bool { return true }}
	if err := db.View(context.Background(), func(tx service.Tx) error {
		list, page, err := tx.EventPage("ws_1", f, data.PageRequest{PerPage: 10})
		if err == nil && (len(list) != 2 || page.NextCursor != nil) {
			err = fmt.Errorf("a page of %v: %d events, next %v; want 2, none", scopes, len(list), page.NextCursor != nil)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkMigrationFillsEventAgents times the open that applies migration 0043 to a
// database holding 100,000 events of 10 types (agents', calls', campaigns', jobs',
// knowledge bases' and security events), 20 agents: the column added, the events of an
// agent given theirs, the index built. Writing the rows is untimed.
func BenchmarkMigrationFillsEventAgents(b *testing.B) {
	ctx := context.Background()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		pool := schemaAt(b, 42)
		if _, err := pool.Exec(ctx, `INSERT INTO events (id, workspace_id, type, created_at, actor_type, actor_user_id, actor_token_id, actor_address, data, prev_hash, hash)
			SELECT 'evt_' || lpad(n::text, 9, '0'), 'ws_' || (n % 5),
				(ARRAY['agent.updated','call.ended','call.started','campaign.started','job.failed','knowledge_base.created','number.updated','api_key.created','user.login','agent.published'])[n % 10 + 1],
				now(), 'system', '', 0, '', json_build_object('id', 'agt_' || (n % 20), 'agent_id', 'agt_' || (n % 20), 'name', 'Support desk'), '', 'h' || n
			FROM generate_series(1, 100000) n`); err != nil {
			b.Fatal(err)
		}
		db := timedMigratedOpen(b, pool)
		var named int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM events WHERE agent_id <> ''`).Scan(&named); err != nil || named != 60000 {
			b.Fatalf("%d events given an agent: %v, want 60,000", named, err)
		}
		db.Close()
	}
}
