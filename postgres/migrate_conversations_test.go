package postgres_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/redact"
	"github.com/voiceapi/voiceapi/service"
)

// Conversations that ended before migration 0024 are raw, and one's call may have been
// deleted since. The migration lists the ended ones (an active one stays off the list)
// and indexes them by call; the upgrade's job then redacts the one whose call is stored
// and deletes the other, as on bbolt.
func TestMigrationListsEndedConversationsForTheirRedaction(t *testing.T) {
	pool := schemaAt(t, 23)
	ctx := context.Background()
	const card = "4111 1111 1111 1111"
	t0 := time.Now().UTC().Add(-time.Hour).Truncate(time.Millisecond)
	ids := data.NewIDGen()
	call1, call2 := ids.New(data.PrefixCall), ids.New(data.PrefixCall)
	insert := func(id string, callID *string) {
		status, ended, reason := "active", (*time.Time)(nil), (*string)(nil)
		if callID != nil {
			r := data.EndUserEnded
			status, ended, reason = "ended", &t0, &r
		}
		if _, err := pool.Exec(ctx, `INSERT INTO conversations (id, workspace_id, agent_id, status, variables, input_tokens,
			output_tokens, agent_turns, disconnection_reason, call_id, items, started_by, created_at, updated_at, ended_at)
			VALUES ($1, 'ws_1', 'agt_1', $2, $3, 0, 0, 1, $4, $5, 1, 'usr_1', $6, $6, $7)`,
			id, status, `{"card": "`+card+`"}`, reason, callID, t0, ended); err != nil {
			t.Fatal(err)
		}
		item, _ := json.Marshal(data.ConversationItem{Role: data.ItemUser, Content: "my card is " + card, CreatedAt: data.NewTime(t0)})
		if _, err := pool.Exec(ctx, `INSERT INTO conversation_items (conversation_id, seq, item) VALUES ($1, 0, $2)`, id, item); err != nil {
			t.Fatal(err)
		}
	}
	insert("conv_1", &call1)
	insert("conv_2", &call2)
	insert("conv_3", nil)
	db := openMigrated(t, pool)
	defer db.Close()
	if err := db.Update(ctx, func(tx service.Tx) error {
		listed, err := tx.ConversationsToRedact("ws_1", 10)
		if err != nil || strings.Join(listed, ",") != "conv_1,conv_2" {
			t.Errorf("listed after the migration: %v, %v; want the two ended ones", listed, err)
		}
		if got, err := tx.ConversationOfCall(call1); err != nil || got != "conv_1" {
			t.Errorf("ConversationOfCall = %q, %v", got, err)
		}
		ws := &data.WorkspaceRecord{Workspace: data.Workspace{ID: "ws_1", Name: "w", CreatedAt: data.NewTime(t0), UpdatedAt: data.NewTime(t0),
			Privacy: data.WorkspacePrivacy{Redaction: data.Redaction{Detectors: []string{redact.Card}, Rules: []data.RedactionRule{}}}}}
		if err := tx.PutWorkspace(ws); err != nil {
			return err
		}
		return tx.InsertCall(&data.Call{ID: call1, WorkspaceID: "ws_1", AgentID: "agt_1", Direction: data.DirectionWeb,
			Status: data.CallEnded, CreatedAt: data.NewTime(t0), UpdatedAt: data.NewTime(t0)})
	}); err != nil {
		t.Fatal(err)
	}
	svc, err := service.New(db, db.ServiceOptions())
	if err != nil {
		t.Fatal(err)
	}
	runner := svc.Jobs.NewRunner(service.RunnerOptions{Owner: "upgrade", Kinds: []string{service.JobKindRedactEnded}, Poll: 10 * time.Millisecond})
	runner.Start(ctx)
	deadline := time.Now().Add(30 * time.Second)
	for {
		var left []string
		if err := db.View(ctx, func(tx service.Tx) (err error) {
			left, err = tx.ConversationsToRedact("ws_1", 10)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("still listed after 30 s: %v", left)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := runner.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := db.View(ctx, func(tx service.Tx) error {
		c, err := tx.Conversation("conv_1")
		if err != nil || c == nil || c.Variables["card"] != "[card]" {
			t.Errorf("the conversation whose call is stored: %+v, %v", c, err)
		}
		items, err := tx.ConversationItems("conv_1")
		if err != nil || len(items) != 1 || items[0].Content != "my card is [card]" {
			t.Errorf("its items %+v, %v", items, err)
		}
		if gone, err := tx.Conversation("conv_2"); gone != nil || err != nil {
			t.Errorf("the conversation whose call is gone: %+v, %v", gone, err)
		}
		if items, _ := tx.ConversationItems("conv_3"); len(items) != 1 || !strings.Contains(items[0].Content, card) {
			t.Errorf("the active conversation's items %+v", items)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
