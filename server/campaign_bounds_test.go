package server_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/validate"
)

// csvWithVariables is a recipients file of one row whose header names n variable columns.
func csvWithVariables(n int) string {
	header, row := []string{"phone_number"}, []string{"+14155550101"}
	for i := range n {
		header, row = append(header, fmt.Sprint("v", i)), append(row, "x")
	}
	return strings.Join(header, ",") + "\n" + strings.Join(row, ",") + "\n"
}

// TestCampaignCSVVariablesBound: a CSV upload holds the bound of a recipient's variables
// as a JSON body does (validate.MaxRecipientVariables): at it the campaign is created;
// one column past it is a 422 on file, and no campaign is stored.
func TestCampaignCSVVariablesBound(t *testing.T) {
	e := newCampaignEnv(t, time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC))
	r := e.uploadCampaign(e.settingsJSON(), csvWithVariables(validate.MaxRecipientVariables))
	testkit.Expect(t, r, 201)
	if v := e.recipients(r.Data()["id"].(string))["+14155550101"]["variables"].(map[string]any); len(v) != validate.MaxRecipientVariables {
		t.Fatalf("the recipient has %d variables, want %d", len(v), validate.MaxRecipientVariables)
	}
	before := len(e.Do("GET", "/api/v1/campaigns", e.Owner.Token, nil).List())
	testkit.ExpectFields(t, e.uploadCampaign(e.settingsJSON(), csvWithVariables(validate.MaxRecipientVariables+1)), "file")
	if after := len(e.Do("GET", "/api/v1/campaigns", e.Owner.Token, nil).List()); after != before {
		t.Errorf("%d campaigns after a refused upload, want %d", after, before)
	}
}

// TestCampaignClaimHoldsTheAgentsBound: a campaign's calls are the agent's calls, so a
// claim leases no more tasks than the agent's max_concurrent_calls leaves room for,
// whatever the campaign's own max_concurrent, counting a call started through
// /calls/start too: the bound holds on both channels.
func TestCampaignClaimHoldsTheAgentsBound(t *testing.T) {
	e := newCampaignEnv(t, time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC))
	const bound = 3
	testkit.Expect(t, e.Do("PUT", "/api/v1/agents/"+e.agent, e.Owner.Token, map[string]any{"max_concurrent_calls": bound}), 200)
	testkit.Expect(t, e.Do("POST", "/api/v1/calls/start", e.runtime, inbound("+15551230000", nil)), 201)
	e.create(e.campaignBody([]string{"+14155550101", "+14155550102", "+14155550103", "+14155550104"}, map[string]any{"max_concurrent": 10}))
	first := e.claim(10)
	if len(first) != bound-1 {
		t.Fatalf("claimed %d tasks beside one open call, want %d (the agent's bound)", len(first), bound-1)
	}
	if more := e.claim(10); len(more) != 0 {
		t.Fatalf("claimed %d more at the agent's bound", len(more))
	}
	e.end(first[0], "ended", "user_hangup")
	if next := e.claim(10); len(next) != 1 {
		t.Fatalf("after one call ended: %d tasks, want 1", len(next))
	}
}
