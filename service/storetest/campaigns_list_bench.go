package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// BenchCampaignList: the first page (15) of GET /api/v1/campaigns in a workspace of n
// campaigns (each of sizes) over 10 agents, all completed but the newest 20 (running)
// and the oldest 20 (paused, of an 11th agent): the whole list, one agent's, the running
// ones, the paused ones (the oldest, past every other), a caller limited to 2 agents, the
// 11th agent's (past every other) and a caller limited to it and one without any. A
// store with a Settle method is settled once they are stored (docs/performance.md, "The
// conversation list").
func BenchCampaignList(b *testing.B, open Opener, sizes ...int) {
	for _, n := range sizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			s := open(b)
			g := stepIDs()
			t0 := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
			for batch := 0; batch < n; batch += 1000 {
				update(b, s, func(tx service.Tx) error {
					for i := batch; i < batch+1000; i++ {
						c, _ := campaignFixture(g, "ws_1", t0)
						c.AgentID, c.Status, c.Counts = fmt.Sprintf("agt_%d", i%10), data.CampaignCompleted, data.CampaignCounts{}
						switch {
						case i < 20:
							c.AgentID, c.Status = "agt_rare", data.CampaignPaused
						case i >= n-20:
							c.Status = data.CampaignRunning
						}
						if err := tx.InsertCampaign(c, nil); err != nil {
							return err
						}
					}
					return nil
				})
			}
			if settle, ok := s.(interface{ Settle(testing.TB) }); ok {
				settle.Settle(b)
			}
			for _, c := range []struct {
				name   string
				f      data.CampaignFilter
				agents []string
			}{
				{"all", data.CampaignFilter{}, nil},
				{"agent", data.CampaignFilter{AgentID: "agt_3"}, nil},
				{"running", data.CampaignFilter{Status: data.CampaignRunning}, nil},
				{"paused_oldest", data.CampaignFilter{Status: data.CampaignPaused}, nil},
				{"limited", data.CampaignFilter{}, []string{"agt_1", "agt_2"}},
				{"rare_agent", data.CampaignFilter{AgentID: "agt_rare"}, nil},
				{"limited_rare", data.CampaignFilter{}, []string{"agt_rare", "agt_none"}},
			} {
				b.Run(c.name, func(b *testing.B) {
					b.ReportAllocs()
					for b.Loop() {
						view(b, s, func(tx service.Tx) error {
							list, _, err := tx.Campaigns("ws_1", c.f, c.agents, data.PageRequest{PerPage: 15})
							if err != nil || len(list) != 15 {
								b.Fatalf("Campaigns = %d, %v", len(list), err)
							}
							return nil
						})
					}
				})
			}
		})
	}
}
