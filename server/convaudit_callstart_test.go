package server_test

import (
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
)

// Conventions §20/§21: a key or member limited by agent_ids reaches only those agents,
// "on every channel" (the quality bar); §23: "Inbound: the number's inbound_agent_id;
// outbound: the given agent, or the number's outbound_agent_id". The agent a start is
// routed to through a number is held to the limit as a named one is: 404, nothing
// registered; a claim leases no task of another agent's campaign. The same key limited
// to the routed agent starts the call.
func TestConvAuditCallStartHoldsAgentIDs(t *testing.T) {
	e := newCampaignEnv(t, time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC))
	other := e.publishedAgent("Other")
	runtimeFor := func(agent string) string {
		r := e.Do("POST", "/api/v1/api-keys", e.Owner.Token, map[string]any{"name": "runtime", "scopes": []string{data.ScopeCallsRuntime}, "agent_ids": []string{agent}})
		testkit.Expect(t, r, 201)
		return r.JSON()["token"].(string)
	}
	limited := runtimeFor(other)
	e.create(e.campaignBody([]string{"+14155550101"}, nil))
	for name, body := range map[string]map[string]any{
		"inbound through the number":          inbound("+15550001111", nil),
		"outbound naming the agent":           {"direction": "outbound", "to_number": "+15550001111", "agent_id": e.agent},
		"outbound through the number's agent": {"direction": "outbound", "to_number": "+15550001111", "from_number": startNumber},
	} {
		if r := e.Do("POST", "/api/v1/calls/start", limited, body); r.Status != 404 {
			t.Errorf("%s with a key limited to another agent: %d %s", name, r.Status, r.Body)
		}
	}
	r := e.Do("POST", "/api/v1/dial-tasks/claim", limited, map[string]any{"max": 10})
	if testkit.Expect(t, r, 200); len(r.Data()["tasks"].([]any)) != 0 {
		t.Errorf("a key limited to another agent leased %s", r.Body)
	}
	if n := e.callCount(); n != 0 {
		t.Fatalf("%d calls registered by refused starts", n)
	}
	allowed := runtimeFor(e.agent)
	answer(t, e.Do("POST", "/api/v1/calls/start", allowed, inbound("+15550001111", nil)))
	if r := e.Do("POST", "/api/v1/dial-tasks/claim", allowed, map[string]any{"max": 10}); len(r.Data()["tasks"].([]any)) != 1 {
		t.Errorf("the key limited to the campaign's agent: %s", r.Body)
	}
}
