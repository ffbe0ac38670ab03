-- GET /api/v1/campaigns lists one agent's campaigns, or those of each agent a caller is
-- limited to, through this index (as conversations_by_agent does for conversations), so
-- that a page reads its own rows, not the workspace's passed over one by one.
CREATE INDEX campaigns_by_agent ON campaigns (workspace_id, agent_id, id);
