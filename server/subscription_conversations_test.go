package server_test

import (
	"context"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/cli"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
)

// TestSubscriptionOpenConversations: GET /subscription shows open_conversations as the
// bound in force, the server's --max-open-conversations (3 here) while the plan sets
// none and the plan's limit once it does, and as usage the open conversations a start
// counts; a start past the plan's limit is 409 naming it.
func TestSubscriptionOpenConversations(t *testing.T) {
	e := newConvEnv(t, nil, func(s *cli.LLMSettings) { s.MaxOpenConversations = 3 })
	agent := e.createAgent(t, map[string]any{"name": "Desk"})
	show := func() (limit, usage any) {
		t.Helper()
		r := e.Do("GET", "/api/v1/subscription", e.tok, nil)
		testkit.Expect(t, r, 200)
		return r.Data()["limits"].(map[string]any)[data.LimitOpenConversations], r.Data()["usage"].(map[string]any)[data.LimitOpenConversations]
	}
	set := func(v int64) {
		t.Helper()
		if _, err := e.Svc.Subscriptions.SetSubscription(context.Background(), e.Owner.WorkspaceID,
			data.SubscriptionSet{Limits: map[string]int64{data.LimitOpenConversations: v}}); err != nil {
			t.Fatal(err)
		}
	}
	if l, u := show(); l != float64(3) || u != float64(0) {
		t.Errorf("no plan limit: open_conversations limit %v, usage %v; want the server's 3 and 0", l, u)
	}
	first := e.start(t, agent, map[string]any{"version": "draft"}, 201).Data()["id"].(string)
	e.start(t, agent, map[string]any{"version": "draft"}, 201)
	set(2)
	if l, u := show(); l != float64(2) || u != float64(2) {
		t.Errorf("plan limit 2, two open: limit %v, usage %v", l, u)
	}
	r := e.start(t, agent, map[string]any{"version": "draft"}, 409)
	if msg, _ := r.JSON()["message"].(string); !strings.Contains(msg, "has 2 open conversations") || !strings.Contains(msg, "open_conversations limit of 2") {
		t.Errorf("a start past the plan's limit: %s", r.Body)
	}
	testkit.Expect(t, e.Do("POST", "/api/v1/conversations/"+first+"/end", e.tok, nil), 200)
	if _, u := show(); u != float64(1) {
		t.Errorf("usage once one ended = %v, want 1", u)
	}
	// A limit of one is told in the singular.
	set(1)
	r = e.start(t, agent, map[string]any{"version": "draft"}, 409)
	if msg, _ := r.JSON()["message"].(string); !strings.Contains(msg, "has 1 open conversation, the most") {
		t.Errorf("a start past a limit of one: %s", r.Body)
	}
	set(-1)
	if l, _ := show(); l != float64(3) {
		t.Errorf("plan limit removed: limit %v, want the server's 3", l)
	}
}

// TestSubscriptionOpenConversationsUnbounded: on a server run with
// --max-open-conversations 0 and a plan without the limit, nothing bounds a start, so
// GET /subscription shows the limit null (unlimited, as every limit a plan leaves unset)
// and still counts the open conversations as usage; a plan's limit shows again at once.
func TestSubscriptionOpenConversationsUnbounded(t *testing.T) {
	e := newConvEnv(t, nil, func(s *cli.LLMSettings) { s.MaxOpenConversations = 0 })
	agent := e.createAgent(t, map[string]any{"name": "Desk"})
	for range 2 {
		e.start(t, agent, map[string]any{"version": "draft"}, 201)
	}
	r := e.Do("GET", "/api/v1/subscription", e.tok, nil)
	testkit.Expect(t, r, 200)
	limits, usage := r.Data()["limits"].(map[string]any), r.Data()["usage"].(map[string]any)
	if l, ok := limits[data.LimitOpenConversations]; !ok || l != nil || usage[data.LimitOpenConversations] != float64(2) {
		t.Errorf("no bound: open_conversations limit %v (present %v), usage %v; want null and 2", l, ok, usage[data.LimitOpenConversations])
	}
	if _, err := e.Svc.Subscriptions.SetSubscription(context.Background(), e.Owner.WorkspaceID,
		data.SubscriptionSet{Limits: map[string]int64{data.LimitOpenConversations: 5}}); err != nil {
		t.Fatal(err)
	}
	r = e.Do("GET", "/api/v1/subscription", e.tok, nil)
	if l := r.Data()["limits"].(map[string]any)[data.LimitOpenConversations]; l != float64(5) {
		t.Errorf("plan limit 5 on an unbounded server: limit %v", l)
	}
}
