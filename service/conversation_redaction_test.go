package service_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/llm"
	"github.com/voiceapi/voiceapi/redact"
	"github.com/voiceapi/voiceapi/service"
	"github.com/voiceapi/voiceapi/strictjson"
)

// hangUpModel answers "ok", or calls the hang_up tool when the user says "bye".
type hangUpModel struct{}

func (hangUpModel) Provider() string { return data.LLMInternal }

func (hangUpModel) Complete(_ context.Context, req llm.Request, _ func(string) error) (*llm.Reply, error) {
	last := req.Messages[len(req.Messages)-1]
	if last.Role == llm.RoleUser && strings.Contains(last.Content, "bye") {
		return &llm.Reply{Text: "Goodbye.", ToolCalls: []llm.ToolCall{{ID: "c1", Name: "hang_up", Arguments: "{}"}}, StopReason: "tool_calls"}, nil
	}
	return &llm.Reply{Text: "ok", StopReason: "stop"}, nil
}

// testClock is a clock tests move forward.
type testClock struct{ ahead atomic.Int64 }

func (c *testClock) now() time.Time          { return time.Now().Add(time.Duration(c.ahead.Load())) }
func (c *testClock) advance(d time.Duration) { c.ahead.Add(int64(d)) }

// conversationRedactionWorld is redactionWorld on a clock the test moves, with agent A
// able to hang up and every conversation answered by hangUpModel.
func conversationRedactionWorld(t *testing.T) (*redactionWorld, *testClock) {
	clock := &testClock{}
	w := newRedactionWorldWith(t, func(o *service.Options) { o.Now = clock.now })
	w.svc.Conversations.Configure(service.ConversationOptions{Models: func(data.LLMConfig) (llm.Client, error) { return hangUpModel{}, nil }})
	body, _ := json.Marshal(map[string]any{"llm_config": map[string]any{"tools": []map[string]any{{"name": "hang_up", "type": data.ToolEndCall}}}})
	var up data.AgentUpdate
	if err := strictjson.Decode(body, &up); err != nil {
		t.Fatal(err)
	}
	if _, err := w.svc.Agents.UpdateAgent(w.ctxA, w.agentA, up); err != nil {
		t.Fatal(err)
	}
	return w, clock
}

func (w *redactionWorld) startConversation(t *testing.T, messages ...string) string {
	t.Helper()
	c, err := w.svc.Conversations.StartConversation(w.ctxA, w.agentA, data.ConversationStart{Version: data.ConversationVersion{Draft: true}}, data.ConversationObserver{})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range messages {
		if _, err := w.svc.Conversations.SendMessage(w.ctxA, c.ID, data.ConversationMessage{Content: m}, data.ConversationObserver{}); err != nil {
			t.Fatal(err)
		}
	}
	return c.ID
}

// 23.5 for conversations: the call an ended conversation becomes is redacted before the
// write transaction, on each way a conversation ends (asked, by a tool in the last turn,
// by the idle sweep, by a message that finds it idle): while it is redacted no write
// transaction is open and another workspace's write completes, and the call is stored
// redacted. Redacted inside the transaction (as the ending once was), the hook finds one
// open, and on bbolt B's write never returns.
func TestConversationEndRedactionHoldsNoWriter(t *testing.T) {
	const secret = "card 4111 1111 1111 1111, order ORD-123456"
	for _, e := range conversationEnds() {
		t.Run(e.name, func(t *testing.T) {
			w, clock := conversationRedactionWorld(t)
			id := w.startConversation(t, secret)
			var redactedA, wroteB int
			service.SetRedactionHook(w.svc, func(ws string) {
				if ws != w.wsA {
					return
				}
				redactedA++
				if n := w.store.writing.Load(); n != 0 {
					t.Errorf("the ended conversation's call is redacted inside %d write transaction(s)", n)
					return
				}
				if _, err := w.svc.Calls.RegisterCall(w.ctxB, data.CallCreate{AgentID: w.agentB, Direction: data.DirectionWeb}); err != nil {
					t.Errorf("workspace B's write while A's call is redacted: %v", err)
					return
				}
				wroteB++
			})
			callID := e.end(t, w, clock, id)
			if callID == nil {
				t.Fatal("the conversation became no call")
			}
			call, err := w.svc.Calls.Call(w.ctxA, *callID)
			if err != nil {
				t.Fatal(err)
			}
			if got := userTurns(call); len(got) == 0 || got[0] != "card [card], order [order_id]" {
				t.Errorf("stored user turns %q", got)
			}
			if call.DisconnectionReason == nil || *call.DisconnectionReason != e.reason {
				t.Errorf("disconnection_reason %v, want %s", call.DisconnectionReason, e.reason)
			}
			if redactedA != 1 || wroteB != 1 {
				t.Errorf("A's call redacted %d times, B wrote %d times during it; want 1 and 1", redactedA, wroteB)
			}
		})
	}
}

// conversationEnd is one way a conversation ends: end ends conversation id and returns
// the call it became.
type conversationEnd struct {
	name   string
	reason string
	end    func(t *testing.T, w *redactionWorld, clock *testClock, id string) *string
}

// conversationEnds are the four ways a conversation ends: asked, by a tool in the last
// turn, by the idle sweep, by a message that finds it idle.
func conversationEnds() []conversationEnd {
	return []conversationEnd{
		{"asked", data.EndUserEnded, func(t *testing.T, w *redactionWorld, _ *testClock, id string) *string {
			call, err := w.svc.Conversations.EndConversation(w.ctxA, id)
			if err != nil {
				t.Fatal(err)
			}
			return &call.ID
		}},
		{"by a tool", data.EndAgentEnded, func(t *testing.T, w *redactionWorld, _ *testClock, id string) *string {
			turn, err := w.svc.Conversations.SendMessage(w.ctxA, id, data.ConversationMessage{Content: "bye"}, data.ConversationObserver{})
			if err != nil {
				t.Fatal(err)
			}
			return turn.CallID
		}},
		{"by the idle sweep", data.EndExpired, func(t *testing.T, w *redactionWorld, clock *testClock, id string) *string {
			clock.advance(data.ConversationIdleTimeout + time.Minute)
			if n, err := w.svc.Conversations.ExpireIdle(context.Background(), 10); err != nil || n != 1 {
				t.Fatalf("ExpireIdle ended %d, %v", n, err)
			}
			return conversationCall(t, w, id)
		}},
		{"by a message to an idle one", data.EndExpired, func(t *testing.T, w *redactionWorld, clock *testClock, id string) *string {
			clock.advance(data.ConversationIdleTimeout + time.Minute)
			if _, err := w.svc.Conversations.SendMessage(w.ctxA, id, data.ConversationMessage{Content: "hello?"}, data.ConversationObserver{}); data.ErrorCode(err) != data.ECONFLICT {
				t.Fatalf("a message to an idle conversation: %v, want a conflict", err)
			}
			return conversationCall(t, w, id)
		}},
	}
}

// userTurns returns the user's lines of a call's transcript.
func userTurns(c *data.Call) []string {
	var out []string
	for _, it := range c.Transcript {
		if it.Role == data.ItemUser {
			out = append(out, it.Content)
		}
	}
	return out
}

// conversationCall returns the call conversation id became (nil while it is active).
func conversationCall(t *testing.T, w *redactionWorld, id string) *string {
	t.Helper()
	c, err := w.svc.Conversations.Conversation(w.ctxA, id)
	if err != nil {
		t.Fatal(err)
	}
	return c.CallID
}

// The end checks in its write what its call was built from: a redaction setting changed
// while the call was redacted is used (the call redacted again), and a message answered
// meanwhile is in the call's transcript (the end prepared again), so the call never
// misses a turn the conversation stored, nor is redacted with a setting no longer current.
func TestConversationEndFollowsWhatChangedMeanwhile(t *testing.T) {
	w, _ := conversationRedactionWorld(t)
	id := w.startConversation(t, "mail ann@example.com, order ORD-123456")
	rounds := 0
	service.SetRedactionHook(w.svc, func(ws string) {
		if ws != w.wsA {
			return
		}
		rounds++
		switch rounds {
		case 1:
			red := data.Redaction{Detectors: []string{redact.Card, redact.Email}, Rules: []data.RedactionRule{}}
			if _, err := w.svc.Workspaces.UpdateWorkspace(w.ctxA, w.wsA, data.WorkspaceUpdate{Privacy: data.Some(data.WorkspacePrivacyPatch{Redaction: data.Some(red)})}); err != nil {
				t.Error(err)
			}
		case 2:
			if _, err := w.svc.Conversations.SendMessage(w.ctxA, id, data.ConversationMessage{Content: "and card 4111 1111 1111 1111"}, data.ConversationObserver{}); err != nil {
				t.Error(err)
			}
		}
	})
	call, err := w.svc.Conversations.EndConversation(w.ctxA, id)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"mail [email], order ORD-123456", "and card [card]"}
	if got := userTurns(call); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("user turns %q, want %q", got, want)
	}
	if rounds != 3 {
		t.Errorf("redacted %d times, want 3 (the setting changed, then a message came)", rounds)
	}
	stored, err := w.svc.Calls.Call(w.ctxA, call.ID)
	if err != nil || strings.Join(userTurns(stored), "|") != strings.Join(want, "|") {
		t.Errorf("stored %+v, %v", stored, err)
	}
}
