package server_test

import (
	"strings"
	"testing"
)

// A call's registration or start retried under its Idempotency-Key after the call was
// deleted replayed the kept 201: the deleted call's transcript, numbers and variables,
// and a call that no longer exists as if it did. The retry is now a 409 that says the
// request was carried out and the call deleted, and registers nothing again.
func TestReplayOfADeletedCallIsRefused(t *testing.T) {
	e := newStartEnv(t)
	cases := []struct {
		name, token, path string
		body              map[string]any
	}{
		{"register", e.Owner.Token, "/api/v1/calls", map[string]any{"agent_id": e.agent, "direction": "outbound",
			"from_number": "+14155550100", "to_number": "+15557770123",
			"transcript": []map[string]any{{"role": "user", "content": "ZEBRAQUARTZ", "start_ms": 0}}}},
		{"start", e.runtime, "/api/v1/calls/start", map[string]any{"agent_id": e.agent, "direction": "outbound",
			"to_number": "+15557770123", "variables": map[string]any{"secret_word": "ZEBRAQUARTZ"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			key := "replay-deleted-" + tc.name
			first := e.Do("POST", tc.path, tc.token, tc.body, "Idempotency-Key", key)
			expect(t, first, 201)
			id := str(first.Data(), "id")
			if tc.name == "start" {
				id = str(first.Data()["call"].(map[string]any), "id")
			}
			expect(t, e.Do("POST", tc.path, tc.token, tc.body, "Idempotency-Key", key), 201)
			expect(t, e.Do("DELETE", "/api/v1/calls/"+id, e.Owner.Token, nil), 204)

			again := e.Do("POST", tc.path, tc.token, tc.body, "Idempotency-Key", key)
			expect(t, again, 409)
			if strings.Contains(string(again.Body), "ZEBRAQUARTZ") || strings.Contains(string(again.Body), "+15557770123") {
				t.Errorf("the retry showed the deleted call: %s", again.Body)
			}
			if got := listIDs(t, e.Do("GET", "/api/v1/calls", e.Owner.Token, nil)); len(got) != 0 {
				t.Errorf("%d calls after the retry, want none", len(got))
			}
		})
	}
}
