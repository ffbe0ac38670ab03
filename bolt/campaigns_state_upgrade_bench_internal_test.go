package bolt

import (
	"context"
	"fmt"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// BenchmarkUpgradeListsRecipientStates times the schema 22 → 23 fill (indexRecipientStates)
// over n recipients, 50,000 a campaign, in several states: it runs at open, in the
// migration's one transaction (docs/performance.md, "A campaign's recipients by state").
// B/op is what the transaction allocates, its dirty pages among it.
func BenchmarkUpgradeListsRecipientStates(b *testing.B) {
	for _, n := range []int{50_000, 200_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			db, err := Open(b.TempDir(), Options{NoSync: true, SecretKey: make([]byte, 32)})
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			g := data.NewIDGen()
			for c := 0; c < n; c += 50_000 {
				camp := &data.Campaign{ID: g.New(data.PrefixCampaign), WorkspaceID: "ws_1", AgentID: "agt_1", Status: data.CampaignRunning}
				rs := make([]*data.Recipient, 0, 50_000)
				for i := range 50_000 {
					rs = append(rs, &data.Recipient{ID: g.New(data.PrefixRecipient), CampaignID: camp.ID, WorkspaceID: "ws_1",
						PhoneNumber: fmt.Sprintf("+1415%07d", i), State: data.RecipientStates[i%len(data.RecipientStates)],
						Variables: map[string]any{"customer_name": "Ada"}, Attempts: []data.RecipientAttempt{}})
				}
				if err := db.Update(context.Background(), func(tx service.Tx) error { return tx.InsertCampaign(camp, rs) }); err != nil {
					b.Fatal(err)
				}
			}
			benchFill(b, db, bucketRecipientsByState, indexRecipientStates) // as a schema 22 file: no list
		})
	}
}
