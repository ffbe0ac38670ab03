package service_test

import (
	"context"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/llm"
	"github.com/voiceapi/voiceapi/service"
)

// heldModel answers each request once release is closed, telling asked when asked;
// with tool set, its answers call a tool the agent lacks (a step more: a renewal of the
// lease, the engine answering the model "no tool named").
type heldModel struct {
	asked, release chan struct{}
	tool           bool
}

func (heldModel) Provider() string { return data.LLMInternal }

func (m heldModel) Complete(ctx context.Context, _ llm.Request, _ func(string) error) (*llm.Reply, error) {
	m.asked <- struct{}{}
	select {
	case <-m.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if m.tool {
		return &llm.Reply{ToolCalls: []llm.ToolCall{{ID: "call_1", Name: "launch_rocket", Arguments: "{}"}}, StopReason: "tool_calls"}, nil
	}
	return &llm.Reply{Text: "Noted.", StopReason: "stop"}, nil
}

// A message takes its conversation's lease in one transaction, asks the model outside
// any, and stores the turn in a second: an agent deleted while the model answered must
// get no turn (404, as a message sent after the delete gets), where the deleted agent's
// answer was stored and answered 200. The lease is freed: the conversation can still be
// ended (its call keeps what was said before the delete). The model holds the answer
// until the delete committed, forcing the interleaving.
func TestMessageDoesNotOutliveItsAgent(t *testing.T) {
	m := heldModel{asked: make(chan struct{}, 1), release: make(chan struct{})}
	w := newRedactionWorld(t)
	w.svc.Conversations.Configure(service.ConversationOptions{Models: func(data.LLMConfig) (llm.Client, error) { return m, nil }})
	conv, err := w.svc.Conversations.StartConversation(w.ctxA, w.agentA, data.ConversationStart{Version: data.ConversationVersion{Draft: true}}, data.ConversationObserver{})
	if err != nil {
		t.Fatal(err)
	}
	sent := make(chan error, 1)
	go func() {
		_, err := w.svc.Conversations.SendMessage(w.ctxA, conv.ID, data.ConversationMessage{Content: "hello"}, data.ConversationObserver{})
		sent <- err
	}()
	<-m.asked
	if err := w.svc.Agents.DeleteAgent(w.ctxA, w.agentA); err != nil {
		t.Fatal(err)
	}
	close(m.release)
	if err := <-sent; data.ErrorCode(err) != data.ENOTFOUND {
		t.Errorf("a message answered while its agent was deleted = %v, want not found", err)
	}
	after, err := w.svc.Conversations.Conversation(w.ctxA, conv.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(after.Messages) != len(conv.Messages) || after.AgentTurns != 0 {
		t.Errorf("the conversation after the refused turn holds %d items and %d agent turns, want %d and 0: %+v",
			len(after.Messages), after.AgentTurns, len(conv.Messages), after.Messages)
	}
	call, err := w.svc.Conversations.EndConversation(w.ctxA, conv.ID)
	if err != nil {
		t.Fatalf("ending the conversation after the refused turn (its lease must be free): %v", err)
	}
	if len(call.Transcript) != len(conv.Messages) {
		t.Errorf("the call's transcript holds %d items, want the %d said before the delete", len(call.Transcript), len(conv.Messages))
	}
}

// The same race with the agent's workspace deleted: the conversation went with it, and
// the message is 404 (not 409 "the answer outlasted the conversation's lease", which asks
// to send it again), whether the delete lands before the turn's write or before a
// renewal of the lease (a reply that calls a tool).
func TestMessageDoesNotOutliveItsWorkspace(t *testing.T) {
	for _, tool := range []bool{false, true} {
		m := heldModel{asked: make(chan struct{}, 8), release: make(chan struct{}), tool: tool}
		w := newRedactionWorld(t)
		w.svc.Conversations.Configure(service.ConversationOptions{Models: func(data.LLMConfig) (llm.Client, error) { return m, nil }})
		ws, err := w.svc.Workspaces.CreateWorkspace(w.ctxA, data.WorkspaceCreate{Name: "Staging"})
		if err != nil {
			t.Fatal(err)
		}
		p := data.PrincipalFrom(w.ctxA)
		ctx := testkit.AsRole(&data.User{ID: p.UserID}, ws.ID, data.RoleOwner)
		a, err := w.svc.Agents.CreateAgent(ctx, data.AgentCreate{Name: data.Some("Staging agent")})
		if err != nil {
			t.Fatal(err)
		}
		conv, err := w.svc.Conversations.StartConversation(ctx, a.ID, data.ConversationStart{Version: data.ConversationVersion{Draft: true}}, data.ConversationObserver{})
		if err != nil {
			t.Fatal(err)
		}
		sent := make(chan error, 1)
		go func() {
			_, err := w.svc.Conversations.SendMessage(ctx, conv.ID, data.ConversationMessage{Content: "hello"}, data.ConversationObserver{})
			sent <- err
		}()
		<-m.asked
		if err := w.svc.Workspaces.DeleteWorkspace(ctx, ws.ID); err != nil {
			t.Fatal(err)
		}
		close(m.release)
		if err := <-sent; data.ErrorCode(err) != data.ENOTFOUND {
			t.Errorf("a message (tool call: %v) answered while its workspace was deleted = %v, want not found", tool, err)
		}
	}
}
