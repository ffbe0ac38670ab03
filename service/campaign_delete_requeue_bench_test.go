package service_test

import (
	"context"
	"testing"
)

// BenchmarkDeletedCampaignsCheck100k times a retention sweep, which starts with the check
// that queues the delete job of deleted campaigns with recipients left, in a workspace
// with retention off (so the check is most of it) holding a campaign of 100,000
// recipients: "none listed" before any delete; "one listed" once a second campaign of
// 100,000 is deleted, its 99,000 recipients past the request's batch left to its job
// (pending, so each check finds it and queues none). Setup is untimed.
func BenchmarkDeletedCampaignsCheck100k(b *testing.B) {
	cb := newCampaignBench(b)
	cb.create(b, 100_000, 2_000_000)
	sweep := func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := cb.svc.Retention.Sweep(context.Background()); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("none listed", sweep)
	c := cb.create(b, 100_000, 3_000_000)
	if _, err := cb.svc.Campaigns.CancelCampaign(cb.ctx, c.ID); err != nil {
		b.Fatal(err)
	}
	if err := cb.svc.Campaigns.DeleteCampaign(cb.ctx, c.ID); err != nil {
		b.Fatal(err)
	}
	b.Run("one listed", sweep)
}
