package server_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/service"
)

// eventCount counts the events of workspace ws, of every type.
func eventCount(t *testing.T, s *testkit.Server, ws string) int {
	t.Helper()
	n := 0
	err := s.Store.View(context.Background(), func(tx service.Tx) error {
		return tx.EventsNewestFirst(ws, func(*data.Event) (bool, error) { n++; return true, nil })
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// An update that changes nothing writes nothing (service/unchanged.go; conventions §11,
// §17), on the routes TestSpecUpdatesThatChangeNothing does not cover: a call (the
// runtime's PUT at a call's end is often sent again), an agent's test, a rollout and the
// price table. Each is sent with an empty body and with its own values, under the ETag
// read before: 200 with the record as it was, the same ETag, no event (so no webhook);
// then a real change is one. A call, a test and a rollout were written anew (updated_at
// and ETag changed, so another client's If-Match failed with nothing changed), and the
// test, the rollout and the price table told their *.updated event to every webhook.
func TestFaultsUpdatesThatChangeNothing(t *testing.T) {
	e := newStartEnv(t)
	tok, ws := e.Owner.Token, e.Owner.WorkspaceID
	agentPath := "/api/v1/agents/" + e.agent
	testkit.Expect(t, e.Do("PUT", agentPath, tok, map[string]any{"name": "Front desk, second"}), 200)
	testkit.Expect(t, e.Do("POST", agentPath+"/publish", tok, nil), 204)

	callBody := map[string]any{"agent_id": e.agent, "direction": "web", "status": "ended",
		"variables": map[string]any{"customer_name": "Ada", "plan": "gold"}, "metadata": map[string]any{"crm": "42"},
		"transcript": []map[string]any{{"role": "agent", "content": "Hello Ada!", "start_ms": 0}, {"role": "user", "content": "Hi", "start_ms": 900}},
		"started_at": "2026-03-02T10:00:00Z", "ended_at": "2026-03-02T10:01:00Z", "disconnection_reason": "user_hangup"}
	r := e.Do("POST", "/api/v1/calls", tok, callBody)
	testkit.Expect(t, r, 201)
	call := "/api/v1/calls/" + r.Data()["id"].(string)
	test := map[string]any{"name": "Greets", "user": map[string]any{"script": []string{"Hello"}},
		"criteria": []any{map[string]any{"type": "says", "pattern": "Hello"}}, "variables": map[string]any{"plan": "gold"}}
	r = e.Do("POST", agentPath+"/tests", tok, test)
	testkit.Expect(t, r, 201)
	agentTest := agentPath + "/tests/" + r.Data()["id"].(string)
	rollout := map[string]any{"variants": []any{map[string]any{"version": 1, "weight": 30}, map[string]any{"version": 2, "weight": 70}},
		"rollback": map[string]any{"metric": "failed_rate", "threshold": 0.5, "min_calls": 20}}
	testkit.Expect(t, e.Do("PUT", agentPath+"/rollout", tok, rollout), 200)
	prices := map[string]any{"currency": "USD", "prices": []any{
		map[string]any{"provider": "groq", "model": "llama-3.3-70b-versatile", "unit": "llm_input_1m_tokens", "price": "0.59"}}}
	testkit.Expect(t, e.Do("PUT", "/api/v1/price-table", tok, prices), 200)

	cases := []struct {
		path         string
		empty        bool // whether an empty body is an update (a rollout's and a table's PUT replace whole)
		same, change map[string]any
	}{
		{call, true, map[string]any{"status": "ended", "variables": callBody["variables"], "metadata": callBody["metadata"],
			"transcript": callBody["transcript"], "started_at": "2026-03-02T10:00:00Z", "ended_at": "2026-03-02T10:01:00Z",
			"disconnection_reason": "user_hangup", "legal_hold": false}, map[string]any{"metadata": map[string]any{"crm": "43"}}},
		{agentTest, true, test, map[string]any{"name": "Greets warmly"}},
		{agentPath + "/rollout", false, rollout, map[string]any{"variants": []any{map[string]any{"version": 1, "weight": 50}, map[string]any{"version": 2, "weight": 50}}}},
		{"/api/v1/price-table", false, prices, map[string]any{"currency": "EUR", "prices": []any{}}},
	}
	for _, c := range cases {
		t.Run(c.path, func(t *testing.T) {
			before := e.Do("GET", c.path, tok, nil)
			testkit.Expect(t, before, 200)
			events := eventCount(t, e.Server, ws)
			bodies := []map[string]any{c.same}
			if c.empty {
				bodies = append(bodies, map[string]any{})
			}
			for _, body := range bodies {
				r := e.Do("PUT", c.path, tok, body, "If-Match", before.Header.Get("ETag"))
				testkit.Expect(t, r, 200)
				if r.Header.Get("ETag") != before.Header.Get("ETag") || fmt.Sprint(r.Data()) != fmt.Sprint(before.Data()) {
					t.Errorf("PUT %v changed the record:\nbefore %s\nafter  %s", body, before.Body, r.Body)
				}
			}
			if after := e.Do("GET", c.path, tok, nil); string(after.Body) != string(before.Body) {
				t.Errorf("the stored record changed:\nbefore %s\nafter  %s", before.Body, after.Body)
			}
			if n := eventCount(t, e.Server, ws) - events; n != 0 {
				t.Errorf("%d events from updates that changed nothing", n)
			}
			r := e.Do("PUT", c.path, tok, c.change, "If-Match", before.Header.Get("ETag"))
			testkit.Expect(t, r, 200)
			if r.Header.Get("ETag") == before.Header.Get("ETag") {
				t.Errorf("PUT %v: a change kept the ETag", c.change)
			}
		})
	}
}
