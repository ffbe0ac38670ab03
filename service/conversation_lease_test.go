package service_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/llm"
	"github.com/voiceapi/voiceapi/service"
	"github.com/voiceapi/voiceapi/strictjson"
)

// The lease span these tests expect: --llm-timeout 20s, the 30 s cap of a custom
// function's call and the 15 s margin.
const (
	leaseTestModelTimeout = 20 * time.Second
	leaseTestSpan         = leaseTestModelTimeout + 30*time.Second + 15*time.Second
)

// leaseModel answers "hold" once hold is closed, "lookup" with a call of the lookup
// function and, once the function answered, with text after onSecondStep; anything else
// with "ok".
type leaseModel struct {
	held, hold   chan struct{} // held is told when "hold" is being answered
	onSecondStep func()
}

func (leaseModel) Provider() string { return data.LLMInternal }

func (m leaseModel) Complete(ctx context.Context, req llm.Request, _ func(string) error) (*llm.Reply, error) {
	last := req.Messages[len(req.Messages)-1]
	switch {
	case last.Role == llm.RoleUser && last.Content == "hold":
		m.held <- struct{}{}
		select {
		case <-m.hold:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	case last.Role == llm.RoleUser && last.Content == "lookup":
		return &llm.Reply{ToolCalls: []llm.ToolCall{{ID: "c1", Name: "lookup", Arguments: "{}"}}, StopReason: "tool_calls"}, nil
	case last.Role != llm.RoleUser:
		m.onSecondStep()
		return &llm.Reply{Text: "found it", StopReason: "stop"}, nil
	}
	return &llm.Reply{Text: "ok", StopReason: "stop"}, nil
}

// functionFunc is a custom function's server in the process.
type functionFunc func(*http.Request) (*http.Response, error)

func (f functionFunc) Do(r *http.Request) (*http.Response, error) { return f(r) }

// leaseWorld is a redactionWorld on a clock the test moves, whose agent A has a lookup
// custom function (answered by fn) and whose conversations are answered by model with
// --llm-timeout leaseTestModelTimeout.
func leaseWorld(t *testing.T, model leaseModel, fn functionFunc) (*redactionWorld, *testClock) {
	clock := &testClock{}
	w := newRedactionWorldWith(t, func(o *service.Options) { o.Now = clock.now })
	w.svc.Conversations.Configure(service.ConversationOptions{
		Models:       func(data.LLMConfig) (llm.Client, error) { return model, nil },
		Functions:    fn,
		ModelTimeout: leaseTestModelTimeout,
	})
	body, _ := json.Marshal(map[string]any{"llm_config": map[string]any{"tools": []map[string]any{{
		"name": "lookup", "type": data.ToolCustomFunction, "description": "Looks an order up.",
		"api_endpoint": "https://functions.example.com/lookup", "http_method": "POST",
	}}}})
	var up data.AgentUpdate
	if err := strictjson.Decode(body, &up); err != nil {
		t.Fatal(err)
	}
	if _, err := w.svc.Agents.UpdateAgent(w.ctxA, w.agentA, up); err != nil {
		t.Fatal(err)
	}
	return w, clock
}

func (w *redactionWorld) send(id, text string) error {
	_, err := w.svc.Conversations.SendMessage(w.ctxA, id, data.ConversationMessage{Content: text}, data.ConversationObserver{})
	return err
}

func isConflict(err error) bool {
	var de *data.Error
	return errors.As(err, &de) && de.Code == data.ECONFLICT
}

// A replica that dies mid-answer leaves its lease to lapse: the lease is derived from
// --llm-timeout (20 s here), the custom functions' 30 s cap and a 15 s margin, so the
// conversation takes another message 65 s later, not 5 minutes later as it once did. Just
// before, a message is refused (409: one is being answered). The stuck answer, when it
// comes, is dropped (409), since its lease was taken over.
func TestConversationLeaseFollowsTheModelTimeout(t *testing.T) {
	held, hold := make(chan struct{}), make(chan struct{})
	w, clock := leaseWorld(t, leaseModel{held: held, hold: hold}, nil)
	id := w.startConversation(t)
	stuck := make(chan error, 1)
	go func() { stuck <- w.send(id, "hold") }()
	select {
	case <-held:
	case err := <-stuck:
		t.Fatalf("the held message ended: %v", err)
	}
	clock.advance(leaseTestSpan - time.Second)
	if err := w.send(id, "hello"); !isConflict(err) {
		t.Fatalf("a message 1 s before the lease's end = %v, want a conflict (one is being answered)", err)
	}
	clock.advance(2 * time.Second)
	if err := w.send(id, "hello"); err != nil {
		t.Fatalf("a message 1 s after the lease's end (%s) = %v, want it answered", leaseTestSpan, err)
	}
	close(hold)
	if err := <-stuck; !isConflict(err) || !strings.Contains(err.Error(), "lease") {
		t.Errorf("the stuck answer = %v, want dropped with a conflict naming the lease", err)
	}
	c, err := w.svc.Conversations.Conversation(w.ctxA, id)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range c.Messages {
		if m.Content == "hold" {
			t.Errorf("messages = %+v, want the stuck turn left out", c.Messages)
		}
	}
	if n := len(c.Messages); n < 2 || c.Messages[n-2].Content != "hello" || c.Messages[n-1].Content != "ok" {
		t.Errorf("messages = %+v, want the answered turn last", c.Messages)
	}
}

// A live answer renews its lease before each step: a model call, a custom function that
// takes 60 s of the clock and a second model call 60 s later hold the conversation past
// the first lease's end (another message meanwhile gets 409), and the answer is stored.
// Without the renewal the other message took the lapsed lease and the answer was dropped.
func TestConversationLeaseRenewedByEachStep(t *testing.T) {
	step := leaseTestSpan - 5*time.Second
	var w *redactionWorld
	var clock *testClock
	var id string
	var during error
	model := leaseModel{onSecondStep: func() {
		clock.advance(step)
		during = w.send(id, "hello")
	}}
	fn := functionFunc(func(r *http.Request) (*http.Response, error) {
		clock.advance(step)
		return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}},
			Body: io.NopCloser(strings.NewReader(`{"status":"shipped"}`)), Request: r}, nil
	})
	w, clock = leaseWorld(t, model, fn)
	id = w.startConversation(t)
	if err := w.send(id, "lookup"); err != nil {
		t.Fatalf("the answer taking %s in three steps = %v, want stored", 2*step, err)
	}
	if !isConflict(during) {
		t.Errorf("a message during the answer's last step = %v, want a conflict (one is being answered)", during)
	}
	c, err := w.svc.Conversations.Conversation(w.ctxA, id)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(c.Messages); n == 0 || c.Messages[n-1].Content != "found it" {
		t.Errorf("messages = %+v, want the looked-up answer last", c.Messages)
	}
}

// A replica that dies mid-answer after a custom function's call stored nothing; the
// message answered again once its lease lapsed calls the function again, with the same
// Idempotency-Key, so a receiver that deduplicates on it carries the call out once. The
// next message's call has a key of its own. The first answer is held at its second model
// call (after the function answered) and never ends, as a killed replica's.
func TestConversationReanswerAfterLeaseSendsTheSameFunctionKey(t *testing.T) {
	held, hold := make(chan struct{}), make(chan struct{})
	var steps atomic.Int32
	model := leaseModel{onSecondStep: func() {
		if steps.Add(1) == 1 {
			held <- struct{}{}
			<-hold
		}
	}}
	var mu sync.Mutex
	var keys []string
	fn := functionFunc(func(r *http.Request) (*http.Response, error) {
		mu.Lock()
		keys = append(keys, r.Header.Get("Idempotency-Key"))
		mu.Unlock()
		return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader(`{"booked":true}`)), Request: r}, nil
	})
	w, clock := leaseWorld(t, model, fn)
	id := w.startConversation(t)
	stuck := make(chan error, 1)
	go func() { stuck <- w.send(id, "lookup") }()
	select {
	case <-held:
	case err := <-stuck:
		t.Fatalf("the held answer ended: %v", err)
	}
	clock.advance(leaseTestSpan + time.Second)
	if err := w.send(id, "lookup"); err != nil {
		t.Fatalf("the message answered again after the lease lapsed = %v", err)
	}
	close(hold)
	if err := <-stuck; !isConflict(err) {
		t.Errorf("the held answer = %v, want dropped", err)
	}
	if err := w.send(id, "lookup"); err != nil {
		t.Fatalf("the next message = %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(keys) != 3 || !strings.HasPrefix(keys[0], "voiceapi_fn_") || keys[1] != keys[0] || keys[2] == keys[0] {
		t.Errorf("keys the function received = %q: want the first answer's and the re-answer's the same, the next message's another", keys)
	}
}
