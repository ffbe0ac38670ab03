package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

func init() {
	suites = append(suites, suite{"campaigns_delete", testCampaignsDelete})
}

// testCampaignsDelete: a deleted campaign is out of every read and index at once, its
// workspace's kept count drops by its weight, and its recipients go batch by batch with
// their due, lease and call entries; the workspace's other campaign, and another
// workspace's, keep theirs. A campaign with no recipient counts 1.
func testCampaignsDelete(t *testing.T, open Opener) {
	s := open(t)
	g := stepIDs()
	t0 := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	c, rs := campaignFixture(g, "ws_1", t0)
	other, ors := campaignFixture(g, "ws_1", t0)
	foreign, frs := campaignFixture(g, "ws_2", t0)
	empty, _ := campaignFixture(g, "ws_2", t0)
	empty.Counts = data.CampaignCounts{Suppressed: 3}
	update(t, s, func(tx service.Tx) error {
		for _, x := range []struct {
			c  *data.Campaign
			rs []*data.Recipient
		}{{c, rs}, {other, ors}, {foreign, frs}, {empty, nil}} {
			if err := tx.InsertCampaign(x.c, x.rs); err != nil {
				return err
			}
		}
		return nil
	})
	checkKept(t, s, "ws_1", 6)
	checkKept(t, s, "ws_2", 4)
	leaseFirstRecipient(t, s, c, rs, t0) // a lease and a call entry to go too
	update(t, s, func(tx service.Tx) error { return tx.DeleteCampaign(c) })
	view(t, s, func(tx service.Tx) error {
		got, err := tx.Campaign(c.ID)
		if err != nil || got != nil {
			t.Fatalf("the deleted campaign reads %+v %v", got, err)
		}
		list, _, err := tx.Campaigns("ws_1", data.CampaignFilter{}, nil, data.PageRequest{PerPage: 10})
		if err != nil || len(list) != 1 || list[0].ID != other.ID {
			t.Errorf("the workspace's campaigns: %d %v, want the other one only", len(list), err)
		}
		if open, _ := tx.OpenCampaigns("ws_1"); len(open) != 1 || open[0].ID != other.ID {
			t.Errorf("open campaigns: %d, want the other one only", len(open))
		}
		if ids, _ := tx.AgentCampaigns("ws_1", "agt_1"); !slices.Equal(ids, []string{other.ID}) {
			t.Errorf("the agent's campaigns: %v", ids)
		}
		return err
	})
	checkKept(t, s, "ws_1", 3)
	for _, want := range []int{2, 1, 0} {
		var n int
		update(t, s, func(tx service.Tx) (err error) {
			n, err = tx.DeleteCampaignRecipients(c.ID, 2)
			return err
		})
		if n != want {
			t.Fatalf("a batch of 2 deleted %d recipients, want %d", n, want)
		}
	}
	view(t, s, func(tx service.Tx) error {
		for _, r := range rs {
			if got, err := tx.Recipient(r.ID); err != nil || got != nil {
				t.Errorf("recipient %s reads %v %v after its campaign's delete", r.ID, got, err)
			}
		}
		if list, _, _ := tx.Recipients(c.ID, service.StateSelection{}, data.PageRequest{PerPage: 10}); len(list) != 0 {
			t.Errorf("the deleted campaign lists %d recipients", len(list))
		}
		if due, _ := tx.DueRecipients(c.ID, t0.Add(time.Hour), 10); len(due) != 0 {
			t.Errorf("%d recipients still due", len(due))
		}
		if exp, _ := tx.ExpiredLeases(c.ID, t0.Add(time.Hour), 10); len(exp) != 0 {
			t.Errorf("%d leases still indexed", len(exp))
		}
		if r, _ := tx.RecipientByCall("call_1"); r != nil {
			t.Errorf("the leased call still finds recipient %s", r.ID)
		}
		kept, _, err := tx.Recipients(other.ID, service.StateSelection{}, data.PageRequest{PerPage: 10})
		if err != nil || len(kept) != 3 {
			t.Errorf("the other campaign's recipients: %d %v", len(kept), err)
		}
		if due, _ := tx.DueRecipients(foreign.ID, t0.Add(time.Hour), 10); len(due) != 3 {
			t.Errorf("the other workspace's due recipients: %d", len(due))
		}
		return nil
	})
	update(t, s, func(tx service.Tx) error { return tx.DeleteCampaign(empty) })
	checkKept(t, s, "ws_2", 3)
}

// checkKept fails the test unless ws's kept count is want.
func checkKept(t *testing.T, s service.Store, ws string, want int64) {
	t.Helper()
	view(t, s, func(tx service.Tx) error {
		n, err := tx.KeptCampaignRecipients(ws)
		if n != want {
			t.Errorf("%s keeps %d campaign recipients, want %d", ws, n, want)
		}
		return err
	})
}
