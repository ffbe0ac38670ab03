package storetest

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// ConversationWithToolCalls is a stored conversation of n items (n a multiple of 4): turns
// of a user's message, an agent's reply calling a tool whose arguments and result hold
// numbers, the tool's item, and the agent's answer, as a turn leaves them.
func ConversationWithToolCalls(g *data.IDGen, ws string, n int, at time.Time) (*data.StoredConversation, []data.ConversationItem) {
	c := storedConversation(g, ws, at)
	usage := &data.TokenUsage{InputTokens: 812, OutputTokens: 31}
	var items []data.ConversationItem
	for i := 0; len(items) < n; i++ {
		now := data.NewTime(at.Add(time.Duration(i) * time.Second))
		call := &data.ToolCallItem{ID: fmt.Sprintf("call_%d", i), Name: "lookup_order",
			Arguments: map[string]any{"order_id": json.Number("12345678901234567890"), "amount": json.Number("19.90"), "items": []any{json.Number("1"), json.Number("2")}},
			Result:    map[string]any{"status": "shipped", "total": json.Number("0.1000000000000000055511151231257827"), "eta_days": json.Number("3")}}
		items = append(items,
			data.ConversationItem{Role: data.ItemUser, Content: "Where is my order 12345678901234567890?", CreatedAt: now},
			data.ConversationItem{Role: data.ItemAgent, Content: "", ToolCall: call, Knowledge: []data.KnowledgeRef{},
				LatencyMS: &data.TurnLatency{FirstToken: 240, Total: 610}, Usage: usage, CreatedAt: now},
			data.ConversationItem{Role: data.ItemTool, Content: `lookup_order() → {"status":"shipped"}`, ToolCall: call, CreatedAt: now},
			data.ConversationItem{Role: data.ItemAgent, Content: "Your order has shipped and arrives in 3 days.",
				LatencyMS: &data.TurnLatency{FirstToken: 200, Total: 480}, Usage: usage, CreatedAt: now},
		)
	}
	c.Items = len(items)
	return c, items
}

// BenchConversationRead reads a conversation of 40 items as each turn does
// (service/conversation_turn.go: the record, then every item to rebuild the model's context).
func BenchConversationRead(b *testing.B, open Opener) {
	s := open(b)
	c, items := ConversationWithToolCalls(stepIDs(), "ws_1", 40, time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC))
	update(b, s, func(tx service.Tx) error { return tx.InsertConversation(c, items) })
	b.ReportAllocs()
	for b.Loop() {
		view(b, s, func(tx service.Tx) error {
			got, err := tx.Conversation(c.ID)
			if err != nil || got == nil {
				b.Fatalf("Conversation = %v, %v", got, err)
			}
			history, err := tx.ConversationItems(c.ID)
			if err != nil || len(history) != len(items) {
				b.Fatalf("ConversationItems = %d items, %v", len(history), err)
			}
			return nil
		})
	}
}

// BenchOpenConversations counts a workspace's open conversations as a start at the bound
// does (service.ConversationService's check, data.DefaultMaxOpenConversations of them
// active), among 5,000 the workspace ended and 5,000 active in other workspaces: the
// count reads the workspace's active ones only.
func BenchOpenConversations(b *testing.B, open Opener) {
	s := open(b)
	g := stepIDs()
	t0 := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	ended, reason := data.NewTime(t0), data.EndUserEnded
	for batch := range 10 {
		update(b, s, func(tx service.Tx) error {
			for i := range 1000 {
				c := storedConversation(g, "ws_1", t0)
				switch {
				case batch < 5:
					c.Status, c.EndedAt, c.DisconnectionReason = data.ConversationEnded, &ended, &reason
				default:
					c.WorkspaceID = fmt.Sprintf("ws_other_%d", i%50)
				}
				if err := tx.InsertConversation(c, nil); err != nil {
					return err
				}
			}
			return nil
		})
	}
	update(b, s, func(tx service.Tx) error {
		for range data.DefaultMaxOpenConversations {
			if err := tx.InsertConversation(storedConversation(g, "ws_1", t0), nil); err != nil {
				return err
			}
		}
		return nil
	})
	b.ReportAllocs()
	for b.Loop() {
		view(b, s, func(tx service.Tx) error {
			n, err := tx.OpenConversations("ws_1", t0.Add(-time.Minute), t0, data.DefaultMaxOpenConversations)
			if err != nil || n != data.DefaultMaxOpenConversations {
				b.Fatalf("OpenConversations = %d, %v", n, err)
			}
			return nil
		})
	}
}

// BenchConversationList: the first page (15) of GET /api/v1/conversations in a workspace
// of n conversations (each of sizes) over 10 agents, all ended but the newest 20 and the
// oldest 20: the whole list, one agent's, the active ones, the active ones' second page
// (5 of the newest, then 10 of the oldest, past every ended one), a caller limited to 2
// agents, and to 500 and 1,000 (the 10 with conversations among them). A store with a
// Settle method (PostgreSQL's: ANALYZE, as autovacuum would) is settled once they are
// stored. A page reads its own records, so its time holds from 1,000 conversations up
// (docs/performance.md, "The conversation list").
func BenchConversationList(b *testing.B, open Opener, sizes ...int) {
	many := make([]string, 1000) // an agent_ids list's bound
	for i := range many {
		many[i] = fmt.Sprintf("agt_%d", i)
	}
	for _, n := range sizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			s := open(b)
			g := stepIDs()
			t0 := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
			ended, reason := data.NewTime(t0), data.EndUserEnded
			for batch := 0; batch < n; batch += 1000 {
				update(b, s, func(tx service.Tx) error {
					for i := batch; i < batch+1000; i++ {
						c := storedConversation(g, "ws_1", t0)
						c.AgentID = fmt.Sprintf("agt_%d", i%10)
						if i >= 20 && i < n-20 {
							c.Status, c.EndedAt, c.DisconnectionReason = data.ConversationEnded, &ended, &reason
						}
						if err := tx.InsertConversation(c, nil); err != nil {
							return err
						}
					}
					return nil
				})
			}
			if settle, ok := s.(interface{ Settle(testing.TB) }); ok {
				settle.Settle(b)
			}
			active := data.ConversationFilter{Status: data.ConversationActive}
			var second string // the active ones' second page
			view(b, s, func(tx service.Tx) error {
				_, page, err := tx.ListConversations("ws_1", active, nil, data.PageRequest{PerPage: 15})
				if err != nil || page.NextCursor == nil {
					b.Fatalf("ListConversations = %+v, %v", page, err)
				}
				second = *page.NextCursor
				return nil
			})
			for _, c := range []struct {
				name   string
				f      data.ConversationFilter
				agents []string
				cursor string
			}{
				{"all", data.ConversationFilter{}, nil, ""},
				{"agent", data.ConversationFilter{AgentID: "agt_3"}, nil, ""},
				{"active", active, nil, ""},
				{"active_oldest", active, nil, second},
				{"limited", data.ConversationFilter{}, []string{"agt_1", "agt_2"}, ""},
				{"limited_500", data.ConversationFilter{}, many[:500], ""},
				{"limited_1000", data.ConversationFilter{}, many, ""},
			} {
				b.Run(c.name, func(b *testing.B) {
					b.ReportAllocs()
					for b.Loop() {
						view(b, s, func(tx service.Tx) error {
							list, _, err := tx.ListConversations("ws_1", c.f, c.agents, data.PageRequest{PerPage: 15, Cursor: c.cursor})
							if err != nil || len(list) != 15 {
								b.Fatalf("ListConversations = %d, %v", len(list), err)
							}
							return nil
						})
					}
				})
			}
		})
	}
}
