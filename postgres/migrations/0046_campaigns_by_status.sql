-- A page of campaigns of a final status (completed, canceled) reads that status's
-- campaigns through these indexes and ends its scan where they end, rather than walk
-- campaigns_by_workspace (every agent's) or campaigns_by_agent (an agent's, a limited
-- caller's agents') past every campaign of the other statuses (campaignPageList).
CREATE INDEX campaigns_by_status ON campaigns (workspace_id, status, id);
CREATE INDEX campaigns_by_agent_status ON campaigns (workspace_id, agent_id, status, id);
