package bolt

import (
	"fmt"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// BenchmarkUpgradeListsConversations times the schema 24 → 25 fill
// (listConversationsOfStore) over n conversations of 20 agents with a few variables: it
// runs at open, in the migration's one transaction, so a file holding them opens that
// much later (docs/performance.md, "Schema 25's fill at open"). B/op is what the
// transaction allocates, its dirty pages among it.
func BenchmarkUpgradeListsConversations(b *testing.B) {
	g := data.NewIDGen()
	at := data.NewTime(time.Now())
	benchUpgrade(b, []int{10_000, 100_000}, bucketConversationsListed, listConversationsOfStore, func(tx service.Tx, j int) error { // as a schema 24 file: no list
		c := &data.StoredConversation{Conversation: data.Conversation{ID: g.New(data.PrefixConversation),
			WorkspaceID: fmt.Sprintf("ws_%d", j%5), AgentID: fmt.Sprintf("agt_01JD60000000000000000%05d", j%20),
			Status: data.ConversationActive, Variables: map[string]any{"name": "Ada", "shop": "Grand Hotel"},
			CreatedAt: at, UpdatedAt: at}, StartedBy: "usr_1"}
		return tx.InsertConversation(c, nil)
	})
}

// BenchmarkUpgradeListsConversationsByStatus times the schema 25 → 26 fill
// (statusesOfListed) over n conversations of 20 agents, a quarter of them active: it
// runs at open, in the migration's one transaction (docs/performance.md, "Schema 26's
// fill at open"). It reads conversations_listed's entries, no record.
func BenchmarkUpgradeListsConversationsByStatus(b *testing.B) {
	g := data.NewIDGen()
	at := data.NewTime(time.Now())
	benchUpgrade(b, []int{10_000, 100_000}, bucketConversationsByStatus, statusesOfListed, func(tx service.Tx, j int) error { // as a schema 25 file: no status list
		c := &data.StoredConversation{Conversation: data.Conversation{ID: g.New(data.PrefixConversation),
			WorkspaceID: fmt.Sprintf("ws_%d", j%5), AgentID: fmt.Sprintf("agt_01JD60000000000000000%05d", j%20),
			Status: data.ConversationActive, CreatedAt: at, UpdatedAt: at}, StartedBy: "usr_1"}
		if j%4 != 0 {
			reason := data.EndUserEnded
			c.Status, c.EndedAt, c.DisconnectionReason = data.ConversationEnded, &at, &reason
		}
		return tx.InsertConversation(c, nil)
	})
}
