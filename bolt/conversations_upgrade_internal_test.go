package bolt

import (
	"context"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// A schema 10 file kept no index of each workspace's open conversations. Opening it
// (schema 11) fills the index from the active conversations, in the opening
// transaction, so that the bound counts the conversations opened before the upgrade; an
// ended one stays out.
func TestOpenConversationsOfAnOlderFileAreIndexed(t *testing.T) {
	db, dir, opts := openFile(t)
	t0 := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	conv := func(id, ws string, leased bool) *data.StoredConversation {
		c := &data.StoredConversation{Conversation: data.Conversation{ID: id, WorkspaceID: ws, AgentID: "agt_1",
			Status: data.ConversationActive, CreatedAt: data.NewTime(t0), UpdatedAt: data.NewTime(t0)}, StartedBy: "usr_1"}
		if leased {
			c.Lease = &data.ConversationLease{Token: "tok", Until: data.NewTime(t0.Add(time.Hour))}
		}
		return c
	}
	ended := conv("conv_3", "ws_1", false)
	endedAt, reason := data.NewTime(t0), data.EndUserEnded
	ended.Status, ended.EndedAt, ended.DisconnectionReason = data.ConversationEnded, &endedAt, &reason
	if err := db.Update(context.Background(), func(tx service.Tx) error {
		for _, c := range []*data.StoredConversation{conv("conv_1", "ws_1", false), conv("conv_2", "ws_1", true), ended, conv("conv_4", "ws_2", false)} {
			if err := tx.InsertConversation(c, nil); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// As a schema 10 binary left it: no open index.
	db = asOlderFile(t, db, dir, opts, 10, bucketConversationsOpen)
	defer db.Close()
	count := func(ws string, leasedAfter time.Time) int {
		var n int
		if err := db.View(context.Background(), func(tx service.Tx) (err error) {
			n, err = tx.OpenConversations(ws, t0.Add(-time.Millisecond), leasedAfter, 10)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count("ws_1", t0); n != 2 {
		t.Errorf("ws_1 has %d open conversations after the upgrade, want its 2 active ones", n)
	}
	if n := count("ws_2", t0); n != 1 {
		t.Errorf("ws_2 has %d open conversations after the upgrade, want 1", n)
	}
	// The lease came along: counted by it alone once its update is past.
	if err := db.View(context.Background(), func(tx service.Tx) error {
		n, err := tx.OpenConversations("ws_1", t0, t0.Add(time.Hour-time.Millisecond), 10)
		if err == nil && n != 1 {
			t.Errorf("leased past the time: %d, want the leased one", n)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
}

// A schema 11 file kept no index of ended conversations by their call. Opening it
// (schema 12) fills the index from the stored conversations, so that the delete of a
// call made before the upgrade finds its conversation; an active one has no call.
func TestConversationsOfAnOlderFileAreIndexedByCall(t *testing.T) {
	db, dir, opts := openFile(t)
	t0 := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	active := &data.StoredConversation{Conversation: data.Conversation{ID: "conv_1", WorkspaceID: "ws_1", AgentID: "agt_1",
		Status: data.ConversationActive, CreatedAt: data.NewTime(t0), UpdatedAt: data.NewTime(t0)}, StartedBy: "usr_1"}
	ended := *active
	endedAt, reason, callID := data.NewTime(t0), data.EndUserEnded, "call_1"
	ended.ID, ended.Status, ended.EndedAt, ended.DisconnectionReason, ended.CallID = "conv_2", data.ConversationEnded, &endedAt, &reason, &callID
	if err := db.Update(context.Background(), func(tx service.Tx) error {
		if err := tx.InsertConversation(active, nil); err != nil {
			return err
		}
		return tx.InsertConversation(&ended, nil)
	}); err != nil {
		t.Fatal(err)
	}
	// As a schema 11 binary left it: no call index.
	db = asOlderFile(t, db, dir, opts, 11, bucketConversationsCall)
	defer db.Close()
	if err := db.View(context.Background(), func(tx service.Tx) error {
		if got, err := tx.ConversationOfCall("call_1"); err != nil || got != "conv_2" {
			t.Errorf("ConversationOfCall after the upgrade = %q, %v; want conv_2", got, err)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
