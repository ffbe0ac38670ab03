package server_test

import (
	"strings"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
)

// TestConcurrencyRefusalCountsInWords: a limit of one call (a single line) is refused as
// "has 1 call open", not "1 calls", for the workspace's bound and the agent's.
func TestConcurrencyRefusalCountsInWords(t *testing.T) {
	e := newStartEnv(t)
	e.setLimits(map[string]int64{data.LimitConcurrentCalls: 1})
	answer(t, e.start(inbound("+15550000001", nil)))
	r := e.start(inbound("+15550000002", nil))
	testkit.Expect(t, r, 429)
	if msg := r.JSON()["message"].(string); !strings.HasPrefix(msg, "The workspace has 1 call open, its concurrent_calls limit") {
		t.Errorf("workspace bound: %s", msg)
	}
	e.setLimits(map[string]int64{data.LimitConcurrentCalls: -1})
	testkit.Expect(t, e.Do("PUT", "/api/v1/agents/"+e.agent, e.Owner.Token, map[string]any{"max_concurrent_calls": 1}), 200)
	r = e.start(inbound("+15550000003", nil))
	testkit.Expect(t, r, 429)
	if msg := r.JSON()["message"].(string); !strings.HasPrefix(msg, "The agent has 1 call open, its max_concurrent_calls limit") {
		t.Errorf("agent bound: %s", msg)
	}
	testkit.Expect(t, e.Do("PUT", "/api/v1/agents/"+e.agent, e.Owner.Token, map[string]any{"max_concurrent_calls": 2}), 200)
	answer(t, e.start(inbound("+15550000004", nil)))
	if msg := e.start(inbound("+15550000005", nil)).JSON()["message"].(string); !strings.HasPrefix(msg, "The agent has 2 calls open") {
		t.Errorf("agent bound of two: %s", msg)
	}
}

// TestOneCallMinuteInWords: a plan of one call minute a month is told as "1 minute".
func TestOneCallMinuteInWords(t *testing.T) {
	e := newStartEnv(t)
	e.setLimits(map[string]int64{data.LimitCallMinutes: 1})
	testkit.Expect(t, e.Do("POST", "/api/v1/calls", e.runtime, map[string]any{"agent_id": e.agent, "direction": "web", "status": "ended",
		"started_at": time.Now().Add(-time.Minute).UTC().Format(time.RFC3339), "duration_ms": 60000}), 201)
	r := e.start(inbound("+15550000009", nil))
	testkit.Expect(t, r, 403)
	if msg := r.JSON()["message"].(string); msg != "The workspace has used its call_minutes_per_month limit of 1 minute this month." {
		t.Errorf("call minutes: %s", msg)
	}
}
