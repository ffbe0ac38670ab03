package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

func init() {
	suites = append(suites, suite{"workspace_kept_answers", testWorkspaceKeptAnswers},
		suite{"workspace_kept_answers_before", testWorkspaceKeptAnswersBefore})
}

// DeleteWorkspaceResponses deletes up to limit of the responses kept for requests made
// in a workspace, claims too, under one token or any, with their entries (under a
// conversation, an agent); those made in another workspace, or naming none (kept before
// the workspace was noted), stay, as does one stored again under its key naming another
// workspace. Token ids 1 and 1<<8 are near in bytes (bbolt lists a workspace's entries
// by token id after it).
func testWorkspaceKeptAnswers(t *testing.T, open Opener) {
	s := open(t)
	at := data.NewTime(time.Now())
	const agent = "agt_01JD6000000000000000000001"
	gone, other := wsIDs[0], wsIDs[1]
	const home, visitor = int64(1), int64(1 << 8)
	put := func(tx service.Tx, token int64, key string, r data.IdempotentResponse) error {
		r.CreatedAt, r.Body = at, []byte(key)
		return tx.PutIdempotentResponse(token, key, &r)
	}
	update(t, s, func(tx service.Tx) error {
		for _, token := range []int64{home, visitor} {
			for key, r := range map[string]data.IdempotentResponse{
				"member": {Status: 201, WorkspaceID: gone},
				"turn":   {Status: 200, AgentID: agent, ConversationID: "conv_1", WorkspaceID: gone},
				"claim":  {AgentID: agent, WorkspaceID: gone},
				"there":  {Status: 201, WorkspaceID: other},
				"before": {Status: 201},
				"moved":  {Status: 201, WorkspaceID: gone},
			} {
				if err := put(tx, token, key, r); err != nil {
					return err
				}
			}
		}
		// Stored again naming another workspace: its entry under gone outlives it.
		return put(tx, visitor, "moved", data.IdempotentResponse{Status: 201, WorkspaceID: other})
	})
	deleted := func(token int64, limit int) int {
		t.Helper()
		var n int
		update(t, s, func(tx service.Tx) (err error) {
			n, err = tx.DeleteWorkspaceResponses(gone, token, time.Time{}, limit)
			return err
		})
		return n
	}
	kept := func(token int64, keys ...string) {
		t.Helper()
		view(t, s, func(tx service.Tx) error {
			for _, key := range []string{"member", "turn", "claim", "there", "before", "moved"} {
				r, err := tx.IdempotentResponse(token, key)
				if err != nil {
					return err
				}
				if want := slices.Contains(keys, key); (r != nil) != want {
					t.Errorf("token %d's %q: %+v; want kept %v", token, key, r, want)
				}
			}
			return nil
		})
	}
	// The visitor's alone (a member's removal): its 3 in gone.
	if n := deleted(visitor, 2); n != 2 {
		t.Fatalf("first pass (limit 2) took %d; want 2", n)
	}
	if n := deleted(visitor, 10); n != 1 {
		t.Fatalf("second pass took %d; want the one left", n)
	}
	if n := deleted(visitor, 10); n != 0 {
		t.Fatalf("third pass took %d; want none", n)
	}
	kept(visitor, "there", "before", "moved")
	kept(home, "member", "turn", "claim", "there", "before", "moved")
	view(t, s, func(tx service.Tx) error {
		byAgent, err := tx.AgentResponses(agent, 100)
		if err != nil {
			return err
		}
		if len(byAgent) != 1 || byAgent[0].TokenID != home {
			t.Errorf("listed under the agent: %+v; want the home token's turn alone", byAgent)
		}
		return nil
	})
	// Any token's (the workspace's delete).
	if n := deleted(0, 10); n != 4 {
		t.Fatalf("the workspace's pass took %d; want the home token's 4", n)
	}
	kept(home, "there", "before")
	kept(visitor, "there", "before", "moved")
	update(t, s, func(tx service.Tx) error {
		if n, err := tx.DeleteConversationResponses("conv_1"); err != nil || n != 0 {
			t.Errorf("the conversation's end found %d (%v); want none left", n, err)
		}
		return nil
	})
}

// DeleteWorkspaceResponses with a time (a member's removal) takes, of the token's answers
// made in the workspace, only those kept at or before it: one kept after (the member
// added again, a request since) stays, however many the walk passes over, and so do the
// token's answers of another workspace.
func testWorkspaceKeptAnswersBefore(t *testing.T, open Opener) {
	s := open(t)
	removed := data.NewTime(time.Now())
	ws, other := wsIDs[0], wsIDs[1]
	const token = int64(7)
	keys := map[string]data.IdempotentResponse{
		"old-1":     {Status: 201, WorkspaceID: ws, CreatedAt: data.NewTime(removed.Add(-time.Second))},
		"at":        {Status: 201, WorkspaceID: ws, CreatedAt: removed},
		"new-1":     {Status: 201, WorkspaceID: ws, CreatedAt: data.NewTime(removed.Add(time.Second))},
		"old-2":     {AgentID: "agt_01JD6000000000000000000001", WorkspaceID: ws, CreatedAt: data.NewTime(removed.Add(-time.Minute))},
		"new-2":     {Status: 200, WorkspaceID: ws, CreatedAt: data.NewTime(removed.Add(time.Minute))},
		"elsewhere": {Status: 201, WorkspaceID: other, CreatedAt: data.NewTime(removed.Add(-time.Second))},
	}
	update(t, s, func(tx service.Tx) error {
		for key, r := range keys {
			r.Body = []byte(key)
			if err := tx.PutIdempotentResponse(token, key, &r); err != nil {
				return err
			}
		}
		return nil
	})
	var passes []int
	for range 4 {
		update(t, s, func(tx service.Tx) error {
			n, err := tx.DeleteWorkspaceResponses(ws, token, removed.Time, 1)
			passes = append(passes, n)
			return err
		})
	}
	if !slices.Equal(passes, []int{1, 1, 1, 0}) {
		t.Errorf("passes of limit 1 took %v; want the 3 kept by the time, one each, then none", passes)
	}
	view(t, s, func(tx service.Tx) error {
		for key := range keys {
			r, err := tx.IdempotentResponse(token, key)
			if err != nil {
				return err
			}
			want := key == "new-1" || key == "new-2" || key == "elsewhere"
			if (r != nil) != want {
				t.Errorf("%q: %+v; want kept %v", key, r, want)
			}
		}
		return nil
	})
	// Without a time, what stays goes too.
	update(t, s, func(tx service.Tx) error {
		if n, err := tx.DeleteWorkspaceResponses(ws, token, time.Time{}, 10); err != nil || n != 2 {
			t.Errorf("a pass without a time took %d (%v); want the 2 kept after", n, err)
		}
		return nil
	})
}
