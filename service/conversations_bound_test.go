package service_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/llm"
	"github.com/voiceapi/voiceapi/service"
)

// steppedClock is a clock that moves only when the test moves it, so that a bound on time
// is tested at its edge to the millisecond.
type steppedClock struct{ ns atomic.Int64 }

func newSteppedClock() *steppedClock {
	c := &steppedClock{}
	c.ns.Store(time.Now().Truncate(time.Millisecond).UnixNano())
	return c
}

func (c *steppedClock) now() time.Time          { return time.Unix(0, c.ns.Load()).UTC() }
func (c *steppedClock) advance(d time.Duration) { c.ns.Add(int64(d)) }

// boundWorld is a redactionWorld on a fixed clock whose conversations are answered by
// model, each workspace holding at most max open (0: no bound).
func boundWorld(t *testing.T, max int, model llm.Client) (*redactionWorld, *steppedClock) {
	t.Helper()
	clock := newSteppedClock()
	w := newRedactionWorldWith(t, func(o *service.Options) { o.Now = clock.now })
	w.svc.Conversations.Configure(service.ConversationOptions{
		Models:       func(data.LLMConfig) (llm.Client, error) { return model, nil },
		ModelTimeout: leaseTestModelTimeout,
		MaxOpen:      max,
	})
	return w, clock
}

// tryStartA starts a conversation with agent A's draft.
func (w *redactionWorld) tryStartA() (*data.Conversation, error) {
	return w.svc.Conversations.StartConversation(w.ctxA, w.agentA, data.ConversationStart{Version: data.ConversationVersion{Draft: true}}, data.ConversationObserver{})
}

// checkOpenRefused checks err is the bound's refusal naming it, and that nothing was
// stored: the active conversations are still want.
func checkOpenRefused(t *testing.T, w *redactionWorld, err error, max int, want []string) {
	t.Helper()
	if data.ErrorCode(err) != data.ECONFLICT || !strings.Contains(data.ErrorMessage(err), openConversationsCount(max)) ||
		!strings.Contains(data.ErrorMessage(err), "--max-open-conversations") {
		t.Errorf("a start past the bound: %v, want %s naming the bound (%d) and its flag", err, data.ECONFLICT, max)
	}
	if got := activeConversations(t, w); len(got) != len(want) {
		t.Errorf("active conversations after the refusal: %v, want %v", got, want)
	}
}

// openConversationsCount is how a refusal counts a bound of n: "has 1 open conversation,",
// "has 2 open conversations,".
func openConversationsCount(n int) string {
	if n == 1 {
		return "has 1 open conversation,"
	}
	return fmt.Sprintf("has %d open conversations,", n)
}

// TestOpenConversationsBound: a workspace holds at most MaxOpen open conversations: the
// start that reaches the bound is taken, the one past it refused (409 naming it, nothing
// stored); another workspace is not held back, ending one frees a slot, and 0 is no
// bound.
func TestOpenConversationsBound(t *testing.T) {
	for _, c := range []struct {
		name      string
		max, open int
		refused   bool
	}{
		{"one: the first", 1, 0, false},
		{"one: past it", 1, 1, true},
		{"three: reaching it", 3, 2, false},
		{"three: past it", 3, 3, true},
		{"off", 0, 5, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			w, _ := boundWorld(t, c.max, hangUpModel{})
			var open []string
			for range c.open {
				conv, err := w.tryStartA()
				if err != nil {
					t.Fatal(err)
				}
				open = append(open, conv.ID)
			}
			_, err := w.tryStartA()
			if !c.refused {
				if err != nil {
					t.Fatalf("start %d of at most %d: %v", c.open+1, c.max, err)
				}
				return
			}
			checkOpenRefused(t, w, err, c.max, open)
			if _, err := w.svc.Conversations.StartConversation(w.ctxB, w.agentB, data.ConversationStart{Version: data.ConversationVersion{Draft: true}}, data.ConversationObserver{}); err != nil {
				t.Errorf("another workspace's start: %v", err)
			}
			if _, err := w.svc.Conversations.EndConversation(w.ctxA, open[0]); err != nil {
				t.Fatal(err)
			}
			if _, err := w.tryStartA(); err != nil {
				t.Errorf("a start once one ended: %v", err)
			}
		})
	}
}

// TestOpenConversationsExpiredNotCounted: a conversation nobody wrote to for
// ConversationIdleTimeout holds no slot, before the sweep ends it; one whose message is
// being answered still does, idle or not, until its lease lapses.
func TestOpenConversationsExpiredNotCounted(t *testing.T) {
	model := leaseModel{held: make(chan struct{}), hold: make(chan struct{}), onSecondStep: func() {}}
	w, clock := boundWorld(t, 2, model)
	first, err := w.tryStartA()
	if err != nil {
		t.Fatal(err)
	}
	clock.advance(time.Minute)
	if _, err := w.tryStartA(); err != nil {
		t.Fatal(err)
	}
	// The first is idle a millisecond short of the timeout: it holds its slot.
	clock.advance(data.ConversationIdleTimeout - time.Minute - time.Millisecond)
	_, err = w.tryStartA()
	checkOpenRefused(t, w, err, 2, make([]string, 2))
	// At the timeout it is expired, still active in storage (no sweep ran): not counted.
	clock.advance(time.Millisecond)
	if _, err := w.tryStartA(); err != nil {
		t.Fatalf("a start once the first expired: %v", err)
	}
	if got := activeConversations(t, w); len(got) != 3 || got[0] != first.ID {
		t.Fatalf("active conversations = %v, want the expired one among three", got)
	}
	// Now the second (idle 29 min) and the third (new) hold both slots. A message to the
	// second, answered while the clock passes its idle time: the lease keeps its slot.
	answered := make(chan error, 1)
	second := activeConversations(t, w)[1]
	go func() { answered <- w.send(second, "hold") }()
	<-model.held
	clock.advance(time.Minute) // the second's update is 30 min old; its lease holds 65 s from the message
	_, err = w.tryStartA()
	checkOpenRefused(t, w, err, 2, make([]string, 3))
	// Its lease lapsed (the replica answering it would have died): the slot is free.
	clock.advance(leaseTestSpan)
	if _, err := w.tryStartA(); err != nil {
		t.Errorf("a start once the lease lapsed: %v", err)
	}
	close(model.hold)
	<-answered // lost its lease: refused, nothing stored
}

// TestOpenConversationsRaceForTheLastSlot: two starts that both found a slot free before
// their openings (a model call each, outside any transaction) race for it: the
// transactions that insert count again, so one is stored and the other refused, whether
// the server's bound or the plan's open_conversations limit (below the server's) is the
// bound. With VOICEAPI_TEST_BACKEND=postgres this holds PostgreSQL's workspace lock and
// SERIALIZABLE to it; postgres/conversations_replicas_test.go races two replicas.
func TestOpenConversationsRaceForTheLastSlot(t *testing.T) {
	for _, c := range []struct {
		name      string
		server    int
		planLimit int64 // -1: the plan sets none
	}{
		{"the server's bound", 1, -1},
		{"the plan's limit", 5, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			w, m := openingWorld(t)
			w.svc.Conversations.Configure(service.ConversationOptions{
				Models:  func(data.LLMConfig) (llm.Client, error) { return m, nil },
				MaxOpen: c.server,
			})
			w.setOpenConversationsLimit(t, c.planLimit)
			a, b := startDuringOpening(t, w, m), startDuringOpening(t, w, m)
			close(m.release)
			errs := []error{<-a, <-b}
			won := 0
			for _, err := range errs {
				switch {
				case err == nil:
					won++
				case data.ErrorCode(err) != data.ECONFLICT:
					t.Errorf("the loser: %v, want %s", err, data.ECONFLICT)
				}
			}
			if won != 1 {
				t.Errorf("%d starts won the last slot (%v), want exactly one", won, errs)
			}
			if got := activeConversations(t, w); len(got) != 1 {
				t.Errorf("active conversations = %v, want the winner's alone", got)
			}
		})
	}
}

// TestExpireIdleStopsOnAFencedStore: on a replica whose database a newer voiceapi migrated
// (every write refused, which storage logged once), the idle conversations' pass stops at
// the first refused end and returns the refusal: it neither redacts and tries every other
// idle conversation nor logs a line for each, every pass.
func TestExpireIdleStopsOnAFencedStore(t *testing.T) {
	clock := newSteppedClock()
	var logs strings.Builder
	w := newRedactionWorldWith(t, func(o *service.Options) {
		o.Now = clock.now
		o.Logger = slog.New(slog.NewJSONHandler(&logs, nil))
	})
	w.svc.Conversations.Configure(service.ConversationOptions{
		Models: func(data.LLMConfig) (llm.Client, error) { return hangUpModel{}, nil }, ModelTimeout: leaseTestModelTimeout})
	for range 3 {
		if _, err := w.tryStartA(); err != nil {
			t.Fatal(err)
		}
	}
	clock.advance(data.ConversationIdleTimeout + time.Minute)
	w.store.superseded.Store(true)
	n, err := w.svc.Conversations.ExpireIdle(context.Background(), 100)
	if n != 0 || !errors.Is(err, data.ErrStorageSuperseded) {
		t.Errorf("ExpireIdle on a fenced store: %d ended, %v; want 0 and the refusal", n, err)
	}
	if got := w.store.refused.Load(); got != 1 {
		t.Errorf("%d ends tried on the fenced store, want 1 (the pass stops at the first refusal)", got)
	}
	if strings.Contains(logs.String(), "ending an idle conversation failed") {
		t.Errorf("the refused ends are logged one by one:\n%s", logs.String())
	}
}
