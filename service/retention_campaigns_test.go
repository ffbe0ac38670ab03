package service_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/service"
)

// TestRetentionDeletesFinishedCampaigns: the sweep deletes a finished campaign, with its
// recipients, retention_days after it finished (not at that instant), and keeps one that
// finished later, an open one however old, a canceled one with a call still in progress,
// and another workspace's, whose retention is null; retention.swept counts it.
func TestRetentionDeletesFinishedCampaigns(t *testing.T) {
	now := time.Now().UTC().Truncate(time.Millisecond)
	engine := testkit.OpenEngine(t)
	svc := servicesOn(t, engine, engine, func(o *service.Options) { o.Now = func() time.Time { return now } })
	ada, bob := mustUser(t, svc, "ada@example.com"), mustUser(t, svc, "bob@example.com")
	ctx, ws := testkit.As(ada), ada.PersonalWorkspaceID
	if _, err := svc.Workspaces.UpdateWorkspace(ctx, ws, data.WorkspaceUpdate{Privacy: data.Some(data.WorkspacePrivacyPatch{RetentionDays: data.Some(days(30))})}); err != nil {
		t.Fatal(err)
	}
	draining, _ := leaseOneOfTwo(t, svc, ctx) // max_concurrent 1: one recipient in progress
	cancel := func(c *data.Campaign) {
		t.Helper()
		if _, err := svc.Campaigns.CancelCampaign(ctx, c.ID); err != nil {
			t.Fatal(err)
		}
	}
	old := sameCampaign(t, svc, ctx, draining)
	cancel(old)
	cancel(draining)
	open := sameCampaign(t, svc, ctx, draining)
	bctx := testkit.As(bob)
	agent, err := svc.Agents.CreateAgent(bctx, data.AgentCreate{Name: data.Some("Dialer")})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Agents.PublishAgent(bctx, agent.ID, data.PublishRequest{}); err != nil {
		t.Fatal(err)
	}
	number, err := svc.Numbers.CreateNumber(bctx, data.NumberCreate{PhoneNumber: "+14155550199", Provider: "sip"})
	if err != nil {
		t.Fatal(err)
	}
	elsewhere := sameCampaign(t, svc, bctx, &data.Campaign{AgentID: agent.ID, NumberID: number.ID})
	if _, err := svc.Campaigns.CancelCampaign(bctx, elsewhere.ID); err != nil {
		t.Fatal(err)
	}
	oldRecipients := recipientIDsOf(t, svc, ctx, old.ID)
	now = now.Add(20 * 24 * time.Hour)
	newer := sameCampaign(t, svc, ctx, draining)
	cancel(newer)
	now = now.Add(10 * 24 * time.Hour) // exactly 30 days after old finished: not yet
	if got, err := svc.Retention.Sweep(context.Background()); err != nil || got[ws].CampaignsDeleted != 0 {
		t.Fatalf("the sweep at 30 days: %+v %v, want nothing deleted", got, err)
	}
	now = now.Add(time.Millisecond)
	got, err := svc.Retention.Sweep(context.Background())
	if err != nil || got[ws].CampaignsDeleted != 1 || len(got) != 1 {
		t.Fatalf("the sweep past 30 days: %+v %v, want 1 campaign of the one workspace", got, err)
	}
	if _, err := svc.Campaigns.Campaign(ctx, old.ID); data.ErrorCode(err) != data.ENOTFOUND {
		t.Errorf("the expired campaign: %v, want %s", err, data.ENOTFOUND)
	}
	if n := storedRecipients(t, engine, oldRecipients); n != 0 {
		t.Errorf("%d of its recipients stored", n)
	}
	for name, c := range map[string]*data.Campaign{"finished later": newer, "open": open, "draining": draining} {
		if _, err := svc.Campaigns.Campaign(ctx, c.ID); err != nil {
			t.Errorf("the campaign %s: %v, want it kept", name, err)
		}
	}
	if _, err := svc.Campaigns.Campaign(bctx, elsewhere.ID); err != nil {
		t.Errorf("a campaign of a workspace without retention: %v, want it kept", err)
	}
	if n := campaignEvents(t, svc, ctx, data.EventCampaignDeleted)[old.ID]; n != 1 {
		t.Errorf("%d campaign.deleted events for the expired one, want 1", n)
	}
	swept, _, err := svc.Audit.ListAuditLog(ctx, data.AuditFilter{Type: data.EventRetentionSwept}, data.PageRequest{PerPage: 10})
	if err != nil || len(swept) != 1 || !strings.Contains(string(swept[0].Data), `"campaigns_deleted":1`) {
		t.Errorf("retention.swept: %d events %v, want one with campaigns_deleted 1", len(swept), err)
	}
}

// sameCampaign creates a campaign of two recipients like c (its agent and number).
func sameCampaign(t *testing.T, svc *service.Services, ctx context.Context, c *data.Campaign) *data.Campaign {
	t.Helper()
	max := 1
	out, err := svc.Campaigns.CreateCampaign(ctx, data.CampaignCreate{Name: "Again", AgentID: c.AgentID, NumberID: c.NumberID,
		Window:        &data.CampaignWindow{Days: data.Weekdays, Start: "00:00", End: "23:59"},
		MaxConcurrent: &max, Recipients: []data.RecipientInput{{PhoneNumber: "+14155550100"}, {PhoneNumber: "+14155550101"}}})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
