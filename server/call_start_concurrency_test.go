package server_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/bolt"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
)

// startAll sends n call starts at once (distinct callers) and counts the answers by status.
func (e *startEnv) startAll(n int, prefix string) map[int]int {
	e.t.Helper()
	var mu sync.Mutex
	got := map[int]int{}
	var wg sync.WaitGroup
	gate := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-gate
			r := testkit.Request(e.t, e.URL, "POST", "/api/v1/calls/start", e.runtime, inbound(fmt.Sprintf("%s%04d", prefix, i), nil))
			mu.Lock()
			got[r.Status]++
			mu.Unlock()
		}()
	}
	close(gate)
	wg.Wait()
	return got
}

// 50 simultaneous starts against a limit of 7 admit exactly 7; the others are 429, none
// fails otherwise. Then the agent's own bound, under a workspace without one.
func TestCallStartConcurrentStartsAdmitExactlyTheLimit(t *testing.T) {
	e := newStartEnv(t)
	e.setLimits(map[string]int64{data.LimitConcurrentCalls: 7})
	if got := e.startAll(50, "+1555100"); got[201] != 7 || got[429] != 43 || len(got) != 2 {
		t.Fatalf("answers by status: %v, want 7 × 201 and 43 × 429", got)
	}
	usage := e.Do("GET", "/api/v1/subscription", e.Owner.Token, nil).Data()["usage"].(map[string]any)
	if usage["concurrent_calls"] != float64(7) || e.callCount() != 7 {
		t.Errorf("open calls %v, calls stored %d; want 7 and 7", usage["concurrent_calls"], e.callCount())
	}

	e.setLimits(map[string]int64{data.LimitConcurrentCalls: -1})
	other := e.publishedAgent("Overflow")
	testkit.Expect(t, e.Do("PUT", "/api/v1/numbers/"+e.number, e.Owner.Token, map[string]any{"inbound_agent_id": other}), 200)
	testkit.Expect(t, e.Do("PUT", "/api/v1/agents/"+other, e.Owner.Token, map[string]any{"max_concurrent_calls": 3}), 200)
	if got := e.startAll(50, "+1555200"); got[201] != 3 || got[429] != 47 || len(got) != 2 {
		t.Fatalf("answers by status under the agent's bound: %v, want 3 × 201 and 47 × 429", got)
	}
}

// A call left open past its max_call_duration_ms plus 5 minutes stops counting: the start
// that finds it ends it (failed, abandoned; its duration at most the bound, none for a call
// that never started), with call.ended by the system.
func TestCallStartEndsAbandonedCalls(t *testing.T) {
	var offset atomic.Int64
	clock := func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }
	e := newStartEnvWith(t, func(o *bolt.Options) { o.Now = clock })
	testkit.Expect(t, e.Do("PUT", "/api/v1/agents/"+e.agent, e.Owner.Token, map[string]any{"call_config": map[string]any{"max_call_duration_ms": 60_000}}), 200)
	testkit.Expect(t, e.Do("POST", "/api/v1/agents/"+e.agent+"/publish", e.Owner.Token, nil), 204)
	e.setLimits(map[string]int64{data.LimitConcurrentCalls: 1})

	a, _, _ := answer(t, e.start(inbound("+15550000001", nil)))
	aID := a["id"].(string)
	testkit.Expect(t, e.Do("PUT", "/api/v1/calls/"+aID, e.runtime, map[string]any{"status": "ongoing"}), 204)
	offset.Store(int64(5*time.Minute + 59*time.Second)) // within the minute and the grace
	testkit.Expect(t, e.start(inbound("+15550000002", nil)), 429)
	offset.Store(int64(6*time.Minute + 2*time.Second)) // past them
	b, _, _ := answer(t, e.start(inbound("+15550000002", nil)))
	got := e.Do("GET", "/api/v1/calls/"+aID, e.Owner.Token, nil).Data()
	if got["status"] != "failed" || got["disconnection_reason"] != data.DisconnectionAbandoned || got["duration_ms"] != float64(60_000) || got["ended_at"] == nil {
		t.Fatalf("the abandoned call: %v", got)
	}
	ended := e.Do("GET", "/api/v1/audit-log?type=call.ended", e.Owner.Token, nil).List()
	if len(ended) != 1 || ended[0].(map[string]any)["actor"].(map[string]any)["type"] != "system" {
		t.Errorf("call.ended events: %v", ended)
	}

	// A call that never started is abandoned the same way, with no duration.
	offset.Store(int64(12*time.Minute + 5*time.Second))
	answer(t, e.start(inbound("+15550000003", nil)))
	got = e.Do("GET", "/api/v1/calls/"+b["id"].(string), e.Owner.Token, nil).Data()
	if got["status"] != "failed" || got["disconnection_reason"] != data.DisconnectionAbandoned || got["duration_ms"] != nil {
		t.Fatalf("the abandoned registered call: %v", got)
	}
	usage := e.Do("GET", "/api/v1/subscription", e.Owner.Token, nil).Data()["usage"].(map[string]any)
	if usage["concurrent_calls"] != float64(1) {
		t.Errorf("open calls: %v", usage["concurrent_calls"])
	}
}
