package service_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/service"
)

// pausedEvents returns the campaign.paused events of the caller's workspace, oldest first.
func pausedEvents(t *testing.T, svc *service.Services, ctx context.Context) []*data.Event {
	t.Helper()
	events, _, err := svc.Audit.ListAuditLog(ctx, data.AuditFilter{Type: data.EventCampaignPaused}, data.PageRequest{PerPage: 100})
	if err != nil {
		t.Fatal(err)
	}
	for i, j := 0, len(events)-1; i < j; i, j = i+1, j-1 {
		events[i], events[j] = events[j], events[i]
	}
	return events
}

// checkSelfPaused fails the test unless campaign id is paused for reason, told by one
// campaign.paused (actor system) carrying it, the last of want in all.
func checkSelfPaused(t *testing.T, svc *service.Services, ctx context.Context, id, reason string, want int) {
	t.Helper()
	c, err := svc.Campaigns.Campaign(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if c.Status != data.CampaignPaused || c.PauseReason == nil || *c.PauseReason != reason {
		t.Errorf("the campaign: %s, pause_reason %v; want paused for %s", c.Status, c.PauseReason, reason)
	}
	events := pausedEvents(t, svc, ctx)
	if len(events) != want {
		t.Fatalf("%d campaign.paused events, want %d", len(events), want)
	}
	last := events[len(events)-1]
	var told data.Campaign
	if err := json.Unmarshal(last.Data, &told); err != nil {
		t.Fatal(err)
	}
	if last.Actor.Type != "system" || told.ID != id || told.Status != data.CampaignPaused || told.PauseReason == nil || *told.PauseReason != reason {
		t.Errorf("campaign.paused: actor %+v, data %s %s %v; want the system pausing %s for %s", last.Actor, told.ID, told.Status, told.PauseReason, id, reason)
	}
}

// A campaign whose workspace used up the month's call minutes stayed running with no
// task ever leased and nothing said. The claim that finds it pauses it, saying why
// (pause_reason, campaign.paused by the system), once; resuming is refused while the
// minutes are still used up, and once the limit is raised the user resumes it and it
// dials again. A concurrency limit, which passes, pauses nothing.
func TestCampaignPausesItselfAtTheMonthsMinutes(t *testing.T) {
	engine := testkit.OpenEngine(t)
	clock := &movableClock{t: time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)} // a Monday, in the window
	svc := servicesOn(t, engine, engine, func(o *service.Options) { o.Now = clock.now })
	u := mustUser(t, svc, "ada@example.com")
	ctx, ws := testkit.As(u), u.PersonalWorkspaceID
	limits := func(l map[string]int64) {
		if _, err := svc.Subscriptions.SetSubscription(context.Background(), ws, data.SubscriptionSet{Limits: l}); err != nil {
			t.Fatal(err)
		}
	}
	claim := func() int {
		got, err := svc.Campaigns.ClaimDialTasks(ctx, data.DialClaim{Max: 5})
		if err != nil {
			t.Fatal(err)
		}
		return len(got.Tasks)
	}
	c := campaignOfTwo(t, svc, ctx, 2)

	limits(map[string]int64{data.LimitConcurrentCalls: 0}) // a limit that passes
	if n := claim(); n != 0 {
		t.Fatalf("leased %d at concurrent_calls 0", n)
	}
	if got, _ := svc.Campaigns.Campaign(ctx, c.ID); got.Status != data.CampaignRunning || got.PauseReason != nil || len(pausedEvents(t, svc, ctx)) != 0 {
		t.Fatalf("a concurrency limit paused the campaign: %s %v", got.Status, got.PauseReason)
	}

	limits(map[string]int64{data.LimitConcurrentCalls: -1, data.LimitCallMinutes: 0})
	if n := claim(); n != 0 {
		t.Fatalf("leased %d with the month's minutes used up", n)
	}
	checkSelfPaused(t, svc, ctx, c.ID, data.PauseCallMinutesUsedUp, 1)
	claim()
	checkSelfPaused(t, svc, ctx, c.ID, data.PauseCallMinutesUsedUp, 1) // told once
	if _, err := svc.Campaigns.ResumeCampaign(ctx, c.ID); data.ErrorCode(err) != data.ECONFLICT {
		t.Errorf("resumed with the minutes still used up: %v; want conflict", err)
	}
	checkSelfPaused(t, svc, ctx, c.ID, data.PauseCallMinutesUsedUp, 1)

	limits(map[string]int64{data.LimitCallMinutes: 100})
	got, err := svc.Campaigns.ResumeCampaign(ctx, c.ID)
	if err != nil || got.Status != data.CampaignRunning || got.PauseReason != nil {
		t.Fatalf("resumed once the limit was raised: %+v, %v; want running, no pause_reason", got, err)
	}
	if n := claim(); n != 2 {
		t.Errorf("leased %d after the resume, want both recipients", n)
	}
}

// A campaign whose agent has no published version (a record written so by an older
// version, or an import) pauses itself for agent_not_published at the claim; a
// scheduled campaign that starts (its start job) with the minutes used up pauses itself
// at once, after campaign.started.
func TestCampaignPausesItselfForItsAgentAndAtItsStart(t *testing.T) {
	engine := testkit.OpenEngine(t)
	clock := &movableClock{t: time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)}
	svc := servicesOn(t, engine, engine, func(o *service.Options) { o.Now = clock.now })
	u := mustUser(t, svc, "ada@example.com")
	ctx, ws := testkit.As(u), u.PersonalWorkspaceID
	c := campaignOfTwo(t, svc, ctx, 2)
	if err := engine.Update(context.Background(), func(tx service.Tx) error {
		a, err := tx.Agent(c.AgentID)
		if err != nil {
			return err
		}
		a.PublishedVersion, a.Status = nil, data.AgentStatusDraft
		return tx.PutAgent(a, data.AgentStatusPublished)
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Campaigns.ClaimDialTasks(ctx, data.DialClaim{Max: 5}); err != nil {
		t.Fatal(err)
	}
	checkSelfPaused(t, svc, ctx, c.ID, data.PauseAgentNotPublished, 1)
	if err := svc.Agents.PublishAgent(ctx, c.AgentID, data.PublishRequest{}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Campaigns.ResumeCampaign(ctx, c.ID); err != nil {
		t.Fatalf("resumed once the agent was published: %v", err)
	}

	// A scheduled one, started by its job with the minutes used up.
	start := data.NewTime(clock.now().Add(time.Hour))
	two := 2
	later, err := svc.Campaigns.CreateCampaign(ctx, data.CampaignCreate{Name: "Later", AgentID: c.AgentID, NumberID: c.NumberID,
		Window: &data.CampaignWindow{Days: data.Weekdays, Start: "00:00", End: "23:59"}, MaxConcurrent: &two, StartAt: &start,
		Recipients: []data.RecipientInput{{PhoneNumber: "+14155550102"}}})
	if err != nil || later.Status != data.CampaignScheduled {
		t.Fatalf("the scheduled campaign: %+v, %v", later, err)
	}
	if _, err := svc.Subscriptions.SetSubscription(context.Background(), ws, data.SubscriptionSet{Limits: map[string]int64{data.LimitCallMinutes: 0}}); err != nil {
		t.Fatal(err)
	}
	clock.add(time.Hour)
	r := svc.Jobs.NewRunner(service.RunnerOptions{Owner: "r", Lease: time.Minute, Heartbeat: time.Hour, Now: clock.now, Jitter: noJitter})
	if _, err := r.RunDue(context.Background()); err != nil {
		t.Fatal(err)
	}
	checkSelfPaused(t, svc, ctx, later.ID, data.PauseCallMinutesUsedUp, 2)
	if got, _ := svc.Campaigns.Campaign(ctx, later.ID); got.StartedAt == nil {
		t.Errorf("the campaign paused at its start has no started_at")
	}
}
