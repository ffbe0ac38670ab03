package server_test

import (
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/internal/testkit"
)

// TestLifecycleListParametersGivenEmpty: a filter of a life-cycle list given empty
// (?status=) is a 422 naming it, as a bad value is (docs/api.md: a typo never widens a
// list): read as absent, it would answer the whole list. Every fault of the query comes in
// one 422 (conventions §2), a bad per_page with them.
func TestLifecycleListParametersGivenEmpty(t *testing.T) {
	e := newCampaignEnv(t, time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC))
	e.create(e.campaignBody([]string{"+14155550101"}, nil))
	analysis := "/api/v1/analytics/analysis?field=call_successful&agent_id=" + e.agent
	cases := []struct {
		query  string
		fields []string
	}{
		{"/api/v1/campaigns?status=", []string{"status"}},
		{"/api/v1/campaigns?agent_id=", []string{"agent_id"}},
		{"/api/v1/campaigns?status=bogus&agent_id=bad", []string{"status", "agent_id"}},
		{"/api/v1/campaigns?per_page=0&status=bogus", []string{"per_page", "status"}},
		{"/api/v1/jobs?status=", []string{"status"}},
		{"/api/v1/jobs?kind=", []string{"kind"}},
		{"/api/v1/jobs?agent_id=", []string{"agent_id"}},
		{"/api/v1/jobs?from=", []string{"from"}},
		{"/api/v1/jobs?per_page=0&status=bogus", []string{"per_page", "status"}},
		{analysis + "&agent_version=", []string{"agent_version"}},
		{analysis + "&interval=", []string{"interval"}},
		{analysis + "&from=", []string{"from"}},
		{"/api/v1/agents/" + e.agent + "/test-runs?per_page=", []string{"per_page"}},
		{"/api/v1/suppressions?per_page=", []string{"per_page"}},
	}
	for _, c := range cases {
		t.Run(c.query, func(t *testing.T) {
			testkit.ExpectFields(t, e.Do("GET", c.query, e.Owner.Token, nil), c.fields...)
		})
	}
	// Absent, the filters narrow nothing: the campaign is listed.
	r := e.Do("GET", "/api/v1/campaigns", e.Owner.Token, nil)
	testkit.Expect(t, r, 200)
	if len(r.List()) != 1 {
		t.Fatalf("%d campaigns listed, want 1", len(r.List()))
	}
}
