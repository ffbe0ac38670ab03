package storetest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

func init() {
	suites = append(suites, suite{"workspace_kept_answers", testWorkspaceKeptAnswers},
		suite{"workspace_kept_answers_before", testWorkspaceKeptAnswersBefore},
		suite{"workspace_kept_answers_before_walk_once", testWorkspaceKeptAnswersBeforeWalkOnce})
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
			n, _, err = tx.DeleteWorkspaceResponses(gone, token, time.Time{}, nil, limit)
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
	// Each pass walks at most its limit, deleted or spared, and goes on where the one
	// before stopped: the 6 of the token's answers (an engine may walk the other
	// workspace's too) take at most 6 passes of one and a last that finds none.
	if took, calls := walkBefore(t, s, ws, token, removed.Time, 1, 10); took != 3 || calls > 7 {
		t.Errorf("passes of limit 1 took %d in %d calls; want the 3 kept by the time in at most 7", took, calls)
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
		if n, _, err := tx.DeleteWorkspaceResponses(ws, token, time.Time{}, nil, 10); err != nil || n != 2 {
			t.Errorf("a pass without a time took %d (%v); want the 2 kept after", n, err)
		}
		return nil
	})
}

// walkBefore runs DeleteWorkspaceResponses with limit, one transaction a call, each going
// on from where the one before stopped, until it says it is over or maxCalls ran, and says
// how many it deleted in how many calls. No call may delete more than its limit.
func walkBefore(t *testing.T, s service.Store, ws string, token int64, before time.Time, limit, maxCalls int) (took, calls int) {
	t.Helper()
	var from []byte
	for calls < maxCalls {
		calls++
		var next []byte
		update(t, s, func(tx service.Tx) error {
			n, at, err := tx.DeleteWorkspaceResponses(ws, token, before, from, limit)
			if n > limit {
				t.Errorf("a call of limit %d deleted %d", limit, n)
			}
			took, next = took+n, at
			return err
		})
		if next == nil {
			return took, calls
		}
		from = next
	}
	t.Errorf("the walk was not over after %d calls of limit %d (%d deleted)", calls, limit, took)
	return took, calls
}

// A member's removal's walk reads each answer it spares once, not once a batch: with
// many more kept after the removal (the member added again) than a batch, its batches go
// on where the one before stopped, and it is over after as many batches as the token's
// answers fill, having deleted each kept by then and none since.
func testWorkspaceKeptAnswersBeforeWalkOnce(t *testing.T, open Opener) {
	s := open(t)
	removed := time.Now().Truncate(time.Millisecond)
	ws := wsIDs[0]
	const token, spared, due, limit = int64(9), 60, 6, 10
	update(t, s, func(tx service.Tx) error {
		for i := range spared + due {
			at := removed.Add(time.Second) // kept since
			if i%(spared/due+1) == 0 {
				at = removed.Add(-time.Second)
			}
			r := data.IdempotentResponse{Status: 201, Body: []byte("answer"), WorkspaceID: ws, CreatedAt: data.NewTime(at)}
			if err := tx.PutIdempotentResponse(token, fmt.Sprintf("key-%03d", i), &r); err != nil {
				return err
			}
		}
		return nil
	})
	// 66 answers, 10 a call: 7 calls walk them all, and an eighth may find the end.
	if took, calls := walkBefore(t, s, ws, token, removed, limit, 8); took != due {
		t.Errorf("the walk deleted %d in %d calls; want the %d kept by the removal", took, calls, due)
	}
	view(t, s, func(tx service.Tx) error {
		left := 0
		for i := range spared + due {
			r, err := tx.IdempotentResponse(token, fmt.Sprintf("key-%03d", i))
			if err != nil {
				return err
			}
			if r != nil {
				left++
				if !r.CreatedAt.After(removed) {
					t.Errorf("key-%03d, kept by the removal, outlived the walk", i)
				}
			}
		}
		if left != spared {
			t.Errorf("%d answers left; want the %d kept since", left, spared)
		}
		return nil
	})
}
