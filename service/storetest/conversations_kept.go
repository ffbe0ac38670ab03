package storetest

import (
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

func init() {
	suites = append(suites, suite{"conversations_kept_answers", testConversationsKeptAnswers})
}

// A workspace's delete takes with its conversations what the Idempotency-Keys of their
// requests kept (a message's answer, a start's answer), under any token; another
// workspace's conversation keeps its own.
func testConversationsKeptAnswers(t *testing.T, open Opener) {
	s := open(t)
	g := stepIDs()
	t0 := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	gone, kept := storedConversation(g, "ws_gone", t0), storedConversation(g, "ws_kept", t0)
	update(t, s, func(tx service.Tx) error {
		for _, c := range []*data.StoredConversation{gone, kept} {
			if err := tx.InsertConversation(c, nil); err != nil {
				return err
			}
		}
		for _, r := range []struct {
			token       int64
			key         string
			conv, start string
		}{{1, "m-gone", gone.ID, ""}, {2, "s-gone", "", gone.ID}, {1, "m-kept", kept.ID, ""}, {2, "s-kept", "", kept.ID}} {
			if err := tx.PutIdempotentResponse(r.token, r.key, &data.IdempotentResponse{Status: 201, Body: []byte(r.key),
				CreatedAt: data.NewTime(t0), ConversationID: r.conv, StartedConversationID: r.start}); err != nil {
				return err
			}
		}
		return nil
	})
	update(t, s, func(tx service.Tx) error { return tx.DeleteWorkspace("ws_gone") })
	view(t, s, func(tx service.Tx) error {
		for _, r := range []struct {
			token int64
			key   string
			want  bool
		}{{1, "m-gone", false}, {2, "s-gone", false}, {1, "m-kept", true}, {2, "s-kept", true}} {
			got, err := tx.IdempotentResponse(r.token, r.key)
			if err != nil {
				return err
			}
			if (got != nil) != r.want {
				t.Errorf("after the workspace's delete, %q kept: %v, want %v", r.key, got != nil, r.want)
			}
		}
		starts, err := tx.ConversationStartResponses(gone.ID)
		if len(starts) != 0 {
			t.Errorf("the deleted conversation's start answers: %+v", starts)
		}
		return err
	})
}
