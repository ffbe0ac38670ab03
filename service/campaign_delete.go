package service

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/validate"
)

// CampaignDeleteBatch bounds the recipients one transaction deletes: a campaign's
// delete takes its first batch with it and leaves the rest to a job, batch by batch, so
// that a writer waiting for the database waits for one batch, never for a campaign of
// 100,000 (docs/performance.md, "Deleting a campaign").
const CampaignDeleteBatch = 1_000

// JobKindDeleteCampaignRecipients is the job that deletes a deleted campaign's
// recipients past its delete's first batch. The campaign is gone already (no listing, no
// bound counts it); its recipients stay under its id until the job reaches them.
const JobKindDeleteCampaignRecipients = "campaign.delete_recipients"

type campaignRecipientsDeletePayload struct {
	CampaignID string `json:"campaign_id"`
}

// campaignDeleteAttempts bounds the runs of a campaign.delete_recipients job. The client
// was told the campaign is deleted, and nothing but this job deletes the recipients left
// (their numbers and variables), so it must not give up where other jobs do: a run
// killed (SIGKILL, a lost replica) or failing for a while (the database unreachable) is
// tried again, a minute apart at most, for about a week. Each run goes on from what is
// left, so runs again cost nothing. A failure that retrying cannot heal (the runner's
// failureOf judges) fails the job at once, job.failed naming it, rather than a week
// later: the next retention sweep queues the job again (requeueCampaignDeletes), so the
// recipients still go once the fault is fixed.
const campaignDeleteAttempts = 10_000

func (s *CampaignService) recipientsDeleteKind() JobKind {
	return JobKind{Name: JobKindDeleteCampaignRecipients, Module: data.ModuleCallHistory, Handle: s.runRecipientsDelete,
		MaxAttempts: campaignDeleteAttempts, Backoff: ExponentialBackoff(5*time.Second, time.Minute),
		AtStart: func(ctx context.Context) error { _, err := s.requeueCampaignDeletes(ctx); return err }}
}

// DeleteCampaign implements data.CampaignService: a finished campaign (completed, or
// canceled with no call in progress) goes with its recipients; the calls it made stay,
// call history under their own retention.
func (s *CampaignService) DeleteCampaign(ctx context.Context, id string) error {
	p, err := workspaceCaller(ctx)
	if err != nil {
		return err
	}
	return s.store.Update(ctx, func(tx Tx) error {
		c, err := campaign(tx, p, id)
		if err != nil {
			return err
		}
		if err := data.CheckIfMatch(data.IfMatch(ctx), c); err != nil {
			return err
		}
		if !data.CampaignFinished(c) {
			if data.CampaignFinal(c.Status) {
				return data.Errorf(data.ECONFLICT, "The campaign still has %s in progress: it can be deleted once they end.", countOf(c.Counts.InProgress, "call"))
			}
			return data.Errorf(data.ECONFLICT, "A %s campaign cannot be deleted: cancel it first.", c.Status)
		}
		return s.deleteCampaign(ctx, tx, c)
	})
}

// deleteCampaign deletes finished campaign c in tx (campaign.deleted), with its first
// CampaignDeleteBatch recipients, and queues the job that deletes the rest.
func (b *base) deleteCampaign(ctx context.Context, tx Tx, c *data.Campaign) error {
	if err := tx.DeleteCampaign(c); err != nil {
		return err
	}
	n, err := tx.DeleteCampaignRecipients(c.ID, CampaignDeleteBatch)
	if err != nil {
		return err
	}
	if n == CampaignDeleteBatch {
		if err := b.enqueueRecipientsDelete(tx, DeletingCampaign{ID: c.ID, WorkspaceID: c.WorkspaceID, AgentID: c.AgentID}); err != nil {
			return err
		}
	}
	_, err = b.record(ctx, tx, data.EventCampaignDeleted, c.WorkspaceID, c)
	return err
}

// enqueueRecipientsDelete queues deleted campaign c's campaign.delete_recipients job, of
// its agent: the one place the delete and the check that queues it again
// (requeueCampaignDeletes) build it. Its unique key, the campaign id, keeps a campaign
// to one pending job.
func (b *base) enqueueRecipientsDelete(tx Tx, c DeletingCampaign) error {
	payload, err := json.Marshal(campaignRecipientsDeletePayload{c.ID})
	if err != nil {
		return err
	}
	_, err = b.enqueueJob(tx, data.JobEnqueue{WorkspaceID: c.WorkspaceID, AgentID: c.AgentID,
		Kind: JobKindDeleteCampaignRecipients, Payload: payload, UniqueKey: c.ID})
	return err
}

// runRecipientsDelete deletes the job's campaign's recipients, CampaignDeleteBatch a
// transaction, until none is left; a run again after a crash goes on from what is left.
func (s *CampaignService) runRecipientsDelete(ctx context.Context, run *JobRun) error {
	var p campaignRecipientsDeletePayload
	if err := json.Unmarshal(run.Job.Payload, &p); err != nil {
		return err
	}
	err := inBatches(ctx, s.store, CampaignDeleteBatch, func(tx Tx) (int, error) {
		return tx.DeleteCampaignRecipients(p.CampaignID, CampaignDeleteBatch)
	})
	if err != nil {
		// Returned as it is, wrapped: the runner judges whether a run again heals it
		// (failureOf). Either way the job's end is not the recipients': a job that
		// ends with some left is queued again (requeueCampaignDeletes).
		return fmt.Errorf("deleting the recipients of deleted campaign %s (should the job fail, the next runner start or retention sweep queues it again): %w", p.CampaignID, err)
	}
	return nil
}

// checkKeptRecipients refuses a new campaign of weight more (data.Campaign.KeptWeight)
// when the workspace's campaigns would keep more than validate.MaxKeptCampaignRecipients
// recipients (409): with retention off, finished campaigns stay until deleted, and this
// bounds what they hold. Read in the transaction that inserts, so creates racing for the
// last room store one.
func checkKeptRecipients(tx Tx, ws string, more int64) error {
	kept, err := tx.KeptCampaignRecipients(ws)
	if err != nil {
		return err
	}
	if kept+more > validate.MaxKeptCampaignRecipients {
		return data.Errorf(data.ECONFLICT, "The workspace's campaigns keep %d recipients and this one would add %d: at most %d are kept across its campaigns. Delete finished campaigns (DELETE /api/v1/campaigns/{id}), or set privacy.retention_days so that they expire.",
			kept, more, validate.MaxKeptCampaignRecipients)
	}
	return nil
}
