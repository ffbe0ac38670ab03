package service_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/service"
)

// TestCampaignDelete: an open campaign is not deleted (409, unchanged), nor a canceled
// one with a call in progress; once that call ends, the delete takes the campaign and
// its recipients (storage reads none), records campaign.deleted, and the call stays.
// Another workspace's caller, and a second delete, are 404.
func TestCampaignDelete(t *testing.T) {
	engine := testkit.OpenEngine(t)
	svc := servicesOn(t, engine, engine, nil)
	ada, bob := mustUser(t, svc, "ada@example.com"), mustUser(t, svc, "bob@example.com")
	ctx := testkit.As(ada)
	c, task := leaseOneOfTwo(t, svc, ctx)
	recipients := recipientIDsOf(t, svc, ctx, c.ID)
	if err := svc.Campaigns.DeleteCampaign(ctx, c.ID); data.ErrorCode(err) != data.ECONFLICT || !strings.Contains(data.ErrorMessage(err), "cancel it first") {
		t.Fatalf("deleting a running campaign: %v, want %s saying to cancel it first", err, data.ECONFLICT)
	}
	if _, err := svc.Campaigns.CancelCampaign(ctx, c.ID); err != nil {
		t.Fatal(err)
	}
	if err := svc.Campaigns.DeleteCampaign(ctx, c.ID); data.ErrorCode(err) != data.ECONFLICT || !strings.Contains(data.ErrorMessage(err), "in progress") {
		t.Fatalf("deleting a canceled campaign with a call in progress: %v, want %s", err, data.ECONFLICT)
	}
	if got, err := svc.Campaigns.Campaign(ctx, c.ID); err != nil || got.Status != data.CampaignCanceled || len(recipientIDsOf(t, svc, ctx, c.ID)) != 2 {
		t.Fatalf("after the refused deletes: %+v %v, want it canceled with its 2 recipients", got, err)
	}
	if err := svc.Campaigns.DeleteCampaign(testkit.As(bob), c.ID); data.ErrorCode(err) != data.ENOTFOUND {
		t.Errorf("another workspace's delete: %v, want %s", err, data.ENOTFOUND)
	}
	if _, err := svc.Calls.UpdateCall(ctx, task.Call.ID, data.CallUpdate{Status: data.Some(data.CallEnded), DisconnectionReason: data.Some("user_hangup")}); err != nil {
		t.Fatal(err)
	}
	if err := svc.Campaigns.DeleteCampaign(ctx, c.ID); err != nil {
		t.Fatalf("deleting the finished campaign: %v", err)
	}
	if _, err := svc.Campaigns.Campaign(ctx, c.ID); data.ErrorCode(err) != data.ENOTFOUND {
		t.Errorf("the deleted campaign reads %v, want %s", err, data.ENOTFOUND)
	}
	if err := svc.Campaigns.DeleteCampaign(ctx, c.ID); data.ErrorCode(err) != data.ENOTFOUND {
		t.Errorf("a second delete: %v, want %s", err, data.ENOTFOUND)
	}
	if n := storedRecipients(t, engine, recipients); n != 0 {
		t.Errorf("%d of the deleted campaign's recipients stored", n)
	}
	if n := storedKept(t, engine, ada.PersonalWorkspaceID); n != 0 {
		t.Errorf("the workspace keeps %d campaign recipients, want 0", n)
	}
	if _, err := svc.Calls.Call(ctx, task.Call.ID); err != nil {
		t.Errorf("the campaign's call: %v, want it kept", err)
	}
	if n := campaignEvents(t, svc, ctx, data.EventCampaignDeleted)[c.ID]; n != 1 {
		t.Errorf("%d campaign.deleted events for it, want 1", n)
	}
}

// TestCampaignDeleteInBatches: a campaign of more recipients than one write deletes goes
// at once, its first batch with it; the rest wait for the job, which deletes them all.
func TestCampaignDeleteInBatches(t *testing.T) {
	engine := testkit.OpenEngine(t)
	svc := servicesOn(t, engine, engine, nil)
	ada := mustUser(t, svc, "ada@example.com")
	ctx := testkit.As(ada)
	first := campaignOfTwo(t, svc, ctx, 1)
	size := service.CampaignDeleteBatch*2 + 10
	c, recipients := deletedBigCampaign(t, svc, ctx, first, 1_000_000, size)
	if _, err := svc.Campaigns.Campaign(ctx, c.ID); data.ErrorCode(err) != data.ENOTFOUND {
		t.Errorf("the deleted campaign reads %v, want %s at once", err, data.ENOTFOUND)
	}
	if n := storedRecipients(t, engine, recipients); n != size-service.CampaignDeleteBatch {
		t.Errorf("%d recipients stored after the delete, want all but its first batch (%d)", n, size-service.CampaignDeleteBatch)
	}
	if n := storedKept(t, engine, ada.PersonalWorkspaceID); n != 2 {
		t.Errorf("the workspace keeps %d campaign recipients, want the first campaign's 2", n)
	}
	runner := svc.Jobs.NewRunner(service.RunnerOptions{Workers: 1, Kinds: []string{service.JobKindDeleteCampaignRecipients}, Jitter: noJitter})
	if n, err := runner.RunDue(context.Background()); err != nil || n != 1 {
		t.Fatalf("ran %d jobs: %v, want the delete's", n, err)
	}
	if n := storedRecipients(t, engine, recipients); n != 0 {
		t.Errorf("%d recipients stored after the job", n)
	}
	if got := recipientIDsOf(t, svc, ctx, first.ID); len(got) != 2 {
		t.Errorf("the other campaign lists %d recipients, want its 2", len(got))
	}
}

// recipientIDsOf lists every recipient id of a campaign through the service.
func recipientIDsOf(t *testing.T, svc *service.Services, ctx context.Context, campaignID string) []string {
	t.Helper()
	var ids []string
	req := data.PageRequest{PerPage: data.MaxPerPage}
	for {
		list, page, err := svc.Campaigns.Recipients(ctx, campaignID, data.RecipientFilter{}, req)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range list {
			ids = append(ids, r.ID)
		}
		if page.NextCursor == nil {
			return ids
		}
		req.Cursor = *page.NextCursor
	}
}

// storedRecipients counts which of ids storage still holds.
func storedRecipients(t *testing.T, store service.Store, ids []string) int {
	t.Helper()
	n := 0
	if err := store.View(context.Background(), func(tx service.Tx) error {
		for _, id := range ids {
			r, err := tx.Recipient(id)
			if err != nil {
				return err
			}
			if r != nil {
				n++
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return n
}

// storedKept is the workspace's kept count of campaign recipients, as storage keeps it.
func storedKept(t *testing.T, store service.Store, ws string) int64 {
	t.Helper()
	var n int64
	if err := store.View(context.Background(), func(tx service.Tx) (err error) {
		n, err = tx.KeptCampaignRecipients(ws)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return n
}

// campaignEvents counts the audit log's events of typ by campaign id.
func campaignEvents(t *testing.T, svc *service.Services, ctx context.Context, typ string) map[string]int {
	t.Helper()
	out := map[string]int{}
	events, _, err := svc.Audit.ListAuditLog(ctx, data.AuditFilter{Type: typ}, data.PageRequest{PerPage: 100})
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range events {
		var c struct{ ID string }
		if err := json.Unmarshal(ev.Data, &c); err != nil {
			t.Fatal(err)
		}
		out[c.ID]++
	}
	return out
}
