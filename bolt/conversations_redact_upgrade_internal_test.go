package bolt

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/redact"
	"github.com/voiceapi/voiceapi/service"
)

// A schema 11 file holds conversations ended before an ended conversation was redacted
// with its call: raw, and one whose call was deleted since. Opening it (schema 12) lists
// them, and the upgrade's job (started with the runner, as serve starts it) redacts the
// first as its call is and deletes the second; an active one is left as it is.
func TestConversationsEndedBeforeTheUpgradeAreRedacted(t *testing.T) {
	db, dir, opts := openFile(t)
	t0 := time.Now().UTC().Add(-time.Hour).Truncate(time.Millisecond)
	const card = "4111 1111 1111 1111"
	raw := []data.ConversationItem{
		{Role: data.ItemUser, Content: "my card is " + card, CreatedAt: data.NewTime(t0)},
		{Role: data.ItemTool, Content: `note({"card":"` + card + `"})`, ToolCall: &data.ToolCallItem{ID: "c1", Name: "note",
			Arguments: map[string]any{"card": card}, Result: map[string]any{"set": map[string]any{"card": card}}}, CreatedAt: data.NewTime(t0)},
	}
	conv := func(id, callID string) *data.StoredConversation {
		c := &data.StoredConversation{Conversation: data.Conversation{ID: id, WorkspaceID: "ws_1", AgentID: "agt_1",
			Status: data.ConversationActive, Variables: map[string]any{"card": card}, CreatedAt: data.NewTime(t0), UpdatedAt: data.NewTime(t0)},
			StartedBy: "usr_1", Items: len(raw)}
		if callID != "" {
			at, reason := data.NewTime(t0), data.EndUserEnded
			c.Status, c.EndedAt, c.DisconnectionReason, c.CallID = data.ConversationEnded, &at, &reason, &callID
		}
		return c
	}
	call1, call2 := db.ids.New(data.PrefixCall), db.ids.New(data.PrefixCall)
	kept, orphan, active := conv("conv_1", call1), conv("conv_2", call2), conv("conv_3", "")
	if err := db.Update(context.Background(), func(tx service.Tx) error {
		ws := &data.WorkspaceRecord{Workspace: data.Workspace{ID: "ws_1", Name: "w", CreatedAt: data.NewTime(t0), UpdatedAt: data.NewTime(t0),
			Privacy: data.WorkspacePrivacy{Redaction: data.Redaction{Detectors: []string{redact.Card}, Rules: []data.RedactionRule{}}}}}
		if err := tx.PutWorkspace(ws); err != nil {
			return err
		}
		if err := tx.InsertCall(&data.Call{ID: call1, WorkspaceID: "ws_1", AgentID: "agt_1", Direction: data.DirectionWeb,
			Status: data.CallEnded, CreatedAt: data.NewTime(t0), UpdatedAt: data.NewTime(t0)}); err != nil {
			return err
		}
		for _, c := range []*data.StoredConversation{kept, orphan, active} {
			if err := tx.InsertConversation(c, raw); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// As a schema 11 binary left it: no call index, nothing listed.
	db = asOlderFile(t, db, dir, opts, 11, bucketConversationsCall, bucketConversationsToRedact)
	defer db.Close()
	runRedactEnded(t, db, "ws_1")
	if err := db.View(context.Background(), func(tx service.Tx) error {
		c, err := tx.Conversation("conv_1")
		if err != nil || c == nil {
			t.Fatalf("the conversation whose call is stored: %v, %v", c, err)
		}
		if c.Variables["card"] != "[card]" {
			t.Errorf("its variables %v", c.Variables)
		}
		items, err := tx.ConversationItems("conv_1")
		if err != nil || len(items) != 2 || items[0].Content != "my card is [card]" || items[1].ToolCall.Arguments.(map[string]any)["card"] != "[card]" {
			t.Errorf("its items %+v, %v", items, err)
		}
		if gone, err := tx.Conversation("conv_2"); gone != nil || err != nil {
			t.Errorf("the conversation whose call is gone: %+v, %v", gone, err)
		}
		items, _ = tx.ConversationItems("conv_3")
		if len(items) != 2 || !strings.Contains(items[0].Content, card) {
			t.Errorf("the active conversation's items %+v: an open one keeps its raw text", items)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// runRedactEnded runs the upgrade's job, started with the runner as serve starts it,
// until workspace ws lists no conversation left to redact.
func runRedactEnded(t *testing.T, db *DB, ws string) {
	t.Helper()
	runner := svcOf(db).Jobs.NewRunner(service.RunnerOptions{Owner: "upgrade", Kinds: []string{service.JobKindRedactEnded}, Poll: 10 * time.Millisecond})
	runner.Start(context.Background())
	deadline := time.Now().Add(20 * time.Second)
	for {
		var left []string
		if err := db.View(context.Background(), func(tx service.Tx) (err error) {
			left, err = tx.ConversationsToRedact(ws, 10)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("still listed after 20 s: %v", left)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := runner.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// A conversation ended before the upgrade with more text than the workspace's custom
// rules redact within redact.MaxWork is kept as an end keeps it now: redacted as far as
// the bound allows and the rest withheld, its call's transcript untouched. Deleted
// before, it lost what its team could still read of it.
func TestConversationEndedBeforeTheUpgradeTooLongIsWithheld(t *testing.T) {
	db, dir, opts := openFile(t)
	t0 := time.Now().UTC().Add(-time.Hour).Truncate(time.Millisecond)
	msg := "card 4111 1111 1111 1111 " + strings.Repeat("x", 10_000-25)
	items := make([]data.ConversationItem, 21)
	for i := range items {
		items[i] = data.ConversationItem{Role: data.ItemUser, Content: msg, CreatedAt: data.NewTime(t0)}
	}
	var rules []data.RedactionRule
	for i := range 5 { // as large as a setting may be: see service's longConversation
		rules = append(rules, data.RedactionRule{Name: fmt.Sprintf("r%d", i), Pattern: fmt.Sprintf("Q{%d}", redact.MaxRulesProgram/5-2)})
	}
	callID := db.ids.New(data.PrefixCall)
	at, reason := data.NewTime(t0), data.EndUserEnded
	conv := &data.StoredConversation{Conversation: data.Conversation{ID: "conv_long", WorkspaceID: "ws_1", AgentID: "agt_1",
		Status: data.ConversationEnded, EndedAt: &at, DisconnectionReason: &reason, CallID: &callID,
		CreatedAt: data.NewTime(t0), UpdatedAt: data.NewTime(t0)}, StartedBy: "usr_1", Items: len(items)}
	if err := db.Update(context.Background(), func(tx service.Tx) error {
		ws := &data.WorkspaceRecord{Workspace: data.Workspace{ID: "ws_1", Name: "w", CreatedAt: data.NewTime(t0), UpdatedAt: data.NewTime(t0),
			Privacy: data.WorkspacePrivacy{Redaction: data.Redaction{Detectors: []string{redact.Card}, Rules: rules}}}}
		if err := tx.PutWorkspace(ws); err != nil {
			return err
		}
		if err := tx.InsertCall(&data.Call{ID: callID, WorkspaceID: "ws_1", AgentID: "agt_1", Direction: data.DirectionWeb,
			Status: data.CallEnded, CreatedAt: data.NewTime(t0), UpdatedAt: data.NewTime(t0)}); err != nil {
			return err
		}
		return tx.InsertConversation(conv, items)
	}); err != nil {
		t.Fatal(err)
	}
	db = asOlderFile(t, db, dir, opts, 11, bucketConversationsCall, bucketConversationsToRedact)
	defer db.Close()
	runRedactEnded(t, db, "ws_1")
	if err := db.View(context.Background(), func(tx service.Tx) error {
		c, err := tx.Conversation("conv_long")
		if err != nil || c == nil {
			t.Fatalf("the long conversation: %v, %v; want it kept, withheld past the bound", c, err)
		}
		kept, err := tx.ConversationItems("conv_long")
		if err != nil || len(kept) != 21 {
			t.Fatalf("%d items, %v", len(kept), err)
		}
		if !strings.HasPrefix(kept[0].Content, "card [card] ") || kept[20].Content != service.WithheldTooLong {
			t.Errorf("items begin %.20q and end %.40q", kept[0].Content, kept[20].Content)
		}
		for i, it := range kept {
			if strings.Contains(it.Content, "4111") {
				t.Fatalf("item %d keeps a card number", i)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
