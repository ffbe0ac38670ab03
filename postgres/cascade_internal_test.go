package postgres

import (
	"context"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/pgtest"
	"github.com/voiceapi/voiceapi/service"
)

// fillWorkspace stores one of each record of this group in workspace ws: an event, a
// webhook with a pending delivery, a knowledge base with a file source, its chunks and
// its file.
func fillWorkspace(t *testing.T, db *DB, ws string) {
	t.Helper()
	ctx := context.Background()
	ids := db.IDs()
	kb, src := ids.New(data.PrefixKnowledgeBase), ids.New(data.PrefixSource)
	if err := db.PutSourceFile(ctx, ws, kb, src, strings.NewReader("file of "+ws)); err != nil {
		t.Fatal(err)
	}
	err := db.Update(ctx, func(tx service.Tx) error {
		now := data.NewTime(time.Now())
		if err := tx.AppendEvent(&data.Event{ID: ids.New(data.PrefixEvent), Type: data.EventAgentCreated, WorkspaceID: ws, Hash: "h"}); err != nil {
			return err
		}
		w := &data.WebhookRecord{Webhook: data.Webhook{ID: ids.New(data.PrefixWebhook), WorkspaceID: ws, URL: "https://example.com", Events: []string{"*"}, CreatedAt: now, UpdatedAt: now}}
		if err := tx.PutWebhook(w); err != nil {
			return err
		}
		d := &data.Delivery{ID: ids.New(data.PrefixDelivery), WebhookID: w.ID, EventID: "evt_x", EventType: data.EventAgentCreated, Attempt: 1, Status: data.DeliveryPending, NextAttemptAt: &now, CreatedAt: now}
		if err := tx.PutDelivery(d); err != nil {
			return err
		}
		if err := tx.InsertKnowledgeBase(&data.KnowledgeBase{ID: kb, Name: "KB", WorkspaceID: ws, CreatedAt: now, UpdatedAt: now}); err != nil {
			return err
		}
		if err := tx.PutKnowledgeSource(&data.KnowledgeSource{ID: src, Type: data.SourceFiles, KnowledgeBaseID: kb, WorkspaceID: ws, Status: data.SourceIndexed, CreatedAt: now}); err != nil {
			return err
		}
		return tx.PutSourceChunks(kb, src, []data.SourceChunk{{Text: "a"}, {Text: "b", Vector: []float32{1}}})
	})
	if err != nil {
		t.Fatal(err)
	}
}

// rowsOf counts each of this group's tables' rows of workspace ws.
func rowsOf(t *testing.T, db *DB, ws string) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, table := range []string{"events", "event_heads", "webhooks", "deliveries", "knowledge_bases", "knowledge_sources", "knowledge_chunks", "source_files"} {
		var n int
		if err := db.pool.QueryRow(context.Background(), `SELECT count(*) FROM `+table+` WHERE workspace_id = $1`, ws).Scan(&n); err != nil {
			t.Fatal(err)
		}
		out[table] = n
	}
	var n int
	// The outbox has no foreign key to events (migration 0021): an entry whose event is
	// gone counts as every workspace's.
	if err := db.pool.QueryRow(context.Background(), `SELECT count(*) FROM outbox o
		WHERE o.event_id IN (SELECT id FROM events WHERE workspace_id = $1) OR o.event_id NOT IN (SELECT id FROM events)`, ws).Scan(&n); err != nil {
		t.Fatal(err)
	}
	out["outbox"] = n
	return out
}

// The registered workspace cascades leave nothing of a deleted workspace in its
// tables (outbox and pending deliveries included) and touch no other workspace.
func TestWorkspaceCascadesOfEventsGroup(t *testing.T) {
	db, err := Open(context.Background(), Options{URL: pgtest.Database(t), PasswordCost: bcrypt.MinCost, SecretKey: make([]byte, 32)})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const gone, kept = "ws_01JAAAAAAAAAAAAAAAAAAAAAAA", "ws_01JBBBBBBBBBBBBBBBBBBBBBBB"
	fillWorkspace(t, db, gone)
	fillWorkspace(t, db, kept)
	for table, n := range rowsOf(t, db, gone) {
		if n == 0 {
			t.Fatalf("%s holds nothing of the workspace before the delete", table)
		}
	}
	err = db.Update(context.Background(), func(stx service.Tx) error {
		for _, cascade := range workspaceCascades {
			if err := cascade(stx.(*tx), gone); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for table, n := range rowsOf(t, db, gone) {
		if n != 0 {
			t.Errorf("%s still holds %d rows of the deleted workspace", table, n)
		}
	}
	for table, n := range rowsOf(t, db, kept) {
		if n == 0 {
			t.Errorf("%s lost the other workspace's rows", table)
		}
	}
}
