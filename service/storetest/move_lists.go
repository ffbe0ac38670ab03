package storetest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

func init() {
	suites = append(suites, suite{"move_keeps_conversations_to_redact", testMoveKeepsConversationsToRedact})
}

// testMoveKeepsConversationsToRedact: a conversation the storage upgrade listed to redact,
// which its job had not reached when the node was moved, is listed in the destination
// too; without that the moved job finds nothing and the conversation keeps in the clear
// what its call's setting redacts. One not listed stays off the list.
func testMoveKeepsConversationsToRedact(t *testing.T, open Opener) {
	src, dst := openMoveEnds(t, open)
	g := stepIDs()
	const ws = moveWorkspace
	t0 := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	listed, unlisted := storedConversation(g, ws, t0), storedConversation(g, ws, t0.Add(time.Minute))
	update(t, src, func(tx service.Tx) error {
		for _, c := range []*data.StoredConversation{listed, unlisted} {
			at, reason := data.NewTime(t0.Add(time.Hour)), data.EndUserEnded
			c.Status, c.EndedAt, c.DisconnectionReason = data.ConversationEnded, &at, &reason
			if err := tx.InsertConversation(c, nil); err != nil {
				return err
			}
		}
		return tx.ListConversationToRedact(ws, listed.ID)
	})
	counts, err := service.MoveInstallation(context.Background(), src, dst, nil)
	if err != nil {
		t.Fatal(err)
	}
	if counts["conversations"] != 2 || counts["conversations_to_redact"] != 1 {
		t.Errorf("the move's counts: %v", counts)
	}
	for name, s := range map[string]service.Store{"source": src, "destination": dst} {
		view(t, s, func(tx service.Tx) error {
			ids, err := tx.ConversationsToRedact(ws, 10)
			if err != nil || !slices.Equal(ids, []string{listed.ID}) {
				t.Errorf("%s: ConversationsToRedact = %v, %v; want [%s]", name, ids, err, listed.ID)
			}
			return nil
		})
	}
}
