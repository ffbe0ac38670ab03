package service_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/service"
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
	c := campaignOfTwo(t, svc, ctx, 2)
	if err := svc.Numbers.DeleteNumber(ctx, c.NumberID); err != nil {
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

// A campaign canceled while a task is leased, whose call the runtime then never reports
// (or reports started and never ended): claims returned expired leases only of campaigns
// not final, so the recipient stayed in progress in the canceled campaign's counts and
// its call open (counted against concurrency limits) for good. A canceled campaign now
// stays among the open campaigns while recipients are in progress: the claim after the
// lease runs out ends the call as for any expired lease, settles the recipient without a
// retry, leases nothing from it, and the campaign leaves the open campaigns.
func TestCanceledCampaignReturnsItsExpiredLeases(t *testing.T) {
	for _, tc := range []struct {
		name     string
		started  bool          // the runtime reports the call ongoing before the cancel
		wait     time.Duration // past the lease: the claim's, or the started call's deadline
		reason   string        // the call's end
		state    string        // the recipient's, then
		outcome  string        // its attempt's
		canceled int64         // the campaign's canceled count, then
		failed   int64         // its completed count of outcome failed
	}{
		{name: "never reported", wait: 2 * time.Minute, reason: data.DisconnectionDialLeaseExpired,
			state: data.RecipientCanceled, outcome: data.OutcomeLeaseExpired, canceled: 2},
		{name: "started, never ended", started: true, wait: 2 * time.Hour, reason: data.DisconnectionAbandoned,
			state: data.RecipientCompleted, outcome: data.OutcomeFailed, canceled: 1, failed: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			engine := testkit.OpenEngine(t)
			clock := &movableClock{t: time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)}
			svc := servicesOn(t, engine, engine, func(o *service.Options) { o.Now = clock.now })
			u := mustUser(t, svc, "ada@example.com")
			ctx := testkit.As(u)
			c, task := leaseOneOfTwo(t, svc, ctx)
			if tc.started {
				if _, err := svc.Calls.UpdateCall(ctx, task.Call.ID, data.CallUpdate{Status: data.Some(data.CallOngoing)}); err != nil {
					t.Fatal(err)
				}
			}
			canceled, err := svc.Campaigns.CancelCampaign(ctx, c.ID)
			if err != nil {
				t.Fatal(err)
			}
			if canceled.Counts.InProgress != 1 || canceled.Counts.Canceled != 1 {
				t.Fatalf("counts after the cancel: %+v, want 1 in progress, 1 canceled", canceled.Counts)
			}
			checkOpen(t, engine, u.PersonalWorkspaceID, []string{c.ID}, "canceled with a lease out")
			clock.add(tc.wait)
			claimed, err := svc.Campaigns.ClaimDialTasks(ctx, data.DialClaim{Max: 5})
			if err != nil {
				t.Fatal(err)
			}
			for _, leased := range claimed.Tasks {
				t.Errorf("a canceled campaign's recipient leased: %s", leased.ToNumber)
			}
			call, err := svc.Calls.Call(ctx, task.Call.ID)
			if err != nil {
				t.Fatal(err)
			}
			if call.Status != data.CallFailed || call.DisconnectionReason == nil || *call.DisconnectionReason != tc.reason {
				t.Errorf("the leased call: %s %v, want failed %s", call.Status, call.DisconnectionReason, tc.reason)
			}
			r := recipientOf(t, svc, ctx, c.ID, task.RecipientID)
			if last := r.Attempts[len(r.Attempts)-1]; r.State != tc.state || last.Outcome == nil || *last.Outcome != tc.outcome {
				t.Errorf("the recipient: %s, last attempt %+v; want %s, outcome %s", r.State, last, tc.state, tc.outcome)
			}
			got, err := svc.Campaigns.Campaign(ctx, c.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != data.CampaignCanceled || got.Counts.InProgress != 0 || got.Counts.Pending != 0 ||
				got.Counts.Canceled != tc.canceled || got.Counts.Completed[data.OutcomeFailed] != tc.failed {
				t.Errorf("the campaign after the claim: %s, counts %+v", got.Status, got.Counts)
			}
			checkOpen(t, engine, u.PersonalWorkspaceID, nil, "canceled with its lease returned")
		})
	}
}

// A campaign canceled with a lease out is among the open campaigns until the lease is
// settled, and a number's delete cancels the open campaigns that dial from it: that delete
// must leave a campaign canceled already as it was (no second campaign.canceled, its end
// unchanged); its lease is settled all the same when it runs out.
func TestNumberDeleteLeavesACanceledCampaignAsItWas(t *testing.T) {
	engine := testkit.OpenEngine(t)
	clock := &movableClock{t: time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)}
	svc := servicesOn(t, engine, engine, func(o *service.Options) { o.Now = clock.now })
	u := mustUser(t, svc, "ada@example.com")
	ctx := testkit.As(u)
	c, _ := leaseOneOfTwo(t, svc, ctx)
	canceled, err := svc.Campaigns.CancelCampaign(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	clock.add(time.Second)
	if err := svc.Numbers.DeleteNumber(ctx, c.NumberID); err != nil {
		t.Fatal(err)
	}
	got, err := svc.Campaigns.Campaign(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !got.FinishedAt.Equal(canceled.FinishedAt.Time) || got.Counts.Canceled != 1 || got.Counts.InProgress != 1 {
		t.Errorf("the canceled campaign after its number's delete: finished %v (was %v), counts %+v", got.FinishedAt, canceled.FinishedAt, got.Counts)
	}
	events, _, err := svc.Audit.ListAuditLog(ctx, data.AuditFilter{Type: data.EventCampaignCanceled}, data.PageRequest{})
	if err != nil || len(events) != 1 {
		t.Errorf("campaign.canceled events: %d, %v; want 1", len(events), err)
	}
	clock.add(2 * time.Minute)
	if _, err := svc.Campaigns.ClaimDialTasks(ctx, data.DialClaim{Max: 5}); err != nil {
		t.Fatal(err)
	}
	if got, err = svc.Campaigns.Campaign(ctx, c.ID); err != nil || got.Counts.InProgress != 0 || got.Counts.Canceled != 2 {
		t.Errorf("after the lease ran out: %+v, %v; want 2 canceled, none in progress", got.Counts, err)
	}
	checkOpen(t, engine, u.PersonalWorkspaceID, nil, "its lease settled")
}

// campaignOfTwo makes a published agent, the number +14155550123 and a running campaign
// from it to two recipients, dialing at most maxConcurrent at once, all day every weekday.
func campaignOfTwo(t *testing.T, svc *service.Services, ctx context.Context, maxConcurrent int) *data.Campaign {
	t.Helper()
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
	c, err := svc.Campaigns.CreateCampaign(ctx, data.CampaignCreate{Name: "Spring", AgentID: agent.ID, NumberID: n.ID,
		Window:        &data.CampaignWindow{Days: data.Weekdays, Start: "00:00", End: "23:59"},
		MaxConcurrent: &maxConcurrent, Recipients: []data.RecipientInput{{PhoneNumber: "+14155550100"}, {PhoneNumber: "+14155550101"}}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// leaseOneOfTwo makes a running campaign of two recipients and leases one of them
// (for a minute), returning the campaign and the task.
func leaseOneOfTwo(t *testing.T, svc *service.Services, ctx context.Context) (*data.Campaign, *data.DialTask) {
	t.Helper()
	c := campaignOfTwo(t, svc, ctx, 1)
	lease := 60
	claimed, err := svc.Campaigns.ClaimDialTasks(ctx, data.DialClaim{Max: 5, LeaseSeconds: &lease})
	if err != nil {
		t.Fatal(err)
	}
	if len(claimed.Tasks) != 1 {
		t.Fatalf("%d tasks leased, want 1 (max_concurrent 1)", len(claimed.Tasks))
	}
	return c, claimed.Tasks[0]
}

// recipientOf reads one recipient of the campaign through the service.
func recipientOf(t *testing.T, svc *service.Services, ctx context.Context, campaignID, id string) *data.Recipient {
	t.Helper()
	list, _, err := svc.Campaigns.Recipients(ctx, campaignID, data.RecipientFilter{}, data.PageRequest{PerPage: 100})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range list {
		if r.ID == id {
			return r
		}
	}
	t.Fatalf("recipient %s not listed", id)
	return nil
}

// checkOpen fails the test unless the workspace's open campaigns, as storage keeps them
// for claims, are want.
func checkOpen(t *testing.T, store service.Store, ws string, want []string, when string) {
	t.Helper()
	err := store.View(context.Background(), func(tx service.Tx) error {
		open, err := tx.OpenCampaigns(ws)
		var ids []string
		for _, c := range open {
			ids = append(ids, c.ID)
		}
		if !slices.Equal(ids, want) {
			t.Errorf("%s: open campaigns %v, want %v", when, ids, want)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}
