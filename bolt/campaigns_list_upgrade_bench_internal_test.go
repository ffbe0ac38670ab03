package bolt

import (
	"fmt"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// BenchmarkUpgradeListsCampaigns times the campaigns' part of the schema 25 → 26 fill
// (listCampaignsOfStore) over n campaigns of 20 agents in 5 workspaces: it runs at open,
// in the migration's one transaction (docs/performance.md, "Schema 26's fill at open").
func BenchmarkUpgradeListsCampaigns(b *testing.B) {
	g := data.NewIDGen()
	benchUpgrade(b, []int{1_000, 10_000}, bucketCampaignsListed, listCampaignsOfStore, func(tx service.Tx, j int) error { // as a schema 25 file: no campaign list
		c := &data.Campaign{ID: g.New(data.PrefixCampaign), WorkspaceID: fmt.Sprintf("ws_%d", j%5), Name: "Spring renewals",
			AgentID: fmt.Sprintf("agt_01JD60000000000000000%05d", j%20), Status: data.CampaignCompleted,
			Window: data.CampaignWindow{Days: data.Weekdays, Start: "09:00", End: "18:00"}, MaxConcurrent: 2}
		return tx.InsertCampaign(c, nil)
	})
}
