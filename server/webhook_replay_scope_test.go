package server_test

import (
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
)

// A replay re-queues only the events its caller may read. A webhook.test event goes to
// the webhook it names whatever its types, so a replay of an agent.* webhook by a key
// that may carry agent.* but not read security events (no audit:read) re-queued the test
// events sent to it, and counted them in its answer: how many tests were sent, told to a
// key that may not read them (sending one needs audit:read). It now passes them over; the
// owner's replay still re-sends them. Events from before the webhook's creation are
// replayed (docs/webhooks.md, "Retry and replay").
func TestWebhookReplaySendsOnlyWhatTheCallerReads(t *testing.T) {
	s := testkit.NewServer(t, nil)
	testkit.Expect(t, s.Do("POST", "/api/v1/agents", s.Owner.Token, map[string]any{"name": "Before"}), 201)
	hook := s.Do("POST", "/api/v1/webhooks", s.Owner.Token, map[string]any{"url": "https://hooks.example.com/a", "events": []string{data.EventAgentCreated}})
	testkit.Expect(t, hook, 201)
	id := hook.Data()["id"].(string)
	testkit.Expect(t, s.Do("POST", "/api/v1/webhooks/"+id+"/test", s.Owner.Token, nil), 202)
	testkit.Expect(t, s.Do("POST", "/api/v1/agents", s.Owner.Token, map[string]any{"name": "After"}), 201)
	replay := map[string]any{"from": "2020-01-01T00:00:00Z", "to": "2100-01-01T00:00:00Z"}
	agentsOnly := ownerKey(t, s, map[string]any{"scopes": []string{data.ScopeWebhooksWrite, "agents:read"}})
	r := s.Do("POST", "/api/v1/webhooks/"+id+"/replay", agentsOnly, replay)
	testkit.Expect(t, r, 202)
	if r.Data()["count"] != 2.0 {
		t.Errorf("the agents key's replay queued %v events, want the 2 agent.created (one from before the webhook), not the test event: %s", r.Data()["count"], r.Body)
	}
	r = s.Do("POST", "/api/v1/webhooks/"+id+"/replay", s.Owner.Token, replay)
	testkit.Expect(t, r, 202)
	if r.Data()["count"] != 3.0 {
		t.Errorf("the owner's replay queued %v events, want the 2 agent.created and the test event: %s", r.Data()["count"], r.Body)
	}
}
