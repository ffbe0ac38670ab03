-- Each workspace's count of the recipients its campaigns keep, each campaign counting at
-- least one (data.Campaign.KeptWeight), for the bound on kept recipients
-- (docs/campaigns.md, "Deleting a campaign"): a create reads and moves it under the
-- workspace's lock instead of summing every campaign. Filled here from the campaigns.
CREATE TABLE campaign_kept_counts (
	workspace_id text COLLATE "C" PRIMARY KEY,
	n            bigint NOT NULL
);
INSERT INTO campaign_kept_counts (workspace_id, n)
	SELECT workspace_id, sum(greatest((body #>> '{counts,total}')::bigint, 1)) FROM campaigns GROUP BY workspace_id;
