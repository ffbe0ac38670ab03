-- How many numbers each workspace's suppression list holds (docs/campaigns.md: the list's
-- bound), moved by every write of the list in its transaction, so that the bound's check
-- reads one row instead of counting the list. Lists written before are counted here.

CREATE TABLE suppression_counts (
	workspace_id text COLLATE "C" PRIMARY KEY,
	n            bigint NOT NULL
);
INSERT INTO suppression_counts (workspace_id, n)
	SELECT workspace_id, count(*) FROM suppressions GROUP BY workspace_id;
