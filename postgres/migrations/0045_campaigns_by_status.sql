-- A page of a workspace's campaigns of a final status (completed, canceled) reads that
-- status's campaigns through this index and ends its scan where they end, rather than
-- walk campaigns_by_workspace past every campaign of the other statuses
-- (campaignPageList).
CREATE INDEX campaigns_by_status ON campaigns (workspace_id, status, id);
