package bolt

import (
	"context"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// A schema 20 file keeps answers for an agent's conversations without listing them under
// the agent. Opening it (schema 21) lists them, so that the agent's delete cuts them to
// their claims; not a claim, not another request of the agent (a call's start).
func TestUpgradeListsAgentConversationAnswers(t *testing.T) {
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
	db = asOlderFile(t, db, dir, opts, 20, bucketIdempotencyByAgent)
	defer db.Close()
	var keys []string
	if err := db.View(context.Background(), func(tx service.Tx) error {
		kept, err := tx.AgentConversationResponses(agent, 100)
		for _, k := range kept {
			keys = append(keys, k.Key)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if len(keys) != 2 || keys[0] == keys[1] || keys[0] != "start" && keys[0] != "turn" || keys[1] != "start" && keys[1] != "turn" {
		t.Errorf("listed under the agent after the upgrade: %q; want the start's and the turn's answers", keys)
	}
}
