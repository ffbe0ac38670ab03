package bolt

import (
	"context"
	"fmt"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// BenchmarkUpgradeListsCampaigns times the campaigns' part of the schema 25 → 26 fill
// (listCampaignsOfStore) over n campaigns of 20 agents in 5 workspaces: it runs at open,
// in the migration's one transaction (docs/performance.md, "Schema 26's fill at open").
func BenchmarkUpgradeListsCampaigns(b *testing.B) {
	for _, n := range []int{1_000, 10_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			db, err := Open(b.TempDir(), Options{NoSync: true, SecretKey: make([]byte, 32)})
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			g := data.NewIDGen()
			for i := 0; i < n; i += 1000 {
				if err := db.Update(context.Background(), func(tx service.Tx) error {
					for j := i; j < min(i+1000, n); j++ {
						c := &data.Campaign{ID: g.New(data.PrefixCampaign), WorkspaceID: fmt.Sprintf("ws_%d", j%5), Name: "Spring renewals",
							AgentID: fmt.Sprintf("agt_01JD60000000000000000%05d", j%20), Status: data.CampaignCompleted,
							Window: data.CampaignWindow{Days: data.Weekdays, Start: "09:00", End: "18:00"}, MaxConcurrent: 2}
						if err := tx.InsertCampaign(c, nil); err != nil {
							return err
						}
					}
					return nil
				}); err != nil {
					b.Fatal(err)
				}
			}
			benchFill(b, db, bucketCampaignsListed, listCampaignsOfStore) // as a schema 25 file: no campaign list
		})
	}
}
