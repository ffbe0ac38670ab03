package service

import (
	"context"
	"time"

	"github.com/voiceapi/voiceapi/data"
)

// sweptAny tells whether a sweep deleted anything in its workspace (then it records
// retention.swept).
func sweptAny(c data.RetentionSwept) bool {
	return c.CallsDeleted+c.KnowledgeFilesDeleted+c.CampaignsDeleted > 0
}

// sweepCampaigns deletes the workspace's finished campaigns (data.CampaignFinished)
// that finished more than its retention_days ago, with their recipients (the numbers and
// variables a campaign keeps, as its calls do). The finished ones are listed a page at a
// time, and each expired one is deleted in a write of its own, where it is checked again
// against the settings of that moment: its recipients past the delete's first batch go
// in their own job (deleteCampaign), so one write never holds a whole campaign.
func (s *RetentionService) sweepCampaigns(ctx context.Context, wsID string, counts *data.RetentionSwept) error {
	for _, status := range []string{data.CampaignCompleted, data.CampaignCanceled} {
		req := data.PageRequest{PerPage: RetentionBatch}
		for {
			var expired []string
			var next *string
			err := s.store.View(ctx, func(tx Tx) error {
				cutoff, err := campaignCutoff(tx, wsID, s.now())
				if err != nil || cutoff.IsZero() {
					return err
				}
				list, page, err := tx.Campaigns(wsID, data.CampaignFilter{Status: status}, nil, req)
				for _, c := range list {
					if campaignExpired(c, cutoff) {
						expired = append(expired, c.ID)
					}
				}
				next = page.NextCursor
				return err
			})
			if err != nil {
				return err
			}
			for _, id := range expired {
				if err := s.deleteExpiredCampaign(ctx, wsID, id, counts); err != nil {
					return err
				}
			}
			if next == nil {
				break
			}
			req.Cursor = *next
		}
	}
	return ctx.Err()
}

// campaignCutoff is when a campaign of the workspace must have finished before to have
// expired now: zero when its retention_days is null (kept) or it is gone.
func campaignCutoff(tx Tx, wsID string, now time.Time) (time.Time, error) {
	w, err := tx.Workspace(wsID)
	if err != nil || w == nil || w.Privacy.RetentionDays == nil {
		return time.Time{}, err
	}
	return now.Add(-time.Duration(*w.Privacy.RetentionDays) * day), nil
}

// campaignExpired tells whether c finished before cutoff.
func campaignExpired(c *data.Campaign, cutoff time.Time) bool {
	return data.CampaignFinished(c) && c.FinishedAt != nil && c.FinishedAt.Before(cutoff)
}

// deleteExpiredCampaign deletes campaign id if it is still of the workspace and expired.
func (s *RetentionService) deleteExpiredCampaign(ctx context.Context, wsID, id string, counts *data.RetentionSwept) error {
	deleted := false
	err := s.store.Update(ctx, func(tx Tx) error {
		deleted = false // fn may run again
		cutoff, err := campaignCutoff(tx, wsID, s.now())
		if err != nil || cutoff.IsZero() {
			return err
		}
		c, err := tx.Campaign(id)
		if err != nil || c == nil || c.WorkspaceID != wsID || !campaignExpired(c, cutoff) {
			return err
		}
		deleted = true
		return s.deleteCampaign(systemContext(ctx), tx, c)
	})
	if err == nil && deleted {
		counts.CampaignsDeleted++
	}
	return err
}
