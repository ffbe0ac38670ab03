package service_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/service"
)

// TestDeletedCampaignRecipientsOutlastTheirJob: the recipients a campaign's delete (204)
// left to its job are deleted in the end even when that job gave up for good (failed,
// here as a run that ends failed, or canceled by an operator): the retention sweep, and a
// runner's start, queue the job again, one live job a campaign however often they run.
// The kept count and the campaign.deleted event are the delete's alone. Before, nothing
// queued the job again and the recipients were kept forever.
func TestDeletedCampaignRecipientsOutlastTheirJob(t *testing.T) {
	engine := testkit.OpenEngine(t)
	svc := servicesOn(t, engine, engine, nil)
	ada := mustUser(t, svc, "ada@example.com")
	ctx := testkit.As(ada)
	first := campaignOfTwo(t, svc, ctx, 1)
	ws := first.WorkspaceID

	c, recipients := deletedBigCampaign(t, svc, ctx, first, 1_000_000, service.CampaignDeleteBatch+10)
	giveUpDeleteJob(t, engine, c, data.JobFailed)
	if n := storedRecipients(t, engine, recipients); n != 10 {
		t.Fatalf("%d recipients stored after the job gave up, want the 10 past the delete's batch", n)
	}
	for range 2 { // twice: the second finds the first's job pending and queues none
		if _, err := svc.Retention.Sweep(context.Background()); err != nil {
			t.Fatal(err)
		}
		if n := liveDeleteJobs(t, engine, c); n != 1 {
			t.Fatalf("%d live delete jobs of the campaign after a sweep, want 1", n)
		}
	}
	runner := svc.Jobs.NewRunner(service.RunnerOptions{Workers: 1, Kinds: []string{service.JobKindDeleteCampaignRecipients}, Jitter: noJitter})
	if n, err := runner.RunDue(context.Background()); err != nil || n != 1 {
		t.Fatalf("ran %d jobs: %v, want the delete's queued again", n, err)
	}
	if n := storedRecipients(t, engine, recipients); n != 0 {
		t.Errorf("%d recipients of the deleted campaign stored after the job queued again ran, want 0", n)
	}
	if _, err := svc.Retention.Sweep(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := liveDeleteJobs(t, engine, c); n != 0 {
		t.Errorf("%d live delete jobs once the recipients are all deleted, want 0", n)
	}

	// A job canceled: a runner's start queues it again.
	d, more := deletedBigCampaign(t, svc, ctx, first, 2_000_000, service.CampaignDeleteBatch+10)
	giveUpDeleteJob(t, engine, d, data.JobCanceled)
	started := svc.Jobs.NewRunner(service.RunnerOptions{Workers: 1, Kinds: []string{service.JobKindDeleteCampaignRecipients},
		Poll: 10 * time.Millisecond, Jitter: noJitter})
	started.Start(context.Background())
	for deadline := time.Now().Add(30 * time.Second); storedRecipients(t, engine, more) != 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d recipients of the campaign whose job was canceled still stored 30 s after a runner started", storedRecipients(t, engine, more))
		}
	}
	if err := started.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}

	if n := storedKept(t, engine, ws); n != 2 {
		t.Errorf("the workspace keeps %d campaign recipients, want the first campaign's 2", n)
	}
	deleted := campaignEvents(t, svc, ctx, data.EventCampaignDeleted)
	if deleted[c.ID] != 1 || deleted[d.ID] != 1 {
		t.Errorf("campaign.deleted events: %v, want one each of %s and %s", deleted, c.ID, d.ID)
	}
}

// deletedBigCampaign creates a campaign of size recipients (numbers from base on) beside
// first, cancels and deletes it, and returns it with its recipients' ids.
func deletedBigCampaign(t *testing.T, svc *service.Services, ctx context.Context, first *data.Campaign, base, size int) (*data.Campaign, []string) {
	t.Helper()
	rows := make([]data.RecipientInput, size)
	for i := range rows {
		rows[i] = data.RecipientInput{PhoneNumber: fmt.Sprintf("+1415%07d", base+i)}
	}
	max := 1
	c, err := svc.Campaigns.CreateCampaign(ctx, data.CampaignCreate{Name: "Big", AgentID: first.AgentID, NumberID: first.NumberID,
		Window: &data.CampaignWindow{Days: data.Weekdays, Start: "00:00", End: "23:59"}, MaxConcurrent: &max, Recipients: rows})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Campaigns.CancelCampaign(ctx, c.ID); err != nil {
		t.Fatal(err)
	}
	recipients := recipientIDsOf(t, svc, ctx, c.ID)
	if err := svc.Campaigns.DeleteCampaign(ctx, c.ID); err != nil {
		t.Fatal(err)
	}
	return c, recipients
}

// giveUpDeleteJob ends the campaign's pending delete job for good, as status (failed: a
// run claims it and ends failed, its attempts spent; canceled: an operator cancels it).
func giveUpDeleteJob(t *testing.T, store service.Store, c *data.Campaign, status string) {
	t.Helper()
	if err := store.Update(context.Background(), func(tx service.Tx) error {
		now := time.Now()
		claimed, _, err := tx.ClaimJobs(data.JobClaim{Kinds: []string{service.JobKindDeleteCampaignRecipients}, Owner: "gives-up",
			Now: now, LeaseUntil: now.Add(time.Minute), Limit: 1})
		if err != nil {
			return err
		}
		if len(claimed) != 1 || claimed[0].WorkspaceID != c.WorkspaceID {
			return fmt.Errorf("claimed %d jobs, want the delete's of %s", len(claimed), c.ID)
		}
		j := claimed[0]
		if status == data.JobCanceled {
			_, err = tx.CancelJob(j.ID, now)
			return err
		}
		ok, err := tx.FinishJob(j.ID, data.JobLease{Owner: "gives-up", Attempt: j.Attempt},
			data.JobOutcome{Status: data.JobFailed, At: now, Error: "gave up"})
		if err == nil && !ok {
			err = fmt.Errorf("job %s not finished", j.ID)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if n := liveDeleteJobs(t, store, c); n != 0 {
		t.Fatalf("%d live delete jobs after the job gave up, want 0", n)
	}
}

// liveDeleteJobs counts the campaign's queued or running campaign.delete_recipients jobs;
// each must be of the campaign's agent, as the delete's job was (its readers are the
// agent's).
func liveDeleteJobs(t *testing.T, store service.Store, c *data.Campaign) int {
	t.Helper()
	n := 0
	if err := store.View(context.Background(), func(tx service.Tx) error {
		req := data.PageRequest{PerPage: data.MaxPerPage}
		for {
			jobs, page, err := tx.Jobs(c.WorkspaceID, req)
			if err != nil {
				return err
			}
			for _, j := range jobs {
				if j.Kind == service.JobKindDeleteCampaignRecipients && !data.JobFinished(j.Status) &&
					string(j.Payload) == fmt.Sprintf(`{"campaign_id":%q}`, c.ID) {
					n++
					if j.AgentID == nil || *j.AgentID != c.AgentID {
						t.Errorf("live delete job %s of agent %v, want the campaign's %s", j.ID, j.AgentID, c.AgentID)
					}
				}
			}
			if page.NextCursor == nil {
				return nil
			}
			req.Cursor = *page.NextCursor
		}
	}); err != nil {
		t.Fatal(err)
	}
	return n
}
