package postgres_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/postgres"
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
	db, err := postgres.Open(ctx, postgres.Options{URL: pool.Config().ConnString(), PasswordCost: bcrypt.MinCost, SecretKey: testkit.SecretKey})
	if err != nil {
		t.Fatal(err)
	}
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
