package server_test

import (
	"slices"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
)

// eventTypesOf reads GET /webhooks/event-types for token.
func eventTypesOf(t *testing.T, s *testkit.Server, token string) (types, withheld []string) {
	t.Helper()
	r := s.Do("GET", "/api/v1/webhooks/event-types", token, nil)
	testkit.Expect(t, r, 200)
	d := r.Data()
	for _, v := range d["types"].([]any) {
		types = append(types, v.(string))
	}
	for _, v := range d["withheld"].([]any) {
		withheld = append(withheld, v.(string))
	}
	return types, withheld
}

// TestWebhookEventTypesAreWhatACreateAccepts: the list is the rule a create applies. An
// owner is offered every type and "*"; a key limited to the agents module and webhooks
// is offered the agents' types, and every type withheld from it, job.failed and the
// security events among them, is refused by a create (403, nothing stored) while every
// type offered is accepted.
func TestWebhookEventTypesAreWhatACreateAccepts(t *testing.T) {
	s := testkit.NewServer(t, nil)
	types, withheld := eventTypesOf(t, s, s.Owner.Token)
	if !slices.Equal(types, data.EventTypes) || len(withheld) != 0 {
		t.Fatalf("the owner is offered %d of %d types, withheld %v", len(types), len(data.EventTypes), withheld)
	}
	testkit.Expect(t, s.Do("POST", "/api/v1/webhooks", s.Owner.Token, map[string]any{"url": "https://example.com/all", "events": []string{"*"}}), 201)

	key := keyWithScopes(t, s, "agents:read", data.ScopeWebhooksRead, data.ScopeWebhooksWrite)
	types, withheld = eventTypesOf(t, s, key)
	if len(types)+len(withheld) != len(data.EventTypes) {
		t.Fatalf("offered %d and withheld %d of %d types", len(types), len(withheld), len(data.EventTypes))
	}
	for _, want := range []string{data.EventAgentCreated, data.EventTestRunCompleted} {
		if !slices.Contains(types, want) {
			t.Errorf("%s not offered to a key that reads agents: %v", want, types)
		}
	}
	for _, want := range []string{data.EventJobFailed, data.EventCallEnded, data.EventAPIKeyCreated, data.EventKnowledgeBaseCreated} {
		if !slices.Contains(withheld, want) {
			t.Errorf("%s not withheld from a key of the agents module alone: %v", want, withheld)
		}
	}
	before := len(s.Do("GET", "/api/v1/webhooks", s.Owner.Token, nil).List())
	for _, typ := range withheld {
		r := s.Do("POST", "/api/v1/webhooks", key, map[string]any{"url": "https://example.com/w", "events": []string{typ}})
		if r.Status != 403 {
			t.Errorf("a create carrying withheld %s: %d %s", typ, r.Status, r.Body)
		}
	}
	if r := s.Do("POST", "/api/v1/webhooks", key, map[string]any{"url": "https://example.com/w", "events": []string{"*"}}); r.Status != 403 {
		t.Errorf(`a create carrying "*" with types withheld: %d`, r.Status)
	}
	if after := len(s.Do("GET", "/api/v1/webhooks", s.Owner.Token, nil).List()); after != before {
		t.Fatalf("refused creates stored webhooks: %d, then %d", before, after)
	}
	r := s.Do("POST", "/api/v1/webhooks", key, map[string]any{"url": "https://example.com/w", "events": types})
	testkit.Expect(t, r, 201)

	// Not a webhook id: the route is not shadowed by /webhooks/{webhook_id}, and it keeps
	// the webhooks' gate (a developer manages no webhooks).
	dev := s.Do("POST", "/api/v1/api-keys", s.Owner.Token, map[string]any{"name": "read only", "scopes": []string{"agents:read"}})
	testkit.Expect(t, dev, 201)
	if r := s.Do("GET", "/api/v1/webhooks/event-types", dev.JSON()["token"].(string), nil); r.Status != 403 {
		t.Errorf("a key without the webhooks scope: %d", r.Status)
	}
}
