package service_test

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
)

// setOpenConversationsLimit sets workspace A's plan's open_conversations limit as the
// operator does (-1: the plan sets none).
func (w *redactionWorld) setOpenConversationsLimit(t *testing.T, v int64) {
	t.Helper()
	if _, err := w.svc.Subscriptions.SetSubscription(context.Background(), w.wsA, data.SubscriptionSet{Limits: map[string]int64{data.LimitOpenConversations: v}}); err != nil {
		t.Fatal(err)
	}
}

// TestOpenConversationsPlanLimit: a plan's open_conversations limit is the bound of its
// workspace, below or above the server's --max-open-conversations (3 here), 0 forbidding
// any start, and with no server bound at all; a plan without it (never set, or set back
// with -1) keeps the server's bound. At the bound the start is taken, past it refused
// (409 naming what bounds it), and nothing is stored; the other workspace keeps the
// server's bound.
func TestOpenConversationsPlanLimit(t *testing.T) {
	const server = 3
	for _, c := range []struct {
		name   string
		server int
		limits []int64 // set in turn; none: the plan was never set
		bound  int
		byPlan bool
	}{
		{"no plan: the server's", server, nil, server, false},
		{"below the server's", server, []int64{1}, 1, true},
		{"above the server's", server, []int64{5}, 5, true},
		{"zero forbids any", server, []int64{0}, 0, true},
		{"-1: the server's again", server, []int64{1, -1}, server, false},
		{"no server bound", 0, []int64{2}, 2, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			w, _ := boundWorld(t, c.server, hangUpModel{})
			for _, v := range c.limits {
				w.setOpenConversationsLimit(t, v)
			}
			var open []string
			for i := range c.bound {
				conv, err := w.tryStartA()
				if err != nil {
					t.Fatalf("start %d of at most %d: %v", i+1, c.bound, err)
				}
				open = append(open, conv.ID)
			}
			_, err := w.tryStartA()
			msg := data.ErrorMessage(err)
			names := "--max-open-conversations"
			if c.byPlan {
				names = fmt.Sprintf("open_conversations limit of %d", c.bound)
			}
			if data.ErrorCode(err) != data.ECONFLICT || !strings.Contains(msg, openConversationsCount(c.bound)) || !strings.Contains(msg, names) {
				t.Errorf("start %d past a bound of %d: %v, want %s naming %q", c.bound+1, c.bound, err, data.ECONFLICT, names)
			}
			if got := activeConversations(t, w); len(got) != len(open) {
				t.Errorf("active conversations after the refusal: %v, want %v", got, open)
			}
			// The subscription shows the bound in force and the count the start made.
			sub, err := w.svc.Subscriptions.Subscription(w.ctxA, w.wsA)
			if err != nil {
				t.Fatal(err)
			}
			if l := sub.Limits[data.LimitOpenConversations]; l == nil || *l != int64(c.bound) || sub.Usage[data.LimitOpenConversations] != int64(c.bound) {
				t.Errorf("subscription: open_conversations limit %v, usage %d; want %d and %d", l, sub.Usage[data.LimitOpenConversations], c.bound, c.bound)
			}
			// Workspace B's plan sets nothing: the server's bound holds it, or nothing does.
			startB := func() error {
				_, err := w.svc.Conversations.StartConversation(w.ctxB, w.agentB, data.ConversationStart{Version: data.ConversationVersion{Draft: true}}, data.ConversationObserver{})
				return err
			}
			takes := cmp.Or(c.server, c.bound+1)
			for i := range takes {
				if err := startB(); err != nil {
					t.Fatalf("workspace B's start %d: %v", i+1, err)
				}
			}
			if err := startB(); c.server > 0 && data.ErrorCode(err) != data.ECONFLICT {
				t.Errorf("workspace B's start %d past the server's bound: %v, want %s", takes+1, err, data.ECONFLICT)
			}
		})
	}
}

// TestOpenConversationsUsageCountsAsTheStart: the subscription's open_conversations
// usage is what the start counts: active conversations, an idle one expired after
// ConversationIdleTimeout not counted though no sweep ended it yet.
func TestOpenConversationsUsageCountsAsTheStart(t *testing.T) {
	w, clock := boundWorld(t, 3, hangUpModel{})
	w.setOpenConversationsLimit(t, 2)
	usage := func() int64 {
		t.Helper()
		sub, err := w.svc.Subscriptions.Subscription(w.ctxA, w.wsA)
		if err != nil {
			t.Fatal(err)
		}
		return sub.Usage[data.LimitOpenConversations]
	}
	for range 2 {
		if _, err := w.tryStartA(); err != nil {
			t.Fatal(err)
		}
	}
	clock.advance(data.ConversationIdleTimeout - time.Millisecond)
	if got := usage(); got != 2 {
		t.Errorf("usage a millisecond before both expire = %d, want 2", got)
	}
	clock.advance(time.Millisecond)
	if got := usage(); got != 0 {
		t.Errorf("usage once both expired = %d, want 0", got)
	}
	if _, err := w.tryStartA(); err != nil {
		t.Fatalf("a start once both expired: %v", err)
	}
	if got, active := usage(), activeConversations(t, w); got != 1 || len(active) != 3 {
		t.Errorf("usage = %d with %d active in storage, want 1 of 3", got, len(active))
	}
}
