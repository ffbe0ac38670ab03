package bolt

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// A schema 9 file kept no final campaign in the open index, so a campaign canceled with
// a recipient in progress there was out of it, its lease never returned. Opening the file
// (schema 10) puts it back; a canceled campaign with nothing in progress and a completed
// one stay out, a running one stays in.
func TestDrainingCampaignsOfAnOlderFileAreIndexed(t *testing.T) {
	db, dir, opts := openFile(t)
	campaign := func(id, status string, inProgress int64) *data.Campaign {
		return &data.Campaign{ID: id, WorkspaceID: "ws_1", AgentID: "agt_1", Status: status,
			Counts: data.CampaignCounts{Total: 1, InProgress: inProgress, Canceled: 1 - inProgress}}
	}
	draining, canceled, running := campaign("cmp_1", data.CampaignCanceled, 1), campaign("cmp_2", data.CampaignCanceled, 0),
		campaign("cmp_3", data.CampaignRunning, 1)
	completed := campaign("cmp_4", data.CampaignCompleted, 0)
	if err := db.Update(context.Background(), func(tx service.Tx) error {
		for _, c := range []*data.Campaign{draining, canceled, running, completed} {
			if err := tx.InsertCampaign(c, nil); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// As a schema 9 binary left it: the canceled campaign out of the open index.
	if err := db.bolt.Update(func(b *bbolt.Tx) error {
		if err := setSchemaVersion(b, 9); err != nil {
			return err
		}
		return indexDelete(b.Bucket(bucketCampaignsOpen), "ws_1", draining.ID)
	}); err != nil {
		t.Fatal(err)
	}
	if got := openCampaignIDs(t, db); !slices.Equal(got, []string{running.ID}) {
		t.Fatalf("the schema 9 file's open campaigns: %v, want the running one only", got)
	}
	db = reopenUpgraded(t, db, dir, opts)
	defer db.Close()
	if got := openCampaignIDs(t, db); !slices.Equal(got, []string{draining.ID, running.ID}) {
		t.Errorf("open campaigns after the upgrade: %v, want the canceled one in progress and the running one", got)
	}
}

func openCampaignIDs(t *testing.T, db *DB) []string {
	t.Helper()
	var ids []string
	if err := db.View(context.Background(), func(tx service.Tx) error {
		open, err := tx.OpenCampaigns("ws_1")
		for _, c := range open {
			ids = append(ids, c.ID)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return ids
}

// A schema 13 file kept no count of its campaigns' recipients. Opening it (schema 14)
// counts each workspace's (a campaign of no recipient counting 1), so the bound on kept
// recipients holds for campaigns created before it.
func TestKeptCampaignRecipientsOfAnOlderFileAreCounted(t *testing.T) {
	db, dir, opts := openFile(t)
	campaign := func(id, ws string, total int64) *data.Campaign {
		return &data.Campaign{ID: id, WorkspaceID: ws, AgentID: "agt_1", Status: data.CampaignCompleted,
			Counts: data.CampaignCounts{Total: total}}
	}
	if err := db.Update(context.Background(), func(tx service.Tx) error {
		for _, c := range []*data.Campaign{campaign("cmp_1", "ws_1", 3), campaign("cmp_2", "ws_1", 0), campaign("cmp_3", "ws_2", 5)} {
			if err := tx.InsertCampaign(c, nil); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	db = asOlderFile(t, db, dir, opts, 13, bucketCampaignsKept)
	defer db.Close()
	for ws, want := range map[string]int64{"ws_1": 4, "ws_2": 5, "ws_3": 0} {
		if err := db.View(context.Background(), func(tx service.Tx) error {
			n, err := tx.KeptCampaignRecipients(ws)
			if n != want {
				t.Errorf("%s keeps %d after the upgrade, want %d", ws, n, want)
			}
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
}

// A file before schema 18 did not list every campaign deleted with recipients left (a
// campaign deleted before campaigns_deleting was kept). Opening it (schema 18) lists
// each campaign whose recipients have no record, with their workspace (and the agent of
// its earlier delete job when it is kept), so that the check that queues their delete job
// again finds it; a campaign there is stays off the list. A campaign the schema 17 binary
// listed itself (its workspace alone) takes its earlier delete job's agent the same way.
func TestDeletedCampaignsOfAnOlderFileAreListed(t *testing.T) {
	db, dir, opts := openFile(t)
	recipient := func(id, campaign, ws string) *data.Recipient {
		return &data.Recipient{ID: id, CampaignID: campaign, WorkspaceID: ws, PhoneNumber: "+14155550100", State: data.RecipientPending}
	}
	campaign := func(id, ws string, rs ...*data.Recipient) (*data.Campaign, []*data.Recipient) {
		return &data.Campaign{ID: id, WorkspaceID: ws, AgentID: "agt_1", Status: data.CampaignCompleted,
			Counts: data.CampaignCounts{Total: int64(len(rs))}}, rs
	}
	kept, rk := campaign("cmp_1", "ws_1", recipient("rcp_1", "cmp_1", "ws_1"))
	gone, rg := campaign("cmp_2", "ws_1", recipient("rcp_2", "cmp_2", "ws_1"), recipient("rcp_3", "cmp_2", "ws_1"))
	other, ro := campaign("cmp_3", "ws_2", recipient("rcp_4", "cmp_3", "ws_2"))
	listed, rl := campaign("cmp_4", "ws_1", recipient("rcp_5", "cmp_4", "ws_1"))
	listedNoJob, rn := campaign("cmp_5", "ws_2", recipient("rcp_6", "cmp_5", "ws_2"))
	if err := db.Update(context.Background(), func(tx service.Tx) error {
		for _, x := range []struct {
			c  *data.Campaign
			rs []*data.Recipient
		}{{kept, rk}, {gone, rg}, {other, ro}, {listed, rl}, {listedNoJob, rn}} {
			if err := tx.InsertCampaign(x.c, x.rs); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// cmp_2's and cmp_4's delete jobs failed for good and are still kept: each campaign's
	// agent is its job's.
	if err := db.Update(context.Background(), func(tx service.Tx) error {
		for i, c := range []struct{ id, agent string }{{"cmp_2", "agt_2"}, {"cmp_4", "agt_3"}} {
			agent := c.agent
			if _, err := tx.EnqueueJob(&data.JobRecord{Job: data.Job{ID: fmt.Sprintf("job_%d", i+1), WorkspaceID: "ws_1", AgentID: &agent,
				Kind: service.JobKindDeleteCampaignRecipients, Status: data.JobFailed, Attempt: 5, MaxAttempts: 5,
				RunAt: data.NewTime(time.Now()), CreatedAt: data.NewTime(time.Now()), FinishedAt: data.NewTime(time.Now()).Ptr()},
				Payload: []byte(`{"campaign_id":"` + c.id + `"}`), UniqueKey: c.id}); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// As an older binary left it: four campaigns deleted, their recipients not; two of
	// them unlisted (deleted before the list was kept), two listed by their workspace.
	if err := db.bolt.Update(func(b *bbolt.Tx) error {
		if err := setSchemaVersion(b, 17); err != nil {
			return err
		}
		for _, c := range []*data.Campaign{gone, other, listed, listedNoJob} {
			if err := indexDelete(b.Bucket(bucketCampaignsByWS), c.WorkspaceID, c.ID); err != nil {
				return err
			}
			if err := b.Bucket(bucketCampaigns).Delete([]byte(c.ID)); err != nil {
				return err
			}
		}
		for _, c := range []*data.Campaign{listed, listedNoJob} {
			if err := b.Bucket(bucketCampaignsDeleting).Put([]byte(c.ID), []byte(c.WorkspaceID)); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	db = reopenUpgraded(t, db, dir, opts)
	defer db.Close()
	want := []service.DeletingCampaign{{ID: "cmp_2", WorkspaceID: "ws_1", AgentID: "agt_2"}, {ID: "cmp_3", WorkspaceID: "ws_2"},
		{ID: "cmp_4", WorkspaceID: "ws_1", AgentID: "agt_3"}, {ID: "cmp_5", WorkspaceID: "ws_2"}}
	if err := db.View(context.Background(), func(tx service.Tx) error {
		got, err := tx.DeletingCampaigns("", 10)
		if !slices.Equal(got, want) {
			t.Errorf("deleting campaigns after the upgrade: %v, want %v", got, want)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
}
