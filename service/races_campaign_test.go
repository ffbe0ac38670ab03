package service_test

import (
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
)

// A campaign dials from its number (number_id). Deleting that number frees its phone
// number for registration anywhere, yet the campaign went on dialing from it, unregistered
// or, once another workspace registered it, as that workspace's caller id. The number's
// delete cancels the open campaigns that dial from it (campaign.canceled), as an agent's
// delete cancels its campaigns; a claim then leases nothing.
func TestNumberDeleteCancelsItsCampaigns(t *testing.T) {
	engine := testkit.OpenEngine(t)
	svc := servicesOn(t, engine, engine, nil)
	a, b := mustUser(t, svc, "ada@example.com"), mustUser(t, svc, "bob@example.com")
	ctx := testkit.As(a)
	agent, err := svc.Agents.CreateAgent(ctx, data.AgentCreate{Name: data.Some("Dialer")})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Agents.PublishAgent(ctx, agent.ID, data.PublishRequest{}); err != nil {
		t.Fatal(err)
	}
	n, err := svc.Numbers.CreateNumber(ctx, data.NumberCreate{PhoneNumber: "+14155550123", Provider: "sip"})
	if err != nil {
		t.Fatal(err)
	}
	mc := 2
	c, err := svc.Campaigns.CreateCampaign(ctx, data.CampaignCreate{Name: "Spring", AgentID: agent.ID, NumberID: n.ID,
		Window:        &data.CampaignWindow{Days: data.Weekdays, Start: "00:00", End: "23:59"},
		MaxConcurrent: &mc, Recipients: []data.RecipientInput{{PhoneNumber: "+14155550100"}, {PhoneNumber: "+14155550101"}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Numbers.DeleteNumber(ctx, n.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Numbers.CreateNumber(testkit.As(b), data.NumberCreate{PhoneNumber: "+14155550123", Provider: "sip"}); err != nil {
		t.Fatal(err)
	}
	got, err := svc.Campaigns.Campaign(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != data.CampaignCanceled || got.Counts.Canceled != 2 || got.Counts.Pending != 0 {
		t.Errorf("the campaign after its number's delete: %s, counts %+v; want canceled, 2 canceled", got.Status, got.Counts)
	}
	claimed, err := svc.Campaigns.ClaimDialTasks(ctx, data.DialClaim{Max: 5})
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range claimed.Tasks {
		t.Errorf("a task leased after the campaign's number was deleted: from %s to %s", task.FromNumber, task.ToNumber)
	}
	events, _, err := svc.Audit.ListAuditLog(ctx, data.AuditFilter{Type: data.EventCampaignCanceled}, data.PageRequest{})
	if err != nil || len(events) != 1 {
		t.Errorf("campaign.canceled events: %d, %v; want 1", len(events), err)
	}
}
