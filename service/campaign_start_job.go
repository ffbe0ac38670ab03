package service

import (
	"context"
	"encoding/json"
	"time"

	"github.com/voiceapi/voiceapi/data"
)

// campaignStartKind is the job that starts a scheduled campaign at its start_at, so that
// campaign.started is told on time whether or not a runtime is claiming (a claim after
// start_at starts it too, whichever comes first).
const campaignStartKind = "campaign.start"

type campaignStartPayload struct {
	CampaignID string `json:"campaign_id"`
}

func (s *CampaignService) startKind() JobKind {
	return JobKind{Name: campaignStartKind, Module: data.ModuleCallHistory, Handle: s.runCampaignStart,
		Backoff: ExponentialBackoff(5*time.Second, time.Minute)}
}

// enqueueCampaignStart queues c's start at its start_at, once per start_at.
func (b *base) enqueueCampaignStart(tx Tx, c *data.Campaign) error {
	payload, err := json.Marshal(campaignStartPayload{c.ID})
	if err != nil {
		return err
	}
	_, err = b.enqueueJob(tx, data.JobEnqueue{WorkspaceID: c.WorkspaceID, AgentID: c.AgentID, Kind: campaignStartKind,
		Payload: payload, RunAt: c.StartAt.Time, UniqueKey: c.ID + "/" + c.StartAt.Format(time.RFC3339Nano)})
	return err
}

// runCampaignStart starts the campaign if it is still scheduled and due: a paused,
// canceled or already started campaign is left as it is (a run after a crash finds it
// started and does nothing).
func (s *CampaignService) runCampaignStart(ctx context.Context, run *JobRun) error {
	var p campaignStartPayload
	if err := json.Unmarshal(run.Job.Payload, &p); err != nil {
		return err
	}
	return s.store.Update(ctx, func(tx Tx) error {
		c, err := tx.Campaign(p.CampaignID)
		if err != nil || c == nil || c.Status != data.CampaignScheduled {
			return err
		}
		now := s.now()
		if now.Before(c.StartAt.Time) {
			return nil // resumed with a later start: that start has its own job
		}
		if err := s.startCampaign(ctx, tx, c, now); err != nil {
			return err
		}
		// One that cannot dial says so at once, as a claim would find it.
		minutesLeft, _, err := callMinutesLeft(tx, c.WorkspaceID, now)
		if err != nil {
			return err
		}
		_, err = s.pauseIfBlocked(ctx, tx, c, now, minutesLeft)
		return err
	})
}
