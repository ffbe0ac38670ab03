package bolt

import (
	"context"
	"slices"
	"testing"
	"time"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// A schema 21 file keeps answers with an agent without listing them all under it (only
// its conversations', and a schema 20 file none). Opening it (schema 22) lists every one
// with an answer, so that the agent's delete cuts them to their claims: a conversation's
// start and message, a call's start; not a claim.
func TestUpgradeListsAgentAnswers(t *testing.T) {
	db, dir, opts := openFile(t)
	const agent = "agt_01JD6000000000000000000001"
	at := data.NewTime(time.Now())
	for _, r := range []struct {
		key         string
		status      int
		conv, start string
	}{{"start", 201, "", "conv_1"}, {"turn", 200, "conv_1", ""}, {"claim", 0, "", "conv_2"}, {"call start", 201, "", ""}} {
		if err := db.Update(context.Background(), func(tx service.Tx) error {
			return tx.PutIdempotentResponse(7, r.key, &data.IdempotentResponse{Status: r.status, Body: []byte(r.key), CreatedAt: at,
				AgentID: agent, ConversationID: r.conv, StartedConversationID: r.start})
		}); err != nil {
			t.Fatal(err)
		}
	}
	db = asOlderFile(t, db, dir, opts, 21, bucketIdempotencyByAgent)
	defer db.Close()
	var keys []string
	if err := db.View(context.Background(), func(tx service.Tx) error {
		kept, err := tx.AgentResponses(agent, 100)
		for _, k := range kept {
			keys = append(keys, k.Key)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	slices.Sort(keys)
	if want := []string{"call start", "start", "turn"}; !slices.Equal(keys, want) {
		t.Errorf("listed under the agent after the upgrade: %q; want %q", keys, want)
	}
}

// TestAgentListLeavesWithItsAnswer: an answer's entry under its agent goes when the answer
// is cut to its claim, deleted with its conversation or purged. The list passes over an
// entry whose answer is gone, so only the bucket tells: an entry left behind by each
// purged answer would grow it without end.
func TestAgentListLeavesWithItsAnswer(t *testing.T) {
	db, _, _ := openFile(t)
	defer db.Close()
	const agent = "agt_01JD6000000000000000000001"
	at := data.NewTime(time.Now())
	update := func(fn func(tx service.Tx) error) {
		t.Helper()
		if err := db.Update(context.Background(), fn); err != nil {
			t.Fatal(err)
		}
	}
	keep := func(status int) {
		update(func(tx service.Tx) error {
			return tx.PutIdempotentResponse(7, "turn", &data.IdempotentResponse{Status: status, Body: []byte("words"), CreatedAt: at,
				AgentID: agent, ConversationID: "conv_1"})
		})
	}
	entries := func(after string, want int) {
		t.Helper()
		n := 0
		if err := db.bolt.View(func(tx *bbolt.Tx) error {
			n = tx.Bucket(bucketIdempotencyByAgent).Stats().KeyN
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if n != want {
			t.Errorf("after %s: %d entries under agents, want %d", after, n, want)
		}
	}
	keep(200)
	entries("an answer kept", 1)
	keep(0)
	entries("its cut to its claim", 0)
	keep(200)
	update(func(tx service.Tx) error { _, err := tx.DeleteConversationResponses("conv_1"); return err })
	entries("its conversation's answers deleted", 0)
	keep(200)
	update(func(tx service.Tx) error {
		_, err := tx.DeleteIdempotentResponsesBefore(at.Add(time.Hour), 100)
		return err
	})
	entries("the purge", 0)
}
