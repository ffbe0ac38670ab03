package storetest

import (
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

func init() {
	suites = append(suites, suite{"token_kept_answers", testTokenKeptAnswers})
}

// DeleteTokenResponses deletes up to limit of what one token kept, claims too, with
// their entries (under a conversation, a started conversation, an agent), and says how
// many; another token's stay, listed as they were. Token ids 1 and 1<<8 are near in
// bytes (bbolt keys a token's range by its id's 8 bytes).
func testTokenKeptAnswers(t *testing.T, open Opener) {
	s := open(t)
	at := data.NewTime(time.Now())
	const agent = "agt_01JD6000000000000000000001"
	const gone, other = int64(1), int64(1 << 8)
	put := func(tx service.Tx, token int64, key string, r data.IdempotentResponse) error {
		r.CreatedAt, r.Body = at, []byte(key)
		return tx.PutIdempotentResponse(token, key, &r)
	}
	update(t, s, func(tx service.Tx) error {
		for _, token := range []int64{gone, other} {
			for key, r := range map[string]data.IdempotentResponse{
				"start":  {Status: 201, AgentID: agent, StartedConversationID: "conv_1"},
				"turn":   {Status: 200, AgentID: agent, ConversationID: "conv_1"},
				"call":   {Status: 201, AgentID: agent},
				"claim":  {AgentID: agent},
				"apikey": {Status: 201},
			} {
				if err := put(tx, token, key, r); err != nil {
					return err
				}
			}
		}
		return nil
	})
	deleted := func(limit int) int {
		t.Helper()
		var n int
		update(t, s, func(tx service.Tx) (err error) {
			n, err = tx.DeleteTokenResponses(gone, limit)
			return err
		})
		return n
	}
	if n := deleted(3); n != 3 {
		t.Fatalf("first pass (limit 3) deleted %d; want 3", n)
	}
	if n := deleted(10); n != 2 {
		t.Fatalf("second pass deleted %d; want the 2 left", n)
	}
	if n := deleted(10); n != 0 {
		t.Fatalf("third pass deleted %d; want none", n)
	}
	view(t, s, func(tx service.Tx) error {
		for _, key := range []string{"start", "turn", "call", "claim", "apikey"} {
			if r, err := tx.IdempotentResponse(gone, key); err != nil || r != nil {
				t.Errorf("the deleted token's %q: %+v, %v; want gone", key, r, err)
			}
			if r, err := tx.IdempotentResponse(other, key); err != nil || r == nil || string(r.Body) != key {
				t.Errorf("the other token's %q: %+v, %v; want it kept", key, r, err)
			}
		}
		byAgent, err := tx.AgentResponses(agent, 100)
		if err != nil {
			return err
		}
		starts, err := tx.ConversationStartResponses("conv_1")
		if err != nil {
			return err
		}
		for _, k := range append(byAgent, starts...) {
			if k.TokenID != other {
				t.Errorf("listed after its token's answers were deleted: %d %q", k.TokenID, k.Key)
			}
		}
		if len(byAgent) != 3 || len(starts) != 1 {
			t.Errorf("the other token's listed: %d under the agent, %d under the conversation; want 3 and 1", len(byAgent), len(starts))
		}
		return nil
	})
	// The conversation's end then finds the other token's message alone.
	update(t, s, func(tx service.Tx) error {
		n, err := tx.DeleteConversationResponses("conv_1")
		if n != 1 {
			t.Errorf("the conversation's end deleted %d; want the other token's one", n)
		}
		return err
	})
}
