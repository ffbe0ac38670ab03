package service

import (
	"context"
	"time"

	"github.com/voiceapi/voiceapi/data"
)

// A campaign that cannot progress for a lasting reason pauses itself (data.PauseReason*,
// docs/campaigns.md "When a campaign pauses itself"): rather than stay running with no
// call ever leased and nothing said, it is paused with its pause_reason and
// campaign.paused (actor system), and its user resumes it once the reason is fixed.
// Transient conditions (the concurrency limits, a recipient out of its window) pause
// nothing: the next claim leases again.

// campaignBlocked returns why campaign c cannot dial any recipient now, for a lasting
// reason, "" when it can. minutesLeft is whether the workspace's call minutes of the
// month are not used up (callMinutesLeft, read once per claim).
func campaignBlocked(tx Tx, c *data.Campaign, minutesLeft bool) (string, error) {
	a, err := tx.Agent(c.AgentID)
	switch {
	case err != nil:
		return "", err
	case a == nil || a.WorkspaceID != c.WorkspaceID:
		return data.PauseAgentUnavailable, nil
	case a.PublishedVersion == nil:
		return data.PauseAgentNotPublished, nil
	case !minutesLeft:
		return data.PauseCallMinutesUsedUp, nil
	}
	return "", nil
}

// pauseIfBlocked pauses running campaign c in tx when campaignBlocked finds a reason,
// with campaign.paused (actor system) carrying it; it reports whether it paused c.
func (b *base) pauseIfBlocked(ctx context.Context, tx Tx, c *data.Campaign, now time.Time, minutesLeft bool) (bool, error) {
	if c.Status != data.CampaignRunning {
		return false, nil
	}
	reason, err := campaignBlocked(tx, c, minutesLeft)
	if err != nil || reason == "" {
		return false, err
	}
	c.Status, c.PauseReason, c.UpdatedAt = data.CampaignPaused, &reason, data.NewTime(now)
	if err := tx.PutCampaign(c); err != nil {
		return false, err
	}
	_, err = b.record(systemContext(ctx), tx, data.EventCampaignPaused, c.WorkspaceID, c)
	return err == nil, err
}
