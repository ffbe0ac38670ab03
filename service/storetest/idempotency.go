package storetest

import (
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// The idempotency groups register themselves here rather than in storetest.go's list.
func init() {
	suites = append(suites, suite{"idempotency_agent", testIdempotencyAgent})
}

// testIdempotencyAgent: a kept response keeps the agent its request acted on, a claim's
// and a full response's alike, and a response about no agent reads back without one.
// A replay re-checks the caller's access to that agent (server/middleware_idempotency.go).
func testIdempotencyAgent(t *testing.T, open Opener) {
	s := open(t)
	at := data.NewTime(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	kept := map[string]*data.IdempotentResponse{
		"claim": {RequestHash: "h1", CreatedAt: at, ClaimID: "claim-1", AgentID: "agt_1"},
		"full":  {RequestHash: "h2", Status: 201, Header: map[string]string{}, Body: []byte("{}"), CreatedAt: at, AgentID: "agt_2"},
		"none":  {RequestHash: "h3", Status: 201, Header: map[string]string{}, Body: []byte("{}"), CreatedAt: at},
	}
	for key, r := range kept {
		update(t, s, func(tx service.Tx) error { return tx.PutIdempotentResponse(7, key, r) })
	}
	view(t, s, func(tx service.Tx) error {
		for key, want := range kept {
			got, err := tx.IdempotentResponse(7, key)
			if err != nil {
				return err
			}
			if got == nil || got.AgentID != want.AgentID || got.ClaimID != want.ClaimID || got.RequestHash != want.RequestHash {
				t.Errorf("%s: kept %+v, read %+v", key, want, got)
			}
		}
		return nil
	})
	// The full response replaces its claim: the agent goes with it, and an answer that
	// names none clears the claim's.
	for _, agent := range []string{"agt_3", ""} {
		full := &data.IdempotentResponse{RequestHash: "h1", Status: 200, Header: map[string]string{}, Body: []byte("{}"), CreatedAt: at, AgentID: agent}
		update(t, s, func(tx service.Tx) error { return tx.PutIdempotentResponse(7, "claim", full) })
		view(t, s, func(tx service.Tx) error {
			got, err := tx.IdempotentResponse(7, "claim")
			if got == nil || got.AgentID != agent || got.ClaimID != "" {
				t.Errorf("the full response over the claim: %+v, want agent %q and no claim id", got, agent)
			}
			return err
		})
	}
}
