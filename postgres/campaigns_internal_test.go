package postgres

import (
	"strings"
	"testing"
)

// The claims' query of the open campaigns names campaignOpen as the index campaigns_open
// is written (migration 0022), so the planner can read the index instead of every
// campaign of the workspace.
func TestOpenCampaignsReadTheirIndex(t *testing.T) {
	plan := queryPlan(t, `SELECT body, last_claim_at FROM campaigns WHERE workspace_id = 'ws_1' AND `+campaignOpen)
	if !strings.Contains(plan, "campaigns_open") {
		t.Errorf("the open campaigns' query does not read campaigns_open:\n%s", plan)
	}
}
