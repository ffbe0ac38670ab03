package service_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/llm"
	"github.com/voiceapi/voiceapi/service"
	"github.com/voiceapi/voiceapi/strictjson"
)

// openingModel answers a conversation's dynamic opening once release is closed, telling
// opening when it is asked.
type openingModel struct{ opening, release chan struct{} }

func (openingModel) Provider() string { return data.LLMInternal }

func (m openingModel) Complete(ctx context.Context, _ llm.Request, _ func(string) error) (*llm.Reply, error) {
	m.opening <- struct{}{}
	select {
	case <-m.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return &llm.Reply{Text: "Hello, how can I help?", StopReason: "stop"}, nil
}

// openingWorld is a redaction world whose agent A opens its conversations with a dynamic
// welcome, asked of m: a start waits in its opening until the test releases m.
func openingWorld(t *testing.T) (*redactionWorld, openingModel) {
	t.Helper()
	m := openingModel{opening: make(chan struct{}), release: make(chan struct{})}
	w := newRedactionWorld(t)
	w.svc.Conversations.Configure(service.ConversationOptions{
		Models: func(data.LLMConfig) (llm.Client, error) { return m, nil },
	})
	body, _ := json.Marshal(map[string]any{"prompt_config": map[string]any{"first_speaker": "ai", "welcome_message_type": "dynamic"}})
	var up data.AgentUpdate
	if err := strictjson.Decode(body, &up); err != nil {
		t.Fatal(err)
	}
	if _, err := w.svc.Agents.UpdateAgent(w.ctxA, w.agentA, up); err != nil {
		t.Fatal(err)
	}
	return w, m
}

// startDuringOpening starts a conversation with w's agent A and returns once its opening
// is being asked for; the start's outcome arrives on the channel after m is released.
func startDuringOpening(t *testing.T, w *redactionWorld, m openingModel) <-chan error {
	t.Helper()
	started := make(chan error, 1)
	go func() {
		_, err := w.svc.Conversations.StartConversation(w.ctxA, w.agentA, data.ConversationStart{Version: data.ConversationVersion{Draft: true}}, data.ConversationObserver{})
		started <- err
	}()
	select {
	case <-m.opening:
	case err := <-started:
		t.Fatalf("the start ended before its opening was asked for: %v", err)
	}
	return started
}

// activeConversations lists every active conversation stored.
func activeConversations(t *testing.T, w *redactionWorld) []string {
	t.Helper()
	var active []string
	err := w.store.View(context.Background(), func(tx service.Tx) (err error) {
		active, err = tx.IdleConversations(time.Now().AddDate(1, 0, 0), 10) // every active one
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return active
}

// A conversation's start checks its agent in one transaction, asks the model for the
// opening outside any, and stores the conversation in a second: an agent deleted while
// the opening was asked for gets no conversation (404), where one was stored for an
// agent that no longer exists. The model holds the opening until the delete committed,
// forcing the interleaving.
func TestConversationStartDoesNotOutliveItsAgent(t *testing.T) {
	w, m := openingWorld(t)
	started := startDuringOpening(t, w, m)
	if err := w.svc.Agents.DeleteAgent(w.ctxA, w.agentA); err != nil {
		t.Fatal(err)
	}
	close(m.release)
	if err := <-started; data.ErrorCode(err) != data.ENOTFOUND {
		t.Errorf("starting a conversation whose agent was deleted meanwhile = %v, want not found", err)
	}
	if active := activeConversations(t, w); len(active) != 0 {
		t.Errorf("conversations stored for the deleted agent: %v", active)
	}
}

// A start checks the month's call minutes before its opening, to spare a model call, and
// again in the transaction that stores the conversation, as a call's register does: a
// call that used up the minutes while the opening was asked for leaves the start refused
// (403 quota_exceeded), where the conversation was stored past the limit. The model holds
// the opening until that call committed, forcing the interleaving.
func TestConversationStartRechecksCallMinutes(t *testing.T) {
	w, m := openingWorld(t)
	if _, err := w.svc.Subscriptions.SetSubscription(context.Background(), w.wsA, data.SubscriptionSet{Limits: map[string]int64{data.LimitCallMinutes: 2}}); err != nil {
		t.Fatal(err)
	}
	started := startDuringOpening(t, w, m)
	// 61 s count as two started minutes: the limit is used up.
	if _, err := w.svc.Calls.RegisterCall(w.ctxA, data.CallCreate{AgentID: w.agentA, Direction: data.DirectionWeb, Status: ptr(data.CallEnded), DurationMS: ptr(int64(61_000))}); err != nil {
		t.Fatal(err)
	}
	close(m.release)
	if err := <-started; data.ErrorCode(err) != data.EQUOTA {
		t.Errorf("starting a conversation whose minutes were used up during its opening = %v, want quota_exceeded", err)
	}
	if active := activeConversations(t, w); len(active) != 0 {
		t.Errorf("conversations stored past the minutes limit: %v", active)
	}
}
