package postgres_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/pgtest"
	"github.com/voiceapi/voiceapi/internal/testkit"
)

// startSetup makes, through the first replica, a published agent bound to a number and a
// calls:runtime key; it returns the key.
func startSetup(t *testing.T, r *testkit.Replica, phone string) string {
	t.Helper()
	owner := r.Owner.Token
	a := r.Do("POST", "/api/v1/agents", owner, map[string]any{"name": "Desk"})
	testkit.Expect(t, a, 201)
	agent := a.Data()["id"].(string)
	testkit.Expect(t, r.Do("POST", "/api/v1/agents/"+agent+"/publish", owner, nil), 204)
	testkit.Expect(t, r.Do("POST", "/api/v1/numbers", owner, map[string]any{"phone_number": phone, "provider": "sip", "inbound_agent_id": agent}), 201)
	k := r.Do("POST", "/api/v1/api-keys", owner, map[string]any{"name": "runtime", "scopes": []string{data.ScopeCallsRuntime}})
	testkit.Expect(t, k, 201)
	return k.JSON()["token"].(string)
}

// serializationFailures counts the serialization failures the shared cluster has logged.
func serializationFailures(t *testing.T) int {
	t.Helper()
	log, err := pgtest.SharedLog()
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(log), "could not serialize access")
}

// 50 simultaneous starts spread over three replicas against a workspace limit of 9 admit
// exactly 9: the count and the call record are one SERIALIZABLE transaction on every
// replica, so no two replicas both see a free place; the others are 429, none is a 5xx.
func TestReplicasCallStartsAdmitExactlyTheLimit(t *testing.T) {
	rs := threeReplicas(t, testkit.ReplicaOptions{})
	key := startSetup(t, rs[0], "+14155550123")
	if _, err := rs[0].Svc.Subscriptions.SetSubscription(context.Background(), rs[0].Owner.WorkspaceID,
		data.SubscriptionSet{Limits: map[string]int64{data.LimitConcurrentCalls: 9}}); err != nil {
		t.Fatal(err)
	}
	before := serializationFailures(t)
	var mu sync.Mutex
	got := map[int]int{}
	var wg sync.WaitGroup
	gate := make(chan struct{})
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-gate
			r := testkit.Request(t, rs[i%3].URL, "POST", "/api/v1/calls/start", key,
				map[string]any{"direction": "inbound", "to_number": "+14155550123", "from_number": fmt.Sprintf("+1555300%04d", i)})
			mu.Lock()
			got[r.Status]++
			mu.Unlock()
		}()
	}
	close(gate)
	wg.Wait()
	if got[201] != 9 || got[429] != 41 || len(got) != 2 {
		t.Fatalf("answers by status: %v, want 9 × 201 and 41 × 429", got)
	}
	// Contention costs at most one retry per writer (docs/scale-out.md), never a storm.
	failures := serializationFailures(t) - before
	t.Logf("serialization failures during the 50 starts: %d", failures)
	if failures > 50 {
		t.Errorf("%d serialization failures for 50 starts: more than one per writer", failures)
	}
	for i, r := range rs {
		usage := r.Do("GET", "/api/v1/subscription", r.Owner.Token, nil).Data()["usage"].(map[string]any)
		if usage["concurrent_calls"] != float64(9) {
			t.Errorf("replica %d counts %v open calls", i, usage["concurrent_calls"])
		}
	}
}
