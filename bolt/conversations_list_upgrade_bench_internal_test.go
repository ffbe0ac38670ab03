package bolt

import (
	"context"
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
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			db, err := Open(b.TempDir(), Options{NoSync: true, SecretKey: make([]byte, 32)})
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			g := data.NewIDGen()
			at := data.NewTime(time.Now())
			for i := 0; i < n; i += 1000 {
				if err := db.Update(context.Background(), func(tx service.Tx) error {
					for j := i; j < min(i+1000, n); j++ {
						c := &data.StoredConversation{Conversation: data.Conversation{ID: g.New(data.PrefixConversation),
							WorkspaceID: fmt.Sprintf("ws_%d", j%5), AgentID: fmt.Sprintf("agt_01JD60000000000000000%05d", j%20),
							Status: data.ConversationActive, Variables: map[string]any{"name": "Ada", "shop": "Grand Hotel"},
							CreatedAt: at, UpdatedAt: at}, StartedBy: "usr_1"}
						if err := tx.InsertConversation(c, nil); err != nil {
							return err
						}
					}
					return nil
				}); err != nil {
					b.Fatal(err)
				}
			}
			benchFill(b, db, bucketConversationsListed, listConversationsOfStore) // as a schema 24 file: no list
		})
	}
}

// BenchmarkUpgradeListsConversationsByStatus times the schema 25 → 26 fill
// (statusesOfListed) over n conversations of 20 agents, a quarter of them active: it
// runs at open, in the migration's one transaction (docs/performance.md, "Schema 26's
// fill at open"). It reads conversations_listed's entries, no record.
func BenchmarkUpgradeListsConversationsByStatus(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			db, err := Open(b.TempDir(), Options{NoSync: true, SecretKey: make([]byte, 32)})
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			g := data.NewIDGen()
			at := data.NewTime(time.Now())
			for i := 0; i < n; i += 1000 {
				if err := db.Update(context.Background(), func(tx service.Tx) error {
					for j := i; j < min(i+1000, n); j++ {
						c := &data.StoredConversation{Conversation: data.Conversation{ID: g.New(data.PrefixConversation),
							WorkspaceID: fmt.Sprintf("ws_%d", j%5), AgentID: fmt.Sprintf("agt_01JD60000000000000000%05d", j%20),
							Status: data.ConversationActive, CreatedAt: at, UpdatedAt: at}, StartedBy: "usr_1"}
						if j%4 != 0 {
							reason := data.EndUserEnded
							c.Status, c.EndedAt, c.DisconnectionReason = data.ConversationEnded, &at, &reason
						}
						if err := tx.InsertConversation(c, nil); err != nil {
							return err
						}
					}
					return nil
				}); err != nil {
					b.Fatal(err)
				}
			}
			benchFill(b, db, bucketConversationsByStatus, statusesOfListed) // as a schema 25 file: no status list
		})
	}
}
