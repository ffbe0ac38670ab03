package client_test

import (
	"fmt"
	"reflect"
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
	// Under an Idempotency-Key a message is answered once, whole or streamed: the repeat
	// gets the first turn back, and the model is not asked again.
	asked := len(tr.s.model.Requests())
	for _, streamed := range []bool{false, true} {
		key := client.WithIdempotencyKey(fmt.Sprint("message-streamed-", streamed))
		var turns [2]*data.ConversationTurn
		for i := range turns {
			if streamed {
				turns[i], err = c.Conversations.SendStream(ctx, conv.ID, "again", data.ConversationObserver{}, key)
			} else {
				turns[i], err = c.Conversations.Send(ctx, conv.ID, "again", key)
			}
			check("a message under a key", err)
		}
		if !reflect.DeepEqual(turns[0], turns[1]) || len(turns[0].Items) != 2 {
			t.Errorf("streamed %v: the repeat under the key answered %+v, the first %+v", streamed, turns[1], turns[0])
		}
	}
	if n := len(tr.s.model.Requests()) - asked; n != 2 {
		t.Errorf("two messages sent twice each under their keys asked the model %d times, want 2", n)
	}
	got, err := c.Conversations.Get(ctx, conv.ID)
	check("conversation show", err)
	if len(got.Messages) != 9 {
		t.Errorf("messages = %d", len(got.Messages))
	}
	// The list: the conversation, active, without its messages; by agent and status.
	listed, page, err := c.Conversations.List(ctx, data.ConversationFilter{AgentID: agent.ID, Status: data.ConversationActive}, data.PageRequest{PerPage: 1})
	check("conversation list", err)
	if len(listed) != 1 || listed[0].ID != conv.ID || listed[0].AgentTurns != got.AgentTurns || page.PerPage != 1 {
		t.Errorf("listed %+v, page %+v", listed, page)
	}
	if ended, err := client.Collect(c.Conversations.All(ctx, data.ConversationFilter{AgentID: agent.ID, Status: data.ConversationEnded})); err != nil || len(ended) != 0 {
		t.Errorf("ended ones before the end: %v, %v", ended, err)
	}
	tr.s.model.Queue(llmtest.Fail(500, "down"))
	_, err = c.Conversations.SendStream(ctx, conv.ID, "four", data.ConversationObserver{})
	if e := mustErr(t, err, 502); e.Code != data.EPROVIDER {
		t.Errorf("a failed provider: %+v", e)
	}
	// A provider's failure under a key is not sent again by the client: it is the model's
	// answer, and each attempt would be another model call (a timeout, another full wait).
	asked = len(tr.s.model.Requests())
	tr.s.model.Queue(llmtest.Fail(500, "down"))
	_, err = c.Conversations.Send(ctx, conv.ID, "five", client.WithIdempotencyKey("failing"))
	mustErr(t, err, 502)
	if n := len(tr.s.model.Requests()) - asked; n != 1 {
		t.Errorf("a provider's failure under a key asked the model %d times, want once", n)
	}
	call, err := c.Conversations.End(ctx, conv.ID)
	check("conversation end", err)
	if call.Direction != data.DirectionWeb || *call.DisconnectionReason != data.EndUserEnded || len(call.Transcript) != 9 {
		t.Errorf("call = %+v", call)
	}
	ended, err := client.Collect(c.Conversations.All(ctx, data.ConversationFilter{Status: data.ConversationEnded}))
	check("ended conversations", err)
	if len(ended) != 1 || ended[0].ID != conv.ID || ended[0].CallID == nil || *ended[0].CallID != call.ID {
		t.Errorf("ended conversations = %+v", ended)
	}
}
