package storetest

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

func init() {
	suites = append(suites, suite{"conversations", testConversations}, suite{"conversations_workspace_delete", testConversationsWorkspaceDelete})
}

func storedConversation(g *data.IDGen, ws string, at time.Time) *data.StoredConversation {
	version := 2
	return &data.StoredConversation{
		Conversation: data.Conversation{
			ID: g.New(data.PrefixConversation), WorkspaceID: ws, AgentID: "agt_1", AgentVersion: &version,
			Status: data.ConversationActive, Variables: map[string]any{"name": "Ada", "n": json.Number("2"), "vip": true},
			CreatedAt: data.NewTime(at), UpdatedAt: data.NewTime(at),
		},
		StartedBy: "usr_1",
	}
}

func testConversations(t *testing.T, open Opener) {
	s := open(t)
	g := stepIDs()
	t0 := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	a, b := storedConversation(g, "ws_1", t0), storedConversation(g, "ws_1", t0.Add(time.Minute))
	opening := []data.ConversationItem{{Role: data.ItemAgent, Content: "Hello", Knowledge: []data.KnowledgeRef{}, CreatedAt: data.NewTime(t0)}}
	a.Items = 1
	update(t, s, func(tx service.Tx) error {
		if err := tx.InsertConversation(a, opening); err != nil {
			return err
		}
		return tx.InsertConversation(b, nil)
	})
	checkConversationsRead(t, s, a, b, opening, t0)
	checkConversationTurnStored(t, s, a, b, opening, t0)
	checkConversationEnded(t, s, a, b, t0)
}

// checkConversationsRead checks the inserted conversations a (with its opening) and b
// read back, and the idle index holds both in order, up to the limit.
func checkConversationsRead(t *testing.T, s service.Store, a, b *data.StoredConversation, opening []data.ConversationItem, t0 time.Time) {
	t.Helper()
	view(t, s, func(tx service.Tx) error {
		got, err := tx.Conversation(a.ID)
		if err != nil || got == nil {
			t.Fatalf("Conversation = %v, %v", got, err)
		}
		if !reflect.DeepEqual(got, a) {
			t.Errorf("Conversation =\n%+v\nwant\n%+v", got, a)
		}
		items, err := tx.ConversationItems(a.ID)
		if err != nil || !reflect.DeepEqual(items, opening) {
			t.Errorf("ConversationItems = %+v, %v", items, err)
		}
		if none, err := tx.Conversation("conv_01JD6ZZZZZZZZZZZZZZZZZZZZZ"); none != nil || err != nil {
			t.Errorf("an absent conversation = %+v, %v", none, err)
		}
		idle, err := tx.IdleConversations(t0.Add(time.Hour), 10)
		if want := []string{a.ID, b.ID}; err != nil || !reflect.DeepEqual(idle, want) {
			t.Errorf("IdleConversations = %v, %v; want %v", idle, err, want)
		}
		if idle, _ := tx.IdleConversations(t0.Add(time.Second), 10); !reflect.DeepEqual(idle, []string{a.ID}) {
			t.Errorf("idle before t0+1s = %v, want only the first", idle)
		}
		if idle, _ := tx.IdleConversations(t0.Add(time.Hour), 1); len(idle) != 1 {
			t.Errorf("the limit is not kept: %v", idle)
		}
		return nil
	})
}

// checkConversationTurnStored stores a turn of a: the lease, then the items appended and
// the record moved on, out of the idle index.
func checkConversationTurnStored(t *testing.T, s service.Store, a, b *data.StoredConversation, opening []data.ConversationItem, t0 time.Time) {
	t.Helper()
	lease := &data.ConversationLease{Token: "tok", Until: data.NewTime(t0.Add(5 * time.Minute))}
	a.Lease = lease
	update(t, s, func(tx service.Tx) error { return tx.PutConversation(a, nil) })
	view(t, s, func(tx service.Tx) error {
		got, _ := tx.Conversation(a.ID)
		if got.Lease == nil || *got.Lease != *lease {
			t.Errorf("lease = %+v, want %+v", got.Lease, lease)
		}
		return nil
	})
	turn := []data.ConversationItem{
		{Role: data.ItemUser, Content: "Hi", CreatedAt: data.NewTime(t0.Add(2 * time.Hour))},
		{Role: data.ItemAgent, Content: "", LatencyMS: &data.TurnLatency{FirstToken: 3, Total: 9}, Usage: &data.TokenUsage{InputTokens: 5, OutputTokens: 1}, CreatedAt: data.NewTime(t0.Add(2 * time.Hour))},
		{Role: data.ItemTool, Content: "x() → {}", ToolCall: &data.ToolCallItem{ID: "c1", Name: "x", Arguments: map[string]any{"k": "v"}, Result: map[string]any{"ok": true}, Error: true}, CreatedAt: data.NewTime(t0.Add(2 * time.Hour))},
	}
	a.Lease, a.Items, a.AgentTurns = nil, 4, 1
	a.Usage = data.TokenUsage{InputTokens: 5, OutputTokens: 1}
	a.UpdatedAt = data.NewTime(t0.Add(2 * time.Hour))
	a.Variables["plan"] = "pro"
	update(t, s, func(tx service.Tx) error { return tx.PutConversation(a, turn) })
	view(t, s, func(tx service.Tx) error {
		got, _ := tx.Conversation(a.ID)
		if !reflect.DeepEqual(got, a) {
			t.Errorf("after a turn =\n%+v\nwant\n%+v", got, a)
		}
		items, _ := tx.ConversationItems(a.ID)
		if want := append(append([]data.ConversationItem{}, opening...), turn...); !reflect.DeepEqual(items, want) {
			t.Errorf("items after a turn =\n%+v\nwant\n%+v", items, want)
		}
		if idle, _ := tx.IdleConversations(t0.Add(time.Hour), 10); !reflect.DeepEqual(idle, []string{b.ID}) {
			t.Errorf("idle after a's turn = %v, want only b (a moved on)", idle)
		}
		return nil
	})
}

// checkConversationEnded ends b and checks it leaves the idle index.
func checkConversationEnded(t *testing.T, s service.Store, a, b *data.StoredConversation, t0 time.Time) {
	t.Helper()
	ended := data.NewTime(t0.Add(3 * time.Hour))
	reason, callID := data.EndUserEnded, "call_1"
	b.Status, b.EndedAt, b.DisconnectionReason, b.CallID, b.AgentVersion = data.ConversationEnded, &ended, &reason, &callID, nil
	update(t, s, func(tx service.Tx) error { return tx.PutConversation(b, nil) })
	view(t, s, func(tx service.Tx) error {
		if idle, _ := tx.IdleConversations(t0.Add(24*time.Hour), 10); !reflect.DeepEqual(idle, []string{a.ID}) {
			t.Errorf("idle after b ended = %v, want only a", idle)
		}
		got, _ := tx.Conversation(b.ID)
		if !reflect.DeepEqual(got, b) {
			t.Errorf("ended =\n%+v\nwant\n%+v", got, b)
		}
		return nil
	})
}

func testConversationsWorkspaceDelete(t *testing.T, open Opener) {
	s := open(t)
	g := stepIDs()
	t0 := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	ws1, ws2 := g.New(data.PrefixWorkspace), g.New(data.PrefixWorkspace)
	gone, kept := storedConversation(g, ws1, t0), storedConversation(g, ws2, t0)
	gone.Items, kept.Items = 1, 1
	item := []data.ConversationItem{{Role: data.ItemUser, Content: "hi", CreatedAt: data.NewTime(t0)}}
	update(t, s, func(tx service.Tx) error {
		for _, w := range []string{ws1, ws2} {
			if err := tx.PutWorkspace(&data.WorkspaceRecord{Workspace: data.Workspace{ID: w, Name: w, CreatedAt: data.NewTime(t0), UpdatedAt: data.NewTime(t0)}}); err != nil {
				return err
			}
		}
		if err := tx.InsertConversation(gone, item); err != nil {
			return err
		}
		return tx.InsertConversation(kept, item)
	})
	update(t, s, func(tx service.Tx) error { return tx.DeleteWorkspace(ws1) })
	view(t, s, func(tx service.Tx) error {
		if c, _ := tx.Conversation(gone.ID); c != nil {
			t.Error("a deleted workspace's conversation is still stored")
		}
		if items, _ := tx.ConversationItems(gone.ID); len(items) != 0 {
			t.Errorf("its items are still stored: %v", items)
		}
		if idle, _ := tx.IdleConversations(t0.Add(time.Hour), 10); !reflect.DeepEqual(idle, []string{kept.ID}) {
			t.Errorf("idle = %v, want only the other workspace's", idle)
		}
		if items, _ := tx.ConversationItems(kept.ID); len(items) != 1 {
			t.Errorf("the other workspace's items = %v", items)
		}
		return nil
	})
}
