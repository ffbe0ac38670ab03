package bolt

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// A schema 25 file kept no campaign list. Opening it (schema 26) fills campaigns_listed
// from the stored campaigns, in the opening transaction, so that the list's filters show
// the campaigns of before the upgrade.
func TestCampaignsOfASchema25FileAreListed(t *testing.T) {
	db, dir, opts := openFile(t)
	ids := storeListTestCampaigns(t, db)
	db = asOlderFile(t, db, dir, opts, 25, bucketCampaignsListed)
	defer db.Close()
	checkCampaignLists(t, db, ids)
}

// storeListTestCampaigns stores 6 campaigns of ws_1 over agt_0..agt_2, every other one
// running, the rest completed, and returns their ids, oldest first.
func storeListTestCampaigns(t *testing.T, db *DB) []string {
	t.Helper()
	var ids []string
	if err := db.Update(context.Background(), func(tx service.Tx) error {
		for i := range 6 {
			c := &data.Campaign{ID: fmt.Sprintf("cmp_%08d", i), WorkspaceID: "ws_1", Name: "C", AgentID: fmt.Sprintf("agt_%d", i%3),
				Status: data.CampaignCompleted}
			if i%2 == 0 {
				c.Status = data.CampaignRunning
			}
			ids = append(ids, c.ID)
			if err := tx.InsertCampaign(c, nil); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return ids
}

// checkCampaignLists checks the lists of storeListTestCampaigns' campaigns.
func checkCampaignLists(t *testing.T, db *DB, ids []string) {
	t.Helper()
	pick := func(idx ...int) []string {
		out := make([]string, len(idx))
		for i, n := range idx {
			out[i] = ids[n]
		}
		return out
	}
	for _, c := range []struct {
		f      data.CampaignFilter
		agents []string
		want   []string
	}{
		{data.CampaignFilter{}, nil, pick(5, 4, 3, 2, 1, 0)},
		{data.CampaignFilter{Status: data.CampaignRunning}, nil, pick(4, 2, 0)},
		{data.CampaignFilter{AgentID: "agt_1"}, nil, pick(4, 1)},
		{data.CampaignFilter{Status: data.CampaignCompleted}, []string{"agt_0", "agt_2"}, pick(5, 3)},
	} {
		got := []string{}
		if err := db.View(context.Background(), func(tx service.Tx) error {
			list, _, err := tx.Campaigns("ws_1", c.f, c.agents, data.PageRequest{PerPage: 20})
			for _, cp := range list {
				got = append(got, cp.ID)
			}
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%+v of %v = %v, want %v", c.f, c.agents, got, c.want)
		}
	}
}
