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

// TestCampaignDeleteJobOutlastsKills: the recipients a campaign's delete (204) left to
// its job are deleted however often the job's runs die (a server SIGKILLed, a replica
// lost: the claim committed, then nothing), as many times as other jobs get attempts:
// the client was told the campaign was deleted, and nothing else would ever delete them.
// It gave up after 5 (failed: "no attempt is left"), keeping the recipients' numbers and
// variables for good.
func TestCampaignDeleteJobOutlastsKills(t *testing.T) {
	engine := testkit.OpenEngine(t)
	svc := servicesOn(t, engine, engine, nil)
	ada := mustUser(t, svc, "ada@example.com")
	ctx := testkit.As(ada)
	first := campaignOfTwo(t, svc, ctx, 1)
	_, recipients := deletedBigCampaign(t, svc, ctx, first, 1_000_000, service.CampaignDeleteBatch+10)
	// Runs that die: each claim commits with a lease already over, and nothing more is
	// heard of it, DefaultJobMaxAttempts times.
	for range service.DefaultJobMaxAttempts {
		if err := engine.Update(context.Background(), func(tx service.Tx) error {
			now := time.Now()
			claimed, _, err := tx.ClaimJobs(data.JobClaim{Kinds: []string{service.JobKindDeleteCampaignRecipients}, Owner: "killed",
				Now: now, LeaseUntil: now.Add(-time.Millisecond), Limit: 1})
			if err == nil && len(claimed) != 1 {
				err = fmt.Errorf("claimed %d jobs, want the delete's", len(claimed))
			}
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	runner := svc.Jobs.NewRunner(service.RunnerOptions{Workers: 1, Kinds: []string{service.JobKindDeleteCampaignRecipients}, Jitter: noJitter})
	if n, err := runner.RunDue(context.Background()); err != nil || n != 1 {
		t.Fatalf("ran %d jobs: %v, want the delete's", n, err)
	}
	if n := storedRecipients(t, engine, recipients); n != 0 {
		t.Errorf("%d recipients of the deleted campaign stored after its job's runs died %d times, want 0",
			n, service.DefaultJobMaxAttempts)
	}
}
