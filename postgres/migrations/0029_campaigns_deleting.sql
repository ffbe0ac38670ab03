-- The deleted campaigns whose recipients are not all deleted yet (docs/campaigns.md,
-- "Deleting a campaign"): a campaign's delete lists it, the write that deletes its last
-- recipients takes it off. A check reads it to queue the delete job again when the job
-- queued by the delete gave up, without reading the recipients. Filled here with the
-- campaigns deleted before, whose recipients have no campaign (one pass at migration);
-- the agent is that of an earlier delete job of the campaign (its unique key) while the
-- job is kept, else unknown ('').
CREATE TABLE campaigns_deleting (
	campaign_id  text COLLATE "C" PRIMARY KEY,
	workspace_id text COLLATE "C" NOT NULL,
	agent_id     text COLLATE "C" NOT NULL DEFAULT ''
);
CREATE INDEX campaigns_deleting_workspace ON campaigns_deleting (workspace_id);
INSERT INTO campaigns_deleting (campaign_id, workspace_id, agent_id)
	SELECT o.campaign_id, o.workspace_id, coalesce((SELECT j.agent_id FROM jobs j
		WHERE j.workspace_id = o.workspace_id AND j.kind = 'campaign.delete_recipients'
			AND j.unique_key = o.campaign_id AND j.agent_id IS NOT NULL LIMIT 1), '')
	FROM (SELECT r.campaign_id, min(r.workspace_id) AS workspace_id FROM campaign_recipients r
		WHERE NOT EXISTS (SELECT 1 FROM campaigns c WHERE c.id = r.campaign_id)
		GROUP BY r.campaign_id) o;
