package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

func init() {
	suites = append(suites, suite{"campaigns_deleting", testCampaignsDeleting})
}

// testCampaignsDeleting: a deleted campaign is listed as deleting (with its workspace
// and agent, by id, paged by after) until a DeleteCampaignRecipients removes fewer than its limit;
// one that removes exactly its limit keeps it listed (recipients may be left); a
// workspace's delete takes its entries.
func testCampaignsDeleting(t *testing.T, open Opener) {
	s := open(t)
	g := stepIDs()
	t0 := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	a, ra := campaignFixture(g, "ws_1", t0)
	b, rb := campaignFixture(g, "ws_1", t0)
	b.AgentID = "agt_2"
	c, rc := campaignFixture(g, "ws_2", t0)
	kept, rk := campaignFixture(g, "ws_1", t0)
	update(t, s, func(tx service.Tx) error {
		for _, x := range []struct {
			c  *data.Campaign
			rs []*data.Recipient
		}{{a, ra}, {b, rb}, {c, rc}, {kept, rk}} {
			if err := tx.InsertCampaign(x.c, x.rs); err != nil {
				return err
			}
		}
		return nil
	})
	checkDeleting(t, s, nil)
	update(t, s, func(tx service.Tx) error {
		for _, x := range []*data.Campaign{a, b, c} {
			if err := tx.DeleteCampaign(x); err != nil {
				return err
			}
		}
		return nil
	})
	all := []service.DeletingCampaign{{ID: a.ID, WorkspaceID: "ws_1", AgentID: "agt_1"}, {ID: b.ID, WorkspaceID: "ws_1", AgentID: "agt_2"},
		{ID: c.ID, WorkspaceID: "ws_2", AgentID: "agt_1"}}
	checkDeleting(t, s, all)
	view(t, s, func(tx service.Tx) error {
		first, err := tx.DeletingCampaigns("", 2)
		if err != nil || !slices.Equal(first, all[:2]) {
			t.Errorf("the first page of 2: %v %v, want %v", first, err, all[:2])
		}
		rest, err := tx.DeletingCampaigns(all[1].ID, 2)
		if err != nil || !slices.Equal(rest, all[2:]) {
			t.Errorf("the page after %s: %v %v, want %v", all[1].ID, rest, err, all[2:])
		}
		return nil
	})
	deleteRecipients := func(id string, limit, want int) {
		t.Helper()
		var n int
		update(t, s, func(tx service.Tx) (err error) {
			n, err = tx.DeleteCampaignRecipients(id, limit)
			return err
		})
		if n != want {
			t.Fatalf("a batch of %d deleted %d recipients, want %d", limit, n, want)
		}
	}
	deleteRecipients(a.ID, 3, 3) // all of them, but the batch was full: still listed
	checkDeleting(t, s, all)
	deleteRecipients(a.ID, 3, 0)
	deleteRecipients(b.ID, 5, 3)
	checkDeleting(t, s, all[2:])
	update(t, s, func(tx service.Tx) error { return tx.DeleteWorkspace("ws_2") })
	checkDeleting(t, s, nil)
}

// checkDeleting fails the test unless the deleting campaigns are want.
func checkDeleting(t *testing.T, s service.Store, want []service.DeletingCampaign) {
	t.Helper()
	view(t, s, func(tx service.Tx) error {
		got, err := tx.DeletingCampaigns("", 100)
		if !slices.Equal(got, want) {
			t.Errorf("deleting campaigns: %v, want %v", got, want)
		}
		return err
	})
}
