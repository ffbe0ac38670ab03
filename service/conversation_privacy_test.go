package service_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/llm"
	"github.com/voiceapi/voiceapi/service"
	"github.com/voiceapi/voiceapi/strictjson"
)

// cardNumber is the caller's secret of these tests, which workspace A's redaction (a card
// detector) replaces with [card].
const cardNumber = "4111 1111 1111 1111"

// cardModel says back what the user said; a message naming a card is first noted with
// the note_card tool (so the card is in the tool's arguments, its result and the
// variables); "bye" calls hang_up.
type cardModel struct{}

func (cardModel) Provider() string { return data.LLMInternal }

func (cardModel) Complete(_ context.Context, req llm.Request, _ func(string) error) (*llm.Reply, error) {
	last := req.Messages[len(req.Messages)-1]
	switch {
	case last.Role == llm.RoleUser && strings.Contains(last.Content, "bye"):
		return &llm.Reply{Text: "Goodbye.", ToolCalls: []llm.ToolCall{{ID: "c1", Name: "hang_up", Arguments: "{}"}}, StopReason: "tool_calls"}, nil
	case last.Role == llm.RoleUser && strings.Contains(last.Content, "card"):
		args, _ := json.Marshal(map[string]string{"card": cardNumber})
		return &llm.Reply{ToolCalls: []llm.ToolCall{{ID: "c2", Name: "note_card", Arguments: string(args)}}, StopReason: "tool_calls"}, nil
	case last.Role == llm.RoleTool:
		return &llm.Reply{Text: "Noted your card " + cardNumber + ".", StopReason: "stop"}, nil
	}
	return &llm.Reply{Text: "You said: " + last.Content, StopReason: "stop"}, nil
}

// conversationPrivacyWorld is conversationRedactionWorld with agent A able to note a
// card too, every conversation answered by cardModel.
func conversationPrivacyWorld(t *testing.T) (*redactionWorld, *testClock) {
	w, clock := conversationRedactionWorld(t)
	w.svc.Conversations.Configure(service.ConversationOptions{Models: func(data.LLMConfig) (llm.Client, error) { return cardModel{}, nil }})
	body, _ := json.Marshal(map[string]any{"llm_config": map[string]any{"tools": []map[string]any{
		{"name": "hang_up", "type": data.ToolEndCall},
		{"name": "note_card", "type": data.ToolExtractDynamicVariable, "variables": []map[string]any{{"type": "string", "name": "card", "description": "The card number"}}},
	}}})
	var up data.AgentUpdate
	if err := strictjson.Decode(body, &up); err != nil {
		t.Fatal(err)
	}
	if _, err := w.svc.Agents.UpdateAgent(w.ctxA, w.agentA, up); err != nil {
		t.Fatal(err)
	}
	return w, clock
}

// conversationJSON is conversation id as GET /conversations/{id} answers it.
func conversationJSON(t *testing.T, w *redactionWorld, id string) string {
	t.Helper()
	c, err := w.svc.Conversations.Conversation(w.ctxA, id)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// An open conversation keeps its raw messages (the model reads them); once it ends, each
// of the four ways, it keeps only what its call keeps: its messages, tool calls and
// variables redacted with the workspace's redaction, as its call's transcript is.
func TestEndedConversationIsRedacted(t *testing.T) {
	for _, e := range conversationEnds() {
		t.Run(e.name, func(t *testing.T) {
			w, clock := conversationPrivacyWorld(t)
			id := w.startConversation(t, "my card is "+cardNumber, "order ORD-123456 please")
			if open := conversationJSON(t, w, id); !strings.Contains(open, cardNumber) {
				t.Fatalf("the open conversation lost its raw text: %s", open)
			}
			callID := e.end(t, w, clock, id)
			if callID == nil {
				t.Fatal("the conversation became no call")
			}
			got := conversationJSON(t, w, id)
			for _, raw := range []string{"4111", "ORD-123456"} {
				if strings.Contains(got, raw) {
					t.Errorf("the ended conversation still holds %q", raw)
				}
			}
			c, err := w.svc.Conversations.Conversation(w.ctxA, id)
			if err != nil {
				t.Fatal(err)
			}
			if c.Variables["card"] != "[card]" {
				t.Errorf("variables %v, want card [card]", c.Variables)
			}
			var user []string
			var tool *data.ToolCallItem
			for _, it := range c.Messages {
				if it.Role == data.ItemUser {
					user = append(user, it.Content)
				}
				if it.ToolCall != nil && it.ToolCall.Name == "note_card" {
					tool = it.ToolCall
				}
			}
			if len(user) < 2 || user[0] != "my card is [card]" || user[1] != "order [order_id] please" {
				t.Errorf("user messages %q", user)
			}
			if args, _ := json.Marshal(tool.Arguments); tool == nil || string(args) != `{"card":"[card]"}` {
				t.Errorf("note_card's arguments %s", args)
			}
			// The call's transcript says what the conversation's messages say.
			call, err := w.svc.Calls.Call(w.ctxA, *callID)
			if err != nil {
				t.Fatal(err)
			}
			if turns := userTurns(call); len(turns) < 2 || turns[0] != user[0] || turns[1] != user[1] {
				t.Errorf("the call's user turns %q, the conversation's %q", turns, user)
			}
		})
	}
}

// endedConversation starts a conversation holding a card number in workspace A, ends it
// and returns its id and its call's.
func endedConversation(t *testing.T, w *redactionWorld) (string, string) {
	t.Helper()
	id := w.startConversation(t, "my card is "+cardNumber)
	call, err := w.svc.Conversations.EndConversation(w.ctxA, id)
	if err != nil {
		t.Fatal(err)
	}
	return id, call.ID
}

// conversationGone reports whether conversation id is not found any more.
func conversationGone(t *testing.T, w *redactionWorld, id string) bool {
	t.Helper()
	_, err := w.svc.Conversations.Conversation(w.ctxA, id)
	if err != nil && data.ErrorCode(err) != data.ENOTFOUND {
		t.Fatal(err)
	}
	return err != nil
}

// An ended conversation goes with its call: DELETE /calls/{id} deletes both in one
// transaction. A call whose metadata was rewritten (conversation_id gone) still takes
// its conversation: the link is the conversation's call_id.
func TestConversationGoesWithItsDeletedCall(t *testing.T) {
	w, _ := conversationPrivacyWorld(t)
	id, callID := endedConversation(t, w)
	kept, keptCall := endedConversation(t, w)
	if _, err := w.svc.Calls.UpdateCall(w.ctxA, callID, data.CallUpdate{Metadata: data.Some(map[string]any{"rewritten": true})}); err != nil {
		t.Fatal(err)
	}
	if err := w.svc.Calls.DeleteCall(w.ctxA, callID); err != nil {
		t.Fatal(err)
	}
	if !conversationGone(t, w, id) {
		t.Error("the conversation outlived its deleted call")
	}
	if conversationGone(t, w, kept) {
		t.Error("another conversation went with a call not its own")
	}
	if _, err := w.svc.Calls.Call(w.ctxA, keptCall); err != nil {
		t.Fatal(err)
	}
}

// The retention sweep that deletes a conversation's call deletes the conversation with
// it; a call on legal hold keeps both.
func TestRetentionSweepsConversationsWithTheirCalls(t *testing.T) {
	w, clock := conversationPrivacyWorld(t)
	one := 1
	if _, err := w.svc.Workspaces.UpdateWorkspace(w.ctxA, w.wsA, data.WorkspaceUpdate{Privacy: data.Some(data.WorkspacePrivacyPatch{RetentionDays: data.Some(&one)})}); err != nil {
		t.Fatal(err)
	}
	expired, _ := endedConversation(t, w)
	held, heldCall := endedConversation(t, w)
	if _, err := w.svc.Calls.UpdateCall(w.ctxA, heldCall, data.CallUpdate{LegalHold: data.Some(true)}); err != nil {
		t.Fatal(err)
	}
	clock.advance(48 * time.Hour)
	got, err := w.svc.Retention.Sweep(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if want := (data.RetentionSwept{CallsDeleted: 1, CallsOnHold: 1, ConversationsDeleted: 1}); got[w.wsA] != want {
		t.Errorf("sweep = %+v, want %+v", got[w.wsA], want)
	}
	if !conversationGone(t, w, expired) {
		t.Error("the expired call's conversation outlived it")
	}
	if conversationGone(t, w, held) {
		t.Error("the held call's conversation was deleted")
	}
}

// The retention sweep deletes an expired call's conversation with what its start's
// Idempotency-Key kept cut to its claim (deleteConversation, as DELETE of the call):
// the answer, holding the start's variables and opening, is not left at rest for the
// purge. Both engines.
func TestRetentionSweepCutsTheKeptStart(t *testing.T) {
	w, clock := conversationPrivacyWorld(t)
	one := 1
	if _, err := w.svc.Workspaces.UpdateWorkspace(w.ctxA, w.wsA, data.WorkspaceUpdate{Privacy: data.Some(data.WorkspacePrivacyPatch{RetentionDays: data.Some(&one)})}); err != nil {
		t.Fatal(err)
	}
	claim := &data.IdempotencyClaim{ID: "claim-1", TokenID: 7, Key: "start", RequestHash: "h", Status: 201}
	c, err := w.svc.Conversations.StartConversation(data.WithIdempotencyClaim(w.ctxA, claim), w.agentA,
		data.ConversationStart{Version: data.ConversationVersion{Draft: true}}, data.ConversationObserver{})
	if err != nil {
		t.Fatal(err)
	}
	kept := func() *data.IdempotentResponse {
		t.Helper()
		var r *data.IdempotentResponse
		if err := w.store.View(context.Background(), func(tx service.Tx) (err error) {
			r, err = tx.IdempotentResponse(7, "start")
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return r
	}
	if r := kept(); r == nil || r.Status != 201 || len(r.Body) == 0 {
		t.Fatalf("the start kept %+v: nothing for the sweep to cut", r)
	}
	if _, err := w.svc.Conversations.EndConversation(w.ctxA, c.ID); err != nil {
		t.Fatal(err)
	}
	clock.advance(48 * time.Hour)
	if _, err := w.svc.Retention.Sweep(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !conversationGone(t, w, c.ID) {
		t.Fatal("the sweep left the conversation")
	}
	if r := kept(); r == nil {
		t.Error("after the sweep the start's key keeps nothing, want its claim")
	} else if r.Status != 0 || len(r.Body) != 0 || r.Header != nil {
		t.Errorf("after the sweep the start's key keeps status %d, a body of %d bytes, headers %v; want its claim alone", r.Status, len(r.Body), r.Header)
	}
}
