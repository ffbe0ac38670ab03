package postgres_test

import (
	"context"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// Migration 0044 fills the kind of the events stored before it by the rule its SQL states
// a second time: for every event type (and events whose data names no kind, a kind that
// is no string, or data that is no object) the column holds what service.EventKind, the
// rule the service inserts by, gives. A page of a kind's pairs then lists those events.
func TestMigrationFillsEventKinds(t *testing.T) {
	pool := schemaAt(t, 43)
	ctx := context.Background()
	events := eventsOfEveryType(`{"id":"job_1","agent_id":"agt_1","kind":"run"}`, `{"id":"job_2","agent_id":null,"kind":"embed"}`,
		`{"kind":null}`, `{"kind":7}`, `{"kind":""}`, `{"name":"x"}`, `null`, `[1]`)
	for _, e := range events {
		if _, err := pool.Exec(ctx, `INSERT INTO events (id, workspace_id, type, created_at, actor_type, actor_user_id, actor_token_id, actor_address, data, prev_hash, hash, agent_id)
			VALUES ($1, $2, $3, now(), 'system', '', 0, '', $4::json, '', 'h', $5)`, e.ID, e.WorkspaceID, e.Type, string(e.Data), service.EventAgent(e)); err != nil {
			t.Fatal(err)
		}
	}
	got := migratedColumn(t, pool, 44, "kind")
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
	expectPageOfTwo(t, pool, service.EventScope{Agent: "agt_1", Type: data.EventJobFailed, Kind: "run"},
		service.EventScope{Type: data.EventJobFailed, Kind: "embed", AnyAgent: true})
}
