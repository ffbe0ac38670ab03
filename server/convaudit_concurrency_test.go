package server_test

import (
	"sync"
	"testing"

	"github.com/voiceapi/voiceapi/internal/testkit"
)

// atOnce sends n requests together (each built by send) and returns their answers.
func atOnce(n int, send func(i int) *testkit.Response) []*testkit.Response {
	out := make([]*testkit.Response, n)
	var wg sync.WaitGroup
	gate := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() { defer wg.Done(); <-gate; out[i] = send(i) }()
	}
	close(gate)
	wg.Wait()
	return out
}

// docs/conversations.md, of conventions §21's end: "Ending twice returns the same call";
// so does ending at once from several clients: every answer is 200 with one call, and
// the workspace holds that one call.
func TestConvAuditEndsAtOnceMakeOneCall(t *testing.T) {
	e := newConvEnv(t, nil)
	e.stand.Respond(shopModel)
	agent := shopAgent(t, e)
	id := e.start(t, agent, map[string]any{"version": "draft", "variables": map[string]any{"shop": "A"}}, 201).Data()["id"].(string)
	calls := map[any]int{}
	for _, r := range atOnce(6, func(int) *testkit.Response {
		return testkit.Request(t, e.URL, "POST", "/api/v1/conversations/"+id+"/end", e.tok, nil)
	}) {
		if testkit.Expect(t, r, 200); r.Data()["disconnection_reason"] != "user_ended" {
			t.Errorf("an end: %.300s", r.Body)
		}
		calls[r.Data()["id"]]++
	}
	if n := len(e.Do("GET", "/api/v1/calls?per_page=100", e.tok, nil).List()); len(calls) != 1 || n != 1 {
		t.Fatalf("six ends at once answered calls %v and stored %d calls, want one", calls, n)
	}
}

// Conventions §24: "POST /api/v1/calls/{call_id}/analyze ... 202 as a durable job"; docs/
// analysis.md: "a call with an analysis pending gets that job". Asked at once, every
// answer is that one job.
func TestConvAuditAnalyzeAtOnceQueuesOneJob(t *testing.T) {
	e := newAnalysisEnv(t)
	call := e.do("POST", "/api/v1/calls", e.Owner.Token, e.callBody(map[string]any{"outcome": "booked"})).Data()
	jobs := map[any]int{}
	for _, r := range atOnce(8, func(int) *testkit.Response {
		return testkit.Request(t, e.URL, "POST", "/api/v1/calls/"+call["id"].(string)+"/analyze", e.Owner.Token, nil)
	}) {
		expect(t, r, 202)
		jobs[r.Data()["id"]]++
	}
	if len(jobs) != 1 {
		t.Fatalf("eight analyses asked at once made jobs %v, want one", jobs)
	}
}
