package service

import "context"

// requeueCampaignDeletes queues campaign.delete_recipients for each deleted campaign
// whose recipients are not all deleted yet (CampaignTx.DeletingCampaigns), so that they
// are deleted in the end even when the job queued by the delete gave up (failed for
// good, canceled, pruned, or queued by an older binary with fewer attempts): nothing
// else would ever delete their numbers and variables. The job's unique key (the
// campaign id) keeps a pending job as it is, so a campaign never has two live jobs and
// the check may run on every replica, at start and in each retention sweep. It returns
// how many campaigns it found. A page of the list is read and queued in one write.
func (b *base) requeueCampaignDeletes(ctx context.Context) (int, error) {
	found, after := 0, ""
	for {
		var page []DeletingCampaign
		// A read first: the list is empty most of the time, and then no write is made.
		if err := b.store.View(ctx, func(tx Tx) (err error) {
			page, err = tx.DeletingCampaigns(after, 1)
			return err
		}); err != nil || len(page) == 0 {
			return found, err
		}
		err := b.store.Update(ctx, func(tx Tx) (err error) {
			page, err = tx.DeletingCampaigns(after, RetentionBatch)
			if err != nil {
				return err
			}
			for _, c := range page {
				if err := b.enqueueRecipientsDelete(tx, c); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return found, err
		}
		found += len(page)
		if len(page) < RetentionBatch {
			return found, nil
		}
		after = page[len(page)-1].ID
	}
}
