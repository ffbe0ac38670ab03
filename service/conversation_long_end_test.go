package service_test

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

// longConversation starts, in a workspace whose custom rules are as large as a setting
// may be, a conversation of 21 messages of 10,000 characters each holding a card number:
// more text than the rules redact within redact.MaxWork (200,000 bytes at 500
// instructions).
func longConversation(t *testing.T) (*redactionWorld, *testClock, string) {
	t.Helper()
	w, clock := conversationRedactionWorld(t)
	var rules []data.RedactionRule
	for i := range 5 {
		rules = append(rules, data.RedactionRule{Name: fmt.Sprintf("r%d", i), Pattern: fmt.Sprintf("Q{%d}", redact.MaxRulesProgram/5-2)})
	}
	red := data.Redaction{Detectors: []string{redact.Card}, Rules: rules}
	if _, err := w.svc.Workspaces.UpdateWorkspace(w.ctxA, w.wsA, data.WorkspaceUpdate{Privacy: data.Some(data.WorkspacePrivacyPatch{Redaction: data.Some(red)})}); err != nil {
		t.Fatal(err)
	}
	msg := "card 4111 1111 1111 1111 " + strings.Repeat("x", 10_000-25)
	msgs := make([]string, 21)
	for i := range msgs {
		msgs[i] = msg
	}
	return w, clock, w.startConversation(t, msgs...)
}

// checkEndedWithin: the conversation ended, its call stored; the text the rules could
// redact is redacted, the rest withheld, and no card number is kept by either.
func checkEndedWithin(t *testing.T, w *redactionWorld, id string) {
	t.Helper()
	c, err := w.svc.Conversations.Conversation(w.ctxA, id)
	if err != nil {
		t.Fatal(err)
	}
	if c.Status != data.ConversationEnded || c.CallID == nil {
		t.Fatalf("the long conversation is %s, call %v", c.Status, c.CallID)
	}
	call, err := w.svc.Calls.Call(w.ctxA, *c.CallID)
	if err != nil {
		t.Fatal(err)
	}
	turns := userTurns(call)
	if len(turns) != 21 || !strings.HasPrefix(turns[0], "card [card] ") || turns[20] != service.WithheldTooLong {
		t.Fatalf("the call's %d user turns begin %.20q and end %.40q", len(turns), turns[0], turns[len(turns)-1])
	}
	for _, m := range c.Messages {
		if strings.Contains(m.Content, "4111") {
			t.Fatal("the ended conversation keeps a card number")
		}
	}
	for _, it := range call.Transcript {
		if strings.Contains(it.Content, "4111") {
			t.Fatal("the call keeps a card number")
		}
	}
}

// A conversation with more text than the workspace's rules redact within redact.MaxWork
// still ends, asked or idle: its text is redacted as far as the bound allows and the rest
// withheld. Refused (422, as a registered call is), it stayed open with its raw text,
// and the idle sweep, which lists the oldest first, stopped at it on every pass, so no
// conversation after it on the server was ended either.
func TestLongConversationEnds(t *testing.T) {
	t.Run("asked", func(t *testing.T) {
		w, _, id := longConversation(t)
		if _, err := w.svc.Conversations.EndConversation(w.ctxA, id); err != nil {
			t.Fatalf("the end of a long conversation: %v", err)
		}
		checkEndedWithin(t, w, id)
	})
	t.Run("idle, before another", func(t *testing.T) {
		w, clock, long := longConversation(t)
		clock.advance(time.Second)
		short := w.startConversation(t, "hello")
		clock.advance(data.ConversationIdleTimeout + time.Minute)
		n, err := w.svc.Conversations.ExpireIdle(context.Background(), 10)
		if err != nil || n != 2 {
			t.Fatalf("the idle sweep ended %d, %v; want both", n, err)
		}
		checkEndedWithin(t, w, long)
		if conversationCall(t, w, short) == nil {
			t.Error("the conversation idle after the long one was not ended")
		}
	})
}
