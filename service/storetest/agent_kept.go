package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

func init() {
	suites = append(suites, suite{"agent_kept_answers", testAgentKeptAnswers})
}

// AgentResponses lists the answers kept with an agent, under any token: the starts of
// and messages to its conversations, and every other request that acted on it (a call's
// start, a test run); not a claim, not another agent's, not an answer about no agent. An
// answer cut to its claim, deleted with its conversation or purged leaves the list.
func testAgentKeptAnswers(t *testing.T, open Opener) {
	s := open(t)
	t0 := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	const agent, other = "agt_01JD6000000000000000000001", "agt_01JD6000000000000000000002"
	kept := []struct {
		token        int64
		key          string
		status       int
		agent        string
		conv, start  string
		createdAfter time.Duration
	}{
		{1, "start", 201, agent, "", "conv_1", 0},
		{2, "message", 200, agent, "conv_1", "", time.Hour},
		{1, "old message", 200, agent, "conv_2", "", 0},
		{1, "claim", 0, agent, "", "conv_3", 0},
		{1, "call start", 201, agent, "", "", 0},
		{3, "test run", 202, agent, "", "", time.Hour},
		{1, "call start's claim", 0, agent, "", "", 0},
		{1, "webhook", 201, "", "", "", 0},
		{1, "other's start", 201, other, "", "conv_4", 0},
	}
	update(t, s, func(tx service.Tx) error {
		for _, k := range kept {
			if err := tx.PutIdempotentResponse(k.token, k.key, &data.IdempotentResponse{Status: k.status, Body: []byte(k.key),
				CreatedAt: data.NewTime(t0.Add(k.createdAfter)), AgentID: k.agent, ConversationID: k.conv, StartedConversationID: k.start}); err != nil {
				return err
			}
		}
		return nil
	})
	listed := func(want ...string) {
		t.Helper()
		view(t, s, func(tx service.Tx) error {
			got, err := tx.AgentResponses(agent, 100)
			var keys []string
			for _, k := range got {
				keys = append(keys, k.Key)
				if k.Response == nil || string(k.Response.Body) != k.Key || k.TokenID == 0 {
					t.Errorf("listed %q: %+v", k.Key, k)
				}
			}
			slices.Sort(keys)
			slices.Sort(want)
			if !slices.Equal(keys, want) {
				t.Errorf("the agent's kept answers: %q, want %q", keys, want)
			}
			return err
		})
	}
	listed("message", "old message", "start", "call start", "test run")

	update(t, s, func(tx service.Tx) error { // cut to its claim, as the agent's delete does
		return tx.PutIdempotentResponse(1, "start", &data.IdempotentResponse{CreatedAt: data.NewTime(t0), AgentID: agent, StartedConversationID: "conv_1"})
	})
	listed("message", "old message", "call start", "test run")
	update(t, s, func(tx service.Tx) error {
		return tx.PutIdempotentResponse(1, "call start", &data.IdempotentResponse{CreatedAt: data.NewTime(t0), AgentID: agent})
	})
	listed("message", "old message", "test run")
	update(t, s, func(tx service.Tx) error {
		_, err := tx.DeleteConversationResponses("conv_2")
		return err
	})
	listed("message", "test run")
	update(t, s, func(tx service.Tx) error {
		_, err := tx.DeleteIdempotentResponsesBefore(t0.Add(2*time.Hour), 100)
		return err
	})
	listed()
}
