package storetest

import (
	"reflect"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

func init() {
	suites = append(suites, suite{"conversations_ended", testConversationsEnded})
}

// An ended conversation is found by the call it became, its items are rewritten in
// place (their redacted form), and it is deleted with every entry of it.
func testConversationsEnded(t *testing.T, open Opener) {
	s := open(t)
	g := stepIDs()
	t0 := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	ended, other, active := storedConversation(g, "ws_1", t0), storedConversation(g, "ws_1", t0), storedConversation(g, "ws_1", t0)
	raw := []data.ConversationItem{
		{Role: data.ItemUser, Content: "card 4111 1111 1111 1111", CreatedAt: data.NewTime(t0)},
		{Role: data.ItemTool, Content: "note(…)", ToolCall: &data.ToolCallItem{ID: "c1", Name: "note", Arguments: map[string]any{"card": "4111 1111 1111 1111"}, Result: map[string]any{"ok": true}}, CreatedAt: data.NewTime(t0)},
	}
	for _, c := range []*data.StoredConversation{ended, other, active} {
		c.Items = len(raw)
	}
	end := func(c *data.StoredConversation, callID string) {
		at, reason := data.NewTime(t0.Add(time.Minute)), data.EndUserEnded
		c.Status, c.EndedAt, c.DisconnectionReason, c.CallID = data.ConversationEnded, &at, &reason, &callID
	}
	update(t, s, func(tx service.Tx) error {
		for _, c := range []*data.StoredConversation{ended, other, active} {
			if err := tx.InsertConversation(c, raw); err != nil {
				return err
			}
		}
		end(ended, "call_1")
		end(other, "call_2")
		if err := tx.PutConversation(ended, nil); err != nil {
			return err
		}
		return tx.PutConversation(other, nil)
	})
	view(t, s, func(tx service.Tx) error {
		for call, want := range map[string]string{"call_1": ended.ID, "call_2": other.ID, "call_3": ""} {
			if got, err := tx.ConversationOfCall(call); err != nil || got != want {
				t.Errorf("ConversationOfCall(%s) = %q, %v; want %q", call, got, err, want)
			}
		}
		// Only the storage upgrade lists conversations to redact: an end never does.
		if ids, err := tx.ConversationsToRedact("ws_1", 10); err != nil || len(ids) != 0 {
			t.Errorf("ConversationsToRedact = %v, %v; want none", ids, err)
		}
		return nil
	})
	checkConversationItemsRewritten(t, s, ended, raw)
	checkConversationDeleted(t, s, ended, other, active, raw, t0)
}

// checkConversationItemsRewritten replaces c's items with their redacted form, and
// refuses a rewrite of another count.
func checkConversationItemsRewritten(t *testing.T, s service.Store, c *data.StoredConversation, raw []data.ConversationItem) {
	t.Helper()
	red := []data.ConversationItem{raw[0], raw[1]}
	red[0].Content = "card [card]"
	tc := *raw[1].ToolCall
	tc.Arguments = map[string]any{"card": "[card]"}
	red[1].ToolCall = &tc
	update(t, s, func(tx service.Tx) error { return tx.RewriteConversationItems(c.ID, red) })
	view(t, s, func(tx service.Tx) error {
		if got, err := tx.ConversationItems(c.ID); err != nil || !reflect.DeepEqual(got, red) {
			t.Errorf("items after the rewrite =\n%+v, %v\nwant\n%+v", got, err, red)
		}
		return nil
	})
	if err := s.Update(t.Context(), func(tx service.Tx) error { return tx.RewriteConversationItems(c.ID, red[:1]) }); err == nil {
		t.Error("a rewrite of 1 item of 2 was taken")
	}
}

// checkConversationDeleted deletes the ended conversation and the active one: each goes
// with its items and entries (by call, idle, open), and the other stays.
func checkConversationDeleted(t *testing.T, s service.Store, ended, other, active *data.StoredConversation, raw []data.ConversationItem, t0 time.Time) {
	t.Helper()
	update(t, s, func(tx service.Tx) error {
		if err := tx.DeleteConversation(ended.ID); err != nil {
			return err
		}
		if err := tx.DeleteConversation(active.ID); err != nil {
			return err
		}
		if err := tx.ConversationRedacted("ws_1", other.ID); err != nil { // not listed: no error
			return err
		}
		return tx.DeleteConversation("conv_01JD6ZZZZZZZZZZZZZZZZZZZZZ") // absent: no error
	})
	view(t, s, func(tx service.Tx) error {
		for _, id := range []string{ended.ID, active.ID} {
			if c, err := tx.Conversation(id); c != nil || err != nil {
				t.Errorf("deleted conversation %s = %+v, %v", id, c, err)
			}
			if items, err := tx.ConversationItems(id); len(items) != 0 || err != nil {
				t.Errorf("deleted conversation %s's items = %+v, %v", id, items, err)
			}
		}
		if got, err := tx.ConversationOfCall("call_1"); got != "" || err != nil {
			t.Errorf("ConversationOfCall of the deleted one's call = %q, %v", got, err)
		}
		if got, _ := tx.ConversationOfCall("call_2"); got != other.ID {
			t.Errorf("ConversationOfCall of the other's call = %q", got)
		}
		if idle, _ := tx.IdleConversations(t0.Add(time.Hour), 10); len(idle) != 0 {
			t.Errorf("idle after the active one's delete = %v", idle)
		}
		if n, _ := tx.OpenConversations("ws_1", t0.Add(-time.Hour), t0, 10); n != 0 {
			t.Errorf("open after the active one's delete = %d", n)
		}
		if items, _ := tx.ConversationItems(other.ID); !reflect.DeepEqual(items, raw) {
			t.Errorf("the other's items = %+v", items)
		}
		return nil
	})
}
