package postgres_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// Before migration 0022 a campaign canceled with a recipient in progress was out of the
// open campaigns, its lease never returned. The migration changes what is open, not the
// rows: such a campaign is open once it applied; one canceled with nothing in progress
// and a completed one are not.
func TestMigrationOpensCanceledCampaignsWithLeasesOut(t *testing.T) {
	pool := schemaAt(t, 21)
	ctx := context.Background()
	insert := func(id, status string, inProgress int64) {
		c := data.Campaign{ID: id, WorkspaceID: "ws_1", AgentID: "agt_1", Status: status,
			Counts: data.CampaignCounts{Total: 1, InProgress: inProgress, Canceled: 1 - inProgress}}
		body, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := pool.Exec(ctx, `INSERT INTO campaigns (id, workspace_id, agent_id, status, body) VALUES ($1, $2, $3, $4, $5)`,
			c.ID, c.WorkspaceID, c.AgentID, c.Status, body); err != nil {
			t.Fatal(err)
		}
	}
	insert("cmp_1", data.CampaignCanceled, 1)
	insert("cmp_2", data.CampaignCanceled, 0)
	insert("cmp_3", data.CampaignRunning, 1)
	insert("cmp_4", data.CampaignCompleted, 0)
	db := openMigrated(t, pool)
	defer db.Close()
	var open []string
	if err := db.View(ctx, func(tx service.Tx) error {
		cs, err := tx.OpenCampaigns("ws_1")
		for _, c := range cs {
			open = append(open, c.ID)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(open, []string{"cmp_1", "cmp_3"}) {
		t.Errorf("open campaigns after the migration: %v, want the canceled one in progress and the running one", open)
	}
}

// Migration 0026 counts each workspace's campaign recipients from the campaigns there are
// (a campaign of no recipient counting 1), so the bound on kept recipients holds for
// campaigns created before it.
func TestMigrationCountsKeptCampaignRecipients(t *testing.T) {
	pool := schemaAt(t, 25)
	ctx := context.Background()
	for _, c := range []data.Campaign{
		{ID: "cmp_1", WorkspaceID: "ws_1", AgentID: "agt_1", Status: data.CampaignCompleted, Counts: data.CampaignCounts{Total: 3}},
		{ID: "cmp_2", WorkspaceID: "ws_1", AgentID: "agt_1", Status: data.CampaignCanceled},
		{ID: "cmp_3", WorkspaceID: "ws_2", AgentID: "agt_1", Status: data.CampaignRunning, Counts: data.CampaignCounts{Total: 5}},
	} {
		body, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := pool.Exec(ctx, `INSERT INTO campaigns (id, workspace_id, agent_id, status, body) VALUES ($1, $2, $3, $4, $5)`,
			c.ID, c.WorkspaceID, c.AgentID, c.Status, body); err != nil {
			t.Fatal(err)
		}
	}
	db := openMigrated(t, pool)
	defer db.Close()
	for ws, want := range map[string]int64{"ws_1": 4, "ws_2": 5, "ws_3": 0} {
		if err := db.View(ctx, func(tx service.Tx) error {
			n, err := tx.KeptCampaignRecipients(ws)
			if n != want {
				t.Errorf("%s keeps %d after the migration, want %d", ws, n, want)
			}
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
}

// Migration 0029 lists as deleting each campaign deleted before it whose recipients are
// not all deleted (recipients without their campaign), so the check that queues their
// delete job again finds them, of the agent of their earlier delete job when it is kept;
// a campaign there is stays off the list.
func TestMigrationListsDeletedCampaignsRecipientsLeft(t *testing.T) {
	pool := schemaAt(t, 28)
	ctx := context.Background()
	body, err := json.Marshal(data.Campaign{ID: "cmp_1", WorkspaceID: "ws_1", AgentID: "agt_1", Status: data.CampaignRunning,
		Counts: data.CampaignCounts{Total: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO campaigns (id, workspace_id, agent_id, status, body) VALUES ('cmp_1', 'ws_1', 'agt_1', $1, $2)`,
		data.CampaignRunning, body); err != nil {
		t.Fatal(err)
	}
	for _, r := range [][3]string{{"rcp_1", "cmp_1", "ws_1"}, {"rcp_2", "cmp_2", "ws_1"}, {"rcp_3", "cmp_2", "ws_1"}, {"rcp_4", "cmp_3", "ws_2"}} {
		if _, err := pool.Exec(ctx, `INSERT INTO campaign_recipients (id, campaign_id, workspace_id, state, body) VALUES ($1, $2, $3, 'pending', '{}')`,
			r[0], r[1], r[2]); err != nil {
			t.Fatal(err)
		}
	}
	// cmp_2's delete job failed for good and is still kept: the campaign's agent is its.
	if _, err := pool.Exec(ctx, `INSERT INTO jobs (id, workspace_id, agent_id, kind, payload, status, attempt, max_attempts, run_at, unique_key, created_at, finished_at)
		VALUES ('job_1', 'ws_1', 'agt_2', 'campaign.delete_recipients', '{"campaign_id":"cmp_2"}', 'failed', 5, 5, now(), 'cmp_2', now(), now())`); err != nil {
		t.Fatal(err)
	}
	db := openMigrated(t, pool)
	defer db.Close()
	want := []service.DeletingCampaign{{ID: "cmp_2", WorkspaceID: "ws_1", AgentID: "agt_2"}, {ID: "cmp_3", WorkspaceID: "ws_2"}}
	if err := db.View(ctx, func(tx service.Tx) error {
		got, err := tx.DeletingCampaigns("", 10)
		if !slices.Equal(got, want) {
			t.Errorf("deleting campaigns after the migration: %v, want %v", got, want)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
}
