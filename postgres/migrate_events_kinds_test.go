package postgres_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/postgres"
	"github.com/voiceapi/voiceapi/service"
)

// Migration 0044 fills the kind of the events stored before it by the rule its SQL states
// a second time: for every event type (and events whose data names no kind, a kind that
// is no string, or data that is no object) the column holds what service.EventKind, the
// rule the service inserts by, gives. A page of a kind's pairs then lists those events.
func TestMigrationFillsEventKinds(t *testing.T) {
	pool := schemaAt(t, 43)
	ctx := context.Background()
	var events []*data.Event
	bodies := []string{`{"id":"job_1","agent_id":"agt_1","kind":"run"}`, `{"id":"job_2","agent_id":null,"kind":"embed"}`,
		`{"kind":null}`, `{"kind":7}`, `{"kind":""}`, `{"name":"x"}`, `null`, `[1]`}
	for i, typ := range data.EventTypes {
		for j, body := range bodies {
			events = append(events, &data.Event{ID: fmt.Sprintf("evt_%03d_%d", i, j), WorkspaceID: "ws_1", Type: typ, Data: []byte(body)})
		}
	}
	for _, e := range events {
		if _, err := pool.Exec(ctx, `INSERT INTO events (id, workspace_id, type, created_at, actor_type, actor_user_id, actor_token_id, actor_address, data, prev_hash, hash, agent_id)
			VALUES ($1, $2, $3, now(), 'system', '', 0, '', $4::json, '', 'h', $5)`, e.ID, e.WorkspaceID, e.Type, string(e.Data), service.EventAgent(e)); err != nil {
			t.Fatal(err)
		}
	}
	if applied, err := postgres.Migrate(ctx, pool); err != nil || !slices.Contains(applied, 44) {
		t.Fatalf("migrate: applied %v, %v", applied, err)
	}
	got := map[string]string{}
	rows, err := pool.Query(ctx, `SELECT id, kind FROM events`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id, kind string
		if err := rows.Scan(&id, &kind); err != nil {
			t.Fatal(err)
		}
		got[id] = kind
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	named := 0
	for _, e := range events {
		if want := service.EventKind(e); got[e.ID] != want {
			t.Errorf("%s (%s, data %s): kind %q after the migration; service.EventKind gives %q", e.ID, e.Type, e.Data, got[e.ID], want)
		} else if want != "" {
			named++
		}
	}
	if named != 2 {
		t.Errorf("%d events name a kind; want 2 (job.failed's): the test's data does not reach the rule", named)
	}
	db := openMigrated(t, pool)
	defer db.Close()
	f := service.EventFilter{Key: "k", MaxScan: 10, Keep: func(*data.Event) bool { return true }, Scopes: []service.EventScope{
		{Agent: "agt_1", Type: data.EventJobFailed, Kind: "run"}, {Type: data.EventJobFailed, Kind: "embed", AnyAgent: true}}}
	if err := db.View(ctx, func(tx service.Tx) error {
		list, page, err := tx.EventPage("ws_1", f, data.PageRequest{PerPage: 10})
		if err == nil && (len(list) != 2 || page.NextCursor != nil) {
			err = fmt.Errorf("a page of two kinds' pairs: %d events, next %v; want 2, none", len(list), page.NextCursor != nil)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
}
