package client_test

import (
	"strings"

	"github.com/voiceapi/voiceapi/client"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/llmtest"
)

// conversations talks to an agent pointed at the model stand-in: start, a whole reply, a
// streamed one, the conversation read back, the end and its call.
func (tr *tour) conversations() {
	t, c, ctx, check := tr.t, tr.c, tr.ctx, tr.check
	cfg := tr.s.model.LLMConfig()
	agent, _, err := c.Agents.Create(ctx, client.AgentInput{Name: ptr("Talker"), LLMConfig: &cfg})
	check("agent for conversations", err)
	tr.s.model.Respond(func(r llmtest.Request) llmtest.Reply { return llmtest.Text("You said " + r.LastUserText()) })
	conv, err := c.Conversations.Start(ctx, agent.ID, data.ConversationStart{Version: data.ConversationVersion{Draft: true}})
	check("conversation start", err)
	if len(conv.Messages) != 1 || conv.Status != data.ConversationActive || conv.AgentVersion != nil {
		t.Fatalf("conversation = %+v", conv)
	}
	turn, err := c.Conversations.Send(ctx, conv.ID, "one")
	check("conversation message", err)
	if len(turn.Items) != 2 || turn.Items[1].Content != "You said one" {
		t.Errorf("turn = %+v", turn)
	}
	var text strings.Builder
	var roles []string
	turn, err = c.Conversations.SendStream(ctx, conv.ID, "two three", data.ConversationObserver{
		Text: func(d string) error { text.WriteString(d); return nil },
		Item: func(it *data.ConversationItem) error { roles = append(roles, it.Role); return nil },
	})
	check("streamed message", err)
	if text.String() != "You said two three" || strings.Join(roles, ",") != "user,agent" || turn.Status != data.ConversationActive {
		t.Errorf("streamed %q, items %v, turn %+v", text.String(), roles, turn)
	}
	got, err := c.Conversations.Get(ctx, conv.ID)
	check("conversation show", err)
	if len(got.Messages) != 5 {
		t.Errorf("messages = %d", len(got.Messages))
	}
	tr.s.model.Queue(llmtest.Fail(500, "down"))
	_, err = c.Conversations.SendStream(ctx, conv.ID, "four", data.ConversationObserver{})
	if e := mustErr(t, err, 502); e.Code != data.EPROVIDER {
		t.Errorf("a failed provider: %+v", e)
	}
	call, err := c.Conversations.End(ctx, conv.ID)
	check("conversation end", err)
	if call.Direction != data.DirectionWeb || *call.DisconnectionReason != data.EndUserEnded || len(call.Transcript) != 5 {
		t.Errorf("call = %+v", call)
	}
}
